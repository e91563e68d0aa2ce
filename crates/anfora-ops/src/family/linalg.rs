//! Matrix products: `@` (numpy's matmul with 1-D and batch operands), the kernel of its
//! gradient, and `Gemm`, the product with transposed operands and an accumulator that the
//! optimizer forms.

use std::io::Write;

use anfora_tensor::{Tensor, promote_types};

use crate::abs::{Abs, Rule, err};
use crate::args::{broadcast, need_tensor, reduce_to, reshaped, shape_str, swap_last, tensor_abs};
use crate::def::{Backward, Kernels, PrimDef, Py, primitives, unless_known_floats};
use crate::emit::{Call, Emit, Grads, int};
use crate::prim::Prim;
use crate::pynum::{tensor as t, type_error};
use crate::python::truth;
use crate::value::{OpResult, Value};

primitives! {
    family linalg = 10;

    MatMul = PrimDef::new("MatMul", "(x, y)", |_, a| matmul_abs(&a[0], &a[1]), mat_mul,
        Backward::Rule(matmul_back))
        .tensor_kernel().called(&[Py::Op("matmul")]).raising(unless_known_floats);
    /// `MatMulGrad(a, b, d)`: `(da, db)` for `a @ b` with numpy's 1-D and batch rules.
    MatMulGrad = PrimDef::new("MatMulGrad", "(a, b, d)", mat_mul_grad_abs,
        |_, a, _| matmul_grad(&a[0], &a[1], &a[2]), Backward::Rule(matmul_grad_back))
        .tensor_kernel().raising(unless_known_floats);
    /// `Gemm(a, b, c, transpose_a, transpose_b)`: `op(a) @ op(b) + c` for float matrices of one
    /// dtype, `op` transposing when its flag is set and `c` (`None` or broadcast to the result)
    /// accumulated into. Only the optimizer emits it, after differentiation. The accumulator
    /// is written in place when it is free and result-shaped.
    Gemm = PrimDef::new("Gemm", "(a, b, c, transpose_a, transpose_b)", gemm_abs,
        |_, a, _| gemm(&a[0], &a[1], a[2].clone(), &a[3], &a[4]),
        Backward::Refused("emitted by the optimizer, which runs after differentiation"))
        .with_kernels(Kernels::Owned(gemm_owned)).raising(unless_known_floats);
}

/// `a @ b`: both sensitivities from one `MatMulGrad`.
fn matmul_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let both = e.op(Prim::MatMulGrad, &[c.x[0], c.x[1], c.d]);
    Some(c.each(e, 0..2, |e, i| {
        let k = int(e, i as i64);
        e.op(Prim::TupleGetItem, &[both, k])
    }))
}

fn gemm_owned(_: Prim, a: &mut [Value], _: &mut dyn Write) -> OpResult {
    match a {
        [x, y, c, ta, tb] => gemm(x, y, std::mem::replace(c, Value::None), ta, tb),
        _ => Err(type_error("Gemm takes five arguments")),
    }
}

fn mat_mul(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    match (&a[0], &a[1]) {
        (Value::Tensor(x), Value::Tensor(y)) => t(Tensor::matmul(x, y)).map(Value::Tensor),
        (x, y) => Err(type_error(format!(
            "unsupported operand type(s) for @: '{}' and '{}'",
            x.type_name(),
            y.type_name()
        ))),
    }
}

fn mat_mul_grad_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match (&a[0], &a[1], &a[2]) {
        (_, _, Abs::None) => Abs::tuple(vec![Abs::None, Abs::None]),
        (Abs::Tensor(x), Abs::Tensor(y), _) => Abs::tuple(vec![
            tensor_abs(x.dtype, x.shape.clone()),
            tensor_abs(y.dtype, y.shape.clone()),
        ]),
        _ => Abs::Any,
    })
}

fn gemm_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match (&a[0], &a[1], a[3].as_bool(), a[4].as_bool()) {
        (Abs::Tensor(x), Abs::Tensor(y), Some(ta), Some(tb))
            if x.shape.len() == 2 && y.shape.len() == 2 =>
        {
            tensor_abs(
                x.dtype,
                vec![x.shape[usize::from(ta)], y.shape[usize::from(!tb)]],
            )
        }
        _ => Abs::Any,
    })
}

/// `(da, db) = (d b^T, a^T d)` for `a @ b`: bilinear in `(a, b)` and `d`.
fn matmul_grad_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let (x, d) = (c.x, c.d);
    let k0 = int(e, 0);
    let k1 = int(e, 1);
    let dda = e.op(Prim::GradItem, &[d, k0]);
    let dda = e.op(Prim::FillZeros, &[dda, x[0]]);
    let ddb = e.op(Prim::GradItem, &[d, k1]);
    let ddb = e.op(Prim::FillZeros, &[ddb, x[1]]);
    let mut g = c.none();
    if c.need(0) {
        let t = e.op(Prim::MatMulGrad, &[x[0], ddb, x[2]]);
        g[0] = Some(e.op(Prim::TupleGetItem, &[t, k0]));
    }
    if c.need(1) {
        let t = e.op(Prim::MatMulGrad, &[dda, x[1], x[2]]);
        g[1] = Some(e.op(Prim::TupleGetItem, &[t, k1]));
    }
    if c.need(2) {
        let l = e.op(Prim::MatMul, &[dda, x[1]]);
        let r = e.op(Prim::MatMul, &[x[0], ddb]);
        g[2] = Some(e.op(Prim::Add, &[l, r]));
    }
    Some(g)
}

/// `MatMulGrad(a, b, d)`: `(d @ b^T, a^T @ d)` with 1-D operands promoted as numpy does and
/// broadcast batch dimensions summed back.
fn matmul_grad(a: &Value, b: &Value, d: &Value) -> OpResult {
    let (a, b) = (
        need_tensor(a, "matmul")?.clone(),
        need_tensor(b, "matmul")?.clone(),
    );
    if matches!(d, Value::None) {
        return Ok(Value::tuple(vec![Value::None, Value::None]));
    }
    let d = need_tensor(d, "matmul")?.clone();
    let a2_shape: Vec<usize> = if a.ndim() == 1 {
        vec![1, a.shape()[0]]
    } else {
        a.shape().to_vec()
    };
    let b2_shape: Vec<usize> = if b.ndim() == 1 {
        vec![b.shape()[0], 1]
    } else {
        b.shape().to_vec()
    };
    let a2 = reshaped(&a, &a2_shape)?;
    let b2 = reshaped(&b, &b2_shape)?;
    // The output shape with the promoted dimensions kept.
    let mut d2_shape: Vec<usize> = d.shape().to_vec();
    if a.ndim() == 1 {
        let at = d2_shape.len() - usize::from(b.ndim() != 1);
        d2_shape.insert(at, 1);
    }
    if b.ndim() == 1 {
        d2_shape.push(1);
    }
    let d2 = reshaped(&d, &d2_shape)?;
    let da = t(Tensor::matmul(&d2, &swap_last(&b2)?))?;
    let db = t(Tensor::matmul(&swap_last(&a2)?, &d2))?;
    let da = reshaped(&reduce_to(&da, &a2_shape, a.dtype())?, a.shape())?;
    let db = reshaped(&reduce_to(&db, &b2_shape, b.dtype())?, b.shape())?;
    Ok(Value::tuple(vec![Value::Tensor(da), Value::Tensor(db)]))
}

/// `Gemm(a, b, c, transpose_a, transpose_b)`. `c` is taken by value: a unique accumulator of
/// the result's shape is written in place.
fn gemm(a: &Value, b: &Value, c: Value, ta: &Value, tb: &Value) -> OpResult {
    let c = match c {
        Value::None => None,
        c => Some(
            c.into_tensor()
                .map_err(|_| type_error("Gemm: the accumulator must be a tensor or None"))?,
        ),
    };
    let (a, b) = (need_tensor(a, "Gemm")?, need_tensor(b, "Gemm")?);
    t(Tensor::gemm(a, b, c, truth(ta)?, truth(tb)?)).map(Value::Tensor)
}

/// `ReLU(Gemm(a, b, c, transpose_a, transpose_b))` in one kernel ([`Tensor::gemm_relu`]):
/// the executor's fusion of a ReLU whose only operand is a product. `None`, with the
/// arguments untouched, when they are not a product of tensors: the caller then runs the two
/// as written, which reports the error.
pub fn gemm_relu(args: &mut [Value]) -> Option<OpResult> {
    let [
        Value::Tensor(a),
        Value::Tensor(b),
        c @ (Value::None | Value::Tensor(_)),
        Value::Bool(ta),
        Value::Bool(tb),
    ] = args
    else {
        return None;
    };
    let c = std::mem::replace(c, Value::None).into_tensor().ok();
    Some(t(Tensor::gemm_relu(a, b, c, *ta, *tb)).map(Value::Tensor))
}

/// Two independent `Gemm`s, each given as its five arguments, run side by side where that pays
/// ([`Tensor::gemm_pair`]). `None`, with the arguments untouched, when one is not a product of
/// tensors: the caller then runs them one by one, which reports the error.
pub fn gemm_pair(first: &mut [Value], second: &mut [Value]) -> Option<(OpResult, OpResult)> {
    fn call(args: &mut [Value]) -> Option<anfora_tensor::GemmCall<'_>> {
        let [
            Value::Tensor(a),
            Value::Tensor(b),
            c,
            Value::Bool(ta),
            Value::Bool(tb),
        ] = args
        else {
            return None;
        };
        let c = match c {
            Value::None => None,
            Value::Tensor(_) => std::mem::replace(c, Value::None).into_tensor().ok(),
            _ => return None,
        };
        Some(anfora_tensor::GemmCall {
            a,
            b,
            c,
            transpose_a: *ta,
            transpose_b: *tb,
        })
    }
    // Both are checked before either accumulator is moved out.
    let valid = |args: &[Value]| {
        matches!(
            args,
            [
                Value::Tensor(_),
                Value::Tensor(_),
                Value::None | Value::Tensor(_),
                Value::Bool(_),
                Value::Bool(_)
            ]
        )
    };
    if !valid(first) || !valid(second) {
        return None;
    }
    let (x, y) = Tensor::gemm_pair(call(first)?, call(second)?);
    Some((t(x).map(Value::Tensor), t(y).map(Value::Tensor)))
}

// ---- abstract values ----------------------------------------------------------------------

fn matmul_abs(a: &Abs, b: &Abs) -> Rule {
    let (Abs::Tensor(x), Abs::Tensor(y)) = (a, b) else {
        return Ok(if matches!(a, Abs::Any) || matches!(b, Abs::Any) {
            Abs::Any
        } else {
            Abs::Bottom
        });
    };
    if x.shape.is_empty() || y.shape.is_empty() {
        return Err(err(
            "matmul: Input operand does not have enough dimensions (a scalar is not allowed)",
        ));
    }
    let dtype = promote_types(x.dtype, y.dtype);
    let (xs, ys) = (&x.shape, &y.shape);
    let k1 = xs[xs.len() - 1];
    let k2 = if ys.len() == 1 {
        ys[0]
    } else {
        ys[ys.len() - 2]
    };
    if let (Some(p), Some(q)) = (k1, k2)
        && p != q
    {
        return Err(err(format!(
            "matmul: shapes {} and {} do not align ({p} != {q})",
            shape_str(xs),
            shape_str(ys)
        )));
    }
    let batch_x = &xs[..xs.len().saturating_sub(2)];
    let batch_y = &ys[..ys.len().saturating_sub(2)];
    let mut shape = broadcast(batch_x, batch_y)?;
    if xs.len() >= 2 {
        shape.push(xs[xs.len() - 2]);
    }
    if ys.len() >= 2 {
        shape.push(ys[ys.len() - 1]);
    }
    Ok(tensor_abs(dtype, shape))
}

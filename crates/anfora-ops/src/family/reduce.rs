//! Reductions over axes: `sum`, `mean`, `max`, `min`, `prod`, `argmax`, `argmin`, `var`, and
//! the kernels of their gradients, `ReduceGrad` and `VarGrad`.

use anfora_tensor::{BinaryOp, DType, ReduceOp, Tensor, reduce_result_dtype};

use crate::abs::{Abs, Rule, err};
use crate::args::distinct_axes;
use crate::args::tensor_operand;
use crate::args::{
    axes_arg_abs, int_arg, int_list, need_tensor, normalize_axis, reduced_axes, reshaped,
    sens_tensor, tensor_abs,
};
use crate::constant::Const;
use crate::def::{Backward, EvalFn, PrimDef, Py, first, primitives, unless_known_floats};
use crate::emit::{Call, Emit, Grads, reduce_back};
use crate::prim::Prim;
use crate::pynum::{PyErr, tensor, tensor as t, type_error};
use crate::python::{binary, truth};
use crate::value::{OpResult, Value};

primitives! {
    family reduce = 5;

    ReduceSum = reduction("ReduceSum", &[Py::Op("sum")],
        Backward::Rule(|e, c| reduce_back(e, c, "sum")))
        .raising(unless_known_floats);
    ReduceMean = reduction("ReduceMean", &[Py::Op("mean")],
        Backward::Rule(|e, c| reduce_back(e, c, "mean")))
        .raising(unless_known_floats);
    ReduceMax = reduction("ReduceMax", &[Py::Op("max")],
        Backward::Rule(|e, c| reduce_back(e, c, "max")));
    ReduceMin = reduction("ReduceMin", &[Py::Op("min")],
        Backward::Rule(|e, c| reduce_back(e, c, "min")));
    ReduceProd = reduction("ReduceProd", &[Py::Op("prod")],
        Backward::Rule(|e, c| reduce_back(e, c, "prod")));
    /// `ops.argmax(x, axis=None, keepdims=False)`: numpy's, int64.
    ArgMax = arg_reduction("ArgMax", &[Py::Op("argmax")]);
    /// `ops.argmin(x, axis=None, keepdims=False)`: numpy's, int64.
    ArgMin = arg_reduction("ArgMin", &[Py::Op("argmin")]);
    /// `ops.var(x, axis=None, ddof=0, keepdims=False)`: numpy's variance, the sum of the squared
    /// deviations from the mean over `N - ddof` (0 when negative); ints and bools give float64.
    Var = PrimDef::new("ReduceVar", "(x, axis=None, ddof=0, keepdims=False)", var_abs,
        |_, a, _| var(a), first(|e, c| e.op(Prim::VarGrad, &[c.d, c.x[0], c.x[1], c.x[2], c.x[3]])))
        .tensor_kernel().called(&[Py::Op("var")]);
    /// `VarGrad(d, x, axis, ddof, keepdims)`: the sensitivity of `x` for `var`,
    /// `2 (x - mean(x)) d / (N - ddof)` with `d` spread over the reduced axes.
    VarGrad = PrimDef::new("VarGrad", "(d, x, axis, ddof, keepdims)", var_grad_abs,
        |_, a, _| var_grad(a), Backward::Rule(var_grad_back))
        .tensor_kernel().raising(unless_known_floats);
    /// `ReduceGrad(kind, d, x, out, axis, keepdims)`: the sensitivity of `x` for a reduction.
    /// With `cast_ints` (MindSpore's rule) an integer `x` gets the sensitivity computed in
    /// float64 and cast to its dtype, not a zero.
    ReduceGrad = PrimDef::new("ReduceGrad", "(kind, d, x, out, axis, keepdims, cast_ints=False)",
        reduce_grad_abs, |_, a, _| reduce_grad_of(a),
        Backward::Rule(reduce_grad_back))
        .tensor_kernel().raising(unless_known_floats);
}

fn reduce_grad_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match (&a[1], &a[2]) {
        (Abs::None, _) => Abs::None,
        // Integers and bools get no gradient: a zero of their dtype, as SumToShape gives.
        (_, Abs::Tensor(x)) => tensor_abs(x.dtype, x.shape.clone()),
        _ => Abs::Any,
    })
}

/// A reduction over `axis` (all of them for `None`), numpy's.
const fn reduction(name: &'static str, python: &'static [Py], backward: Backward) -> PrimDef {
    let eval: EvalFn = |p, a, _| reduce(p, a);
    PrimDef::new(
        name,
        "(x, axis=None, keepdims=False)",
        reduce_abs,
        eval,
        backward,
    )
    .tensor_kernel()
    .called(python)
}

/// The index of the largest (smallest) element along `axis`: no gradient.
const fn arg_reduction(name: &'static str, python: &'static [Py]) -> PrimDef {
    PrimDef {
        infer: arg_reduce,
        eval: |p, a, _| arg_extremum(p, a),
        ..reduction(name, python, Backward::Zero)
    }
}

fn kind_is(e: &dyn Emit, n: crate::ids::NodeId, kind: &str) -> bool {
    matches!(e.constant(n), Some(Const::Str(k)) if &*k == kind)
}

/// Second order: the backward kernels are linear in their sensitivity.
fn reduce_grad_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let (x, d) = (c.x, c.d);
    let mut g = c.none();
    if kind_is(e, x[0], "prod_pairs") {
        // The product's second-derivative kernel (below) is linear in its x-shaped v with a
        // symmetric matrix, so it is its own adjoint in v. A third derivative of a product has
        // no rule (E0502).
        if c.need(2) || c.need(3) {
            return None;
        }
        if c.need(1) {
            g[1] = Some(e.op(Prim::ReduceGrad, &[x[0], d, x[2], x[3], x[4], x[5]]));
        }
        return Some(g);
    }
    // ReduceGrad(k, d, x, out, axis, keepdims) = broadcast(d) * share: its adjoint in d sums
    // dd * share back over the axes (x and out only choose the share).
    if c.need(1) {
        let ones = e.op(Prim::SensOnes, &[x[3]]);
        let share = e.op(Prim::ReduceGrad, &[x[0], ones, x[2], x[3], x[4], x[5]]);
        let t = e.op(Prim::Mul, &[d, share]);
        g[1] = Some(e.op(Prim::ReduceSum, &[t, x[4], x[5]]));
    }
    // A logsumexp's share exp(x - out): d(share)/dx = share, d(share)/d(out) = -share.
    if kind_is(e, x[0], "logsumexp") {
        let dr = e.op(Prim::Mul, &[d, c.out]);
        if c.need(2) {
            g[2] = Some(dr);
        }
        if c.need(3) {
            let s = e.op(Prim::ReduceSum, &[dr, x[4], x[5]]);
            g[3] = Some(e.op(Prim::Neg, &[s]));
        }
    }
    // A product's share (the product of the other elements) is computed from x alone: its
    // adjoint in x is the "prod_pairs" kernel applied to dd * broadcast(d), exact at zeros
    // too.
    if kind_is(e, x[0], "prod") && c.need(2) {
        let sum = e.konst(Const::str("sum"));
        let spread = e.op(Prim::ReduceGrad, &[sum, x[1], x[2], x[3], x[4], x[5]]);
        let v = e.op(Prim::Mul, &[d, spread]);
        let pairs = e.konst(Const::str("prod_pairs"));
        g[2] = Some(e.op(Prim::ReduceGrad, &[pairs, v, x[2], x[3], x[4], x[5]]));
    }
    Some(g)
}

/// `var`: the shape and dtype of a mean; `ddof` a number.
fn var_abs(_: Prim, a: &[Abs]) -> Rule {
    match &a[2] {
        Abs::Int(_) | Abs::Bool(_) | Abs::Float(_) | Abs::Any => {}
        other => return Err(err(format!("var() ddof must be a number, got {other}"))),
    }
    reduce_abs(
        Prim::ReduceMean,
        &[a[0].clone(), a[1].clone(), a[3].clone()],
    )
}

fn var(a: &[Value]) -> OpResult {
    let x = need_tensor(&a[0], "ops.var")?;
    let x = if x.dtype().is_float() {
        x.clone()
    } else {
        x.cast(DType::F64)
    };
    let axes = axes_value(&a[1])?;
    let dev = deviations(&x, axes.as_deref())?;
    let squares = t(Tensor::binary(BinaryOp::Mul, &dev, &dev))?;
    let sum = t(Tensor::reduce(
        ReduceOp::Sum,
        &squares,
        axes.as_deref(),
        truth(&a[3])?,
    ))?;
    let divisor = var_divisor(&x, &a[1], &a[2])?;
    binary(Prim::Div, &Value::Tensor(sum), &Value::Float(divisor))
}

/// `x - mean(x)` over `axes`.
fn deviations(x: &Tensor, axes: Option<&[i64]>) -> Result<Tensor, PyErr> {
    let mean = t(Tensor::reduce(ReduceOp::Mean, x, axes, true))?;
    t(Tensor::binary(BinaryOp::Sub, x, &mean))
}

/// `max(N - ddof, 0)`, N the number of elements each result reduces (`axis` checked).
fn var_divisor(x: &Tensor, axis: &Value, ddof: &Value) -> Result<f64, PyErr> {
    let ddof = match ddof {
        Value::Int(i) => *i as f64,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Float(f) => *f,
        other => {
            let msg = format!(
                "ops.var() ddof must be a number, not '{}'",
                other.type_name()
            );
            return Err(type_error(msg));
        }
    };
    let n: usize = (reduced_axes(axis, x.ndim())?.iter())
        .map(|&i| x.shape()[i])
        .product();
    Ok((n as f64 - ddof).max(0.0))
}

/// `VarGrad(d, x, axis, ddof, keepdims)`; `None` for a missing sensitivity or a non-float `x`.
fn var_grad(a: &[Value]) -> OpResult {
    let (d, x, axis, ddof, keepdims) = (&a[0], &a[1], &a[2], &a[3], &a[4]);
    let sum = Value::str("sum");
    let spread = reduce_grad(&sum, d, x, d, axis, keepdims)?;
    let Value::Tensor(spread) = &spread else {
        return Ok(spread);
    };
    let x = need_tensor(x, "VarGrad")?;
    let dev = deviations(x, axes_value(axis)?.as_deref())?;
    let t2 = t(Tensor::binary(BinaryOp::Mul, &dev, spread))?;
    let scale = 2.0 / var_divisor(x, axis, ddof)?;
    binary(Prim::Mul, &Value::Tensor(t2), &Value::Float(scale))
}

fn var_grad_abs(_: Prim, a: &[Abs]) -> Rule {
    reduce_grad_abs(Prim::ReduceGrad, &[Abs::None, a[0].clone(), a[1].clone()])
}

/// Second order. `VarGrad` is linear in `d`: its adjoint sums `dd` times the share
/// `2 (x - mean) / c` back over the axes. In `x` it is `2 (x - mean(x)) D / c` with `D` the
/// spread `d`, whose adjoint applied to `v` is `2 (w - mean(w)) / c` with `w = D v`: itself,
/// with a sensitivity of ones, at `w`.
fn var_grad_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let [d, x, axis, ddof, keep] = [c.x[0], c.x[1], c.x[2], c.x[3], c.x[4]];
    let mut g = c.none();
    let ones = e.op(Prim::SensOnes, &[d]);
    if c.need(0) {
        let share = e.op(Prim::VarGrad, &[ones, x, axis, ddof, keep]);
        let t = e.op(Prim::Mul, &[c.d, share]);
        g[0] = Some(e.op(Prim::ReduceSum, &[t, axis, keep]));
    }
    if c.need(1) {
        let sum = e.konst(Const::str("sum"));
        // The reduction's result, for its shape, is `d` (a sum's spread reads nothing else).
        let spread = e.op(Prim::ReduceGrad, &[sum, d, x, d, axis, keep]);
        let w = e.op(Prim::Mul, &[spread, c.d]);
        g[1] = Some(e.op(Prim::VarGrad, &[ones, w, axis, ddof, keep]));
    }
    Some(g)
}

/// An `axis` argument: all axes (`None`), or a list of them.
fn axes_value(axis: &Value) -> Result<Option<Vec<i64>>, PyErr> {
    Ok(match axis {
        Value::None => None,
        v => Some(int_list(v)?),
    })
}

fn arg_extremum(p: Prim, args: &[Value]) -> OpResult {
    let x = need_tensor(&args[0], &p.python_name())?;
    let axis = match &args[1] {
        Value::None => None,
        v => Some(int_arg(v)?),
    };
    let keep = truth(&args[2])?;
    let r = if p == Prim::ArgMax {
        Tensor::argmax(x, axis, keep)
    } else {
        Tensor::argmin(x, axis, keep)
    };
    t(r).map(Value::Tensor)
}

/// `ReduceGrad(kind, d, x, out, axis, keepdims, cast_ints)`.
fn reduce_grad_of(a: &[Value]) -> OpResult {
    use super::grad::{as_float64, cast_back, cast_ints, integer_dtype};
    if cast_ints(a.get(6))
        && let Some(dtype) = integer_dtype(&a[2])
    {
        let (x, out) = (as_float64(&a[2]), as_float64(&a[3]));
        let g = reduce_grad(&a[0], &a[1], &x, &out, &a[4], &a[5])?;
        return Ok(cast_back(g, dtype));
    }
    reduce_grad(&a[0], &a[1], &a[2], &a[3], &a[4], &a[5])
}

fn reduce_grad(
    kind: &Value,
    d: &Value,
    x: &Value,
    out: &Value,
    axis: &Value,
    keepdims: &Value,
) -> OpResult {
    if matches!(d, Value::None) {
        return Ok(Value::None);
    }
    let xt = need_tensor_owned(x, "reduce")?;
    if !xt.dtype().is_float() {
        // No gradient: a zero of the input's dtype, so the rules it feeds still apply.
        return Ok(Value::Tensor(tensor(Tensor::zeros(
            xt.shape(),
            xt.dtype(),
        ))?));
    }
    let dt = sens_tensor(d, &[], xt.dtype())?.ok_or_else(|| type_error("reduce gradient"))?;
    let axes = reduced_axes(axis, xt.ndim())?;
    let kept: Vec<usize> = xt
        .shape()
        .iter()
        .enumerate()
        .map(|(i, &n)| if axes.contains(&i) { 1 } else { n })
        .collect();
    let keep = truth(keepdims)?;
    let kind = match kind {
        Value::Str(s) => s.to_string(),
        _ => String::new(),
    };
    // "prod_pairs" takes a sensitivity shaped like x (see below); the others one shaped like
    // the reduction's result.
    let spread = if kind == "prod_pairs" {
        Prim::BroadcastLike.eval(&[Value::Tensor(dt), x.clone()])?
    } else {
        let dk = if keep { dt } else { reshaped(&dt, &kept)? };
        Prim::BroadcastLike.eval(&[Value::Tensor(dk), x.clone()])?
    };
    // A comparison as 0/1 in x's dtype, and a reduction over the axes that keeps them.
    let ax: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
    let as_float = |m: OpResult| -> OpResult {
        Ok(Value::Tensor(
            need_tensor_owned(&m?, "reduce")?.cast(xt.dtype()),
        ))
    };
    let reduce_kept = |op: ReduceOp, v: &Value| -> OpResult {
        let vt = need_tensor_owned(v, "reduce")?;
        Ok(Value::Tensor(t(Tensor::reduce(op, &vt, Some(&ax), true))?))
    };
    let r = match kind.as_str() {
        "sum" => spread,
        "prod" => {
            // d out / d x_i is the product of the other elements: out / x_i without zeros;
            // with one zero in a group, that zero gets the product of the rest; with more, 0.
            let zero = Value::Float(0.0);
            let zeros = as_float(Prim::Eq.eval(&[x.clone(), zero.clone()]))?;
            let count = reduce_kept(ReduceOp::Sum, &zeros)?;
            // x with its zeros replaced by ones, and the product of that.
            let safe = binary(Prim::Add, x, &zeros)?;
            let safe_prod = reduce_kept(ReduceOp::Prod, &safe)?;
            let no_zero = Prim::Eq.eval(&[count.clone(), zero.clone()])?;
            let one_zero = Prim::Eq.eval(&[count.clone(), Value::Float(1.0)])?;
            let quotient = binary(Prim::Div, &safe_prod, &safe)?;
            let at_zero = binary(Prim::Mul, &safe_prod, &zeros)?;
            let at_zero = Prim::Where.eval(&[one_zero, at_zero, zero.clone()])?;
            let partial = Prim::Where.eval(&[no_zero, quotient, at_zero])?;
            binary(Prim::Mul, &partial, &spread)?
        }
        "prod_pairs" => {
            // The second derivative of a product: g_j = sum over i != j of v_i * P(-i,-j), the
            // product of the group without elements i and j (v is x-shaped). With the zeros
            // of a group counted (Z) and S the product of its other elements:
            //   Z = 0: g = S/x * (sum(v/x) - v/x);
            //   Z = 1: at the zero, S * sum(v/x over the others); elsewhere v_zero * S/x;
            //   Z = 2: at each zero, the other zero's v times S; elsewhere 0;
            //   Z > 2: 0.
            let v = &spread;
            let zero = Value::Float(0.0);
            let one = Value::Float(1.0);
            let zeros = as_float(Prim::Eq.eval(&[x.clone(), zero.clone()]))?;
            let nonzero = binary(Prim::Sub, &one, &zeros)?;
            let count = reduce_kept(ReduceOp::Sum, &zeros)?;
            let safe = binary(Prim::Add, x, &zeros)?;
            let s_prod = reduce_kept(ReduceOp::Prod, &safe)?;
            let s_over_x = binary(Prim::Div, &s_prod, &safe)?;
            let v_over_x = binary(Prim::Div, v, &safe)?;
            let v_over_x_others = binary(Prim::Mul, &v_over_x, &nonzero)?;
            let sum_others = reduce_kept(ReduceOp::Sum, &v_over_x_others)?;
            let v_at_zeros = reduce_kept(ReduceOp::Sum, &binary(Prim::Mul, v, &zeros)?)?;
            // Z = 0 (safe is x there).
            let diff = binary(Prim::Sub, &sum_others, &v_over_x)?;
            let g0 = binary(Prim::Mul, &s_over_x, &diff)?;
            // Z = 1.
            let at_zero = binary(Prim::Mul, &s_prod, &sum_others)?;
            let elsewhere = binary(Prim::Mul, &v_at_zeros, &s_over_x)?;
            let g1 = Prim::Where.eval(&[zeros.clone(), at_zero, elsewhere])?;
            // Z = 2.
            let other_zero = binary(Prim::Sub, &v_at_zeros, v)?;
            let at_zeros = binary(Prim::Mul, &other_zero, &s_prod)?;
            let g2 = Prim::Where.eval(&[zeros.clone(), at_zeros, zero.clone()])?;
            let is = |k: f64| Prim::Eq.eval(&[count.clone(), Value::Float(k)]);
            let g = Prim::Where.eval(&[is(2.0)?, g2, zero.clone()])?;
            let g = Prim::Where.eval(&[is(1.0)?, g1, g])?;
            Prim::Where.eval(&[is(0.0)?, g0, g])?
        }
        "mean" => {
            let count: usize = axes.iter().map(|&a| xt.shape()[a]).product();
            binary(Prim::Div, &spread, &Value::Float(count.max(1) as f64))?
        }
        "logsumexp" => {
            // d out / d x = exp(x - out): the softmax over the reduced axes.
            let ot = need_tensor_owned(out, "reduce")?;
            let ok = if keep { ot } else { reshaped(&ot, &kept)? };
            let diff = binary(Prim::Sub, x, &Value::Tensor(ok))?;
            let share = Prim::Exp.eval(&[diff])?;
            binary(Prim::Mul, &share, &spread)?
        }
        "max" | "min" => {
            // Ties share the sensitivity equally.
            let ot = need_tensor_owned(out, "reduce")?;
            let ok = if keep { ot } else { reshaped(&ot, &kept)? };
            let mask = as_float(Prim::Eq.eval(&[x.clone(), Value::Tensor(ok)]))?;
            let count = reduce_kept(ReduceOp::Sum, &mask)?;
            let share = binary(Prim::Div, &mask, &count)?;
            binary(Prim::Mul, &share, &spread)?
        }
        other => {
            return Err(type_error(format!(
                "ReduceGrad: unknown reduction '{other}'"
            )));
        }
    };
    match &r {
        Value::Tensor(rt) if rt.dtype() != xt.dtype() => Ok(Value::Tensor(rt.cast(xt.dtype()))),
        _ => Ok(r),
    }
}

/// The reduction a `Reduce*` primitive computes.
/// The reduction a primitive computes, if it is one of `ReduceSum`, ..., `ReduceProd`.
pub fn reduce_op_of(p: Prim) -> Option<ReduceOp> {
    Some(match p {
        Prim::ReduceSum => ReduceOp::Sum,
        Prim::ReduceMean => ReduceOp::Mean,
        Prim::ReduceMax => ReduceOp::Max,
        Prim::ReduceMin => ReduceOp::Min,
        Prim::ReduceProd => ReduceOp::Prod,
        _ => return None,
    })
}

fn reduce_op(p: Prim) -> ReduceOp {
    reduce_op_of(p).unwrap_or(ReduceOp::Prod)
}

/// The operands of a reduction call `p(x, axis, keepdims)` as every device's kernel reads
/// them: the tensor, the axes (`None`: all) and `keepdims`, with the CPU's errors.
pub fn reduce_operands(p: Prim, args: &[Value]) -> Result<(Tensor, Option<Vec<i64>>, bool), PyErr> {
    let t = need_tensor(&args[0], &p.python_name())?;
    Ok((t.clone(), axes_value(&args[1])?, truth(&args[2])?))
}

fn reduce(p: Prim, args: &[Value]) -> OpResult {
    let op = reduce_op(p);
    let (t, axes, keep) = reduce_operands(p, args)?;
    tensor(Tensor::reduce(op, &t, axes.as_deref(), keep)).map(Value::Tensor)
}

// ---- abstract values ----------------------------------------------------------------------

fn reduce_abs(p: Prim, args: &[Abs]) -> Rule {
    let t = match &args[0] {
        Abs::Tensor(t) => t.clone(),
        Abs::Any => return Ok(Abs::Any),
        // `ops.sum(3)`: TypeError at run time.
        _ => return Ok(Abs::Bottom),
    };
    let op = reduce_op(p);
    let dtype = reduce_result_dtype(op, t.dtype);
    let (Some(axes), Some(keep)) = (
        axes_arg_abs(&args[1]),
        args[2].as_bool().or(match &args[2] {
            Abs::Int(Some(i)) => Some(*i != 0),
            _ => None,
        }),
    ) else {
        return Ok(Abs::Any);
    };
    let ndim = t.shape.len();
    let axes: Vec<usize> = match axes {
        None => (0..ndim).collect(),
        Some(list) => distinct_axes(list, ndim, "duplicate value in 'axis'")?,
    };
    if matches!(op, ReduceOp::Max | ReduceOp::Min) {
        for &a in &axes {
            if t.shape.get(a) == Some(&Some(0)) {
                let name = if op == ReduceOp::Max {
                    "maximum"
                } else {
                    "minimum"
                };
                return Err(err(format!(
                    "zero-size array to reduction operation {name} which has no identity"
                )));
            }
        }
    }
    let shape = t
        .shape
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| {
            if axes.contains(&i) {
                keep.then_some(Some(1))
            } else {
                Some(d)
            }
        })
        .collect();
    Ok(tensor_abs(dtype, shape))
}

fn arg_reduce(p: Prim, args: &[Abs]) -> Rule {
    let x = tensor_operand!(&args[0]);
    let name = if p == Prim::ArgMax {
        "argmax"
    } else {
        "argmin"
    };
    let (Some(axis), Some(keep)) = (axes_arg_abs(&args[1]), args[2].as_bool()) else {
        return Ok(Abs::Any);
    };
    let empty = || err(format!("attempt to get {name} of an empty sequence"));
    let shape = match axis.as_deref() {
        None => {
            if x.numel() == Some(0) {
                return Err(empty());
            }
            if keep {
                vec![Some(1); x.shape.len()]
            } else {
                vec![]
            }
        }
        Some(&[a]) => {
            let ax = normalize_axis(a, x.shape.len())?;
            if x.shape[ax] == Some(0) {
                return Err(empty());
            }
            let mut s = x.shape.clone();
            if keep {
                s[ax] = Some(1);
            } else {
                s.remove(ax);
            }
            s
        }
        // A tuple of axes: a TypeError at run time.
        Some(_) => return Ok(Abs::Bottom),
    };
    Ok(tensor_abs(DType::I64, shape))
}

fn need_tensor_owned(v: &Value, func: &str) -> Result<Tensor, PyErr> {
    need_tensor(v, func).cloned()
}

//! The primitives the grad stage emits in backward graphs. `None` is the zero sensitivity
//! (nothing flows back); values that cannot carry a gradient (ints, bools, strings, functions)
//! get `None`.

use crate::Prim;
use anfora_tensor::{DType, ReduceOp, Scalar, Tensor};

use crate::ops::{OpResult, binary, getitem, int_arg, need_tensor, tensor as t, type_error};
use crate::value::Value;

fn tensor_of(v: &Value, func: &str) -> Result<Tensor, crate::pynum::PyErr> {
    need_tensor(v, func).cloned()
}

fn items(v: &Value) -> Option<&[Value]> {
    match v {
        Value::Tuple(xs) | Value::List(xs) => Some(xs),
        _ => None,
    }
}

fn like(container: &Value, items: Vec<Value>) -> Value {
    match container {
        Value::List(_) => Value::List(items.into()),
        _ => Value::tuple(items),
    }
}

/// `f` applied to each item of a tuple or list, in a container of the same kind.
fn map_items(v: &Value, f: fn(&Value) -> OpResult) -> OpResult {
    let mapped = items(v)
        .unwrap_or(&[])
        .iter()
        .map(f)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(like(v, mapped))
}

/// `GradAdd(a, b)`.
pub fn grad_add(a: &Value, b: &Value) -> OpResult {
    match (a, b) {
        (Value::None, x) | (x, Value::None) => Ok(x.clone()),
        (x, y) if items(x).is_some() && items(y).is_some() => {
            let (xs, ys) = (items(x).unwrap_or(&[]), items(y).unwrap_or(&[]));
            if xs.len() != ys.len() {
                return Err(type_error(format!(
                    "GradAdd: sensitivities of tuples of lengths {} and {}",
                    xs.len(),
                    ys.len()
                )));
            }
            let sum = xs
                .iter()
                .zip(ys)
                .map(|(x, y)| grad_add(x, y))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(like(x, sum))
        }
        _ => binary(Prim::Add, a, b),
    }
}

/// Sensitivity `d` as a tensor: itself, or a number filled into `shape` and `dtype`; `None`
/// when it is neither.
fn sens_tensor(
    d: &Value,
    shape: &[usize],
    dtype: DType,
) -> Result<Option<Tensor>, crate::pynum::PyErr> {
    Ok(match d {
        Value::Tensor(dt) => Some(dt.clone()),
        v => match v.as_scalar() {
            Some(s) => Some(t(Tensor::full(shape, s, dtype))?),
            None => None,
        },
    })
}

/// `SumToShape(d, x)`.
pub fn sum_to_shape(d: &Value, x: &Value) -> OpResult {
    if matches!(d, Value::None) {
        return Ok(Value::None);
    }
    match x {
        Value::Tensor(xt) if xt.dtype().is_float() => {
            let Some(dt) = sens_tensor(d, xt.shape(), xt.dtype())? else {
                return Ok(Value::None);
            };
            Ok(Value::Tensor(reduce_to(&dt, xt.shape(), xt.dtype())?))
        }
        Value::Float(_) => Ok(match d {
            Value::Float(f) => Value::Float(*f),
            Value::Int(i) => Value::Float(*i as f64),
            Value::Tensor(dt) => {
                let s = t(Tensor::reduce(ReduceOp::Sum, dt, None, false))?;
                match t(s.item())? {
                    Scalar::Float(f) => Value::Float(f),
                    Scalar::Int(i) => Value::Float(i as f64),
                    Scalar::Bool(b) => Value::Float(b as i64 as f64),
                }
            }
            _ => Value::None,
        }),
        // Integers get no gradient: a zero of their kind.
        Value::Tensor(xt) => Ok(Value::Tensor(t(Tensor::zeros(xt.shape(), xt.dtype()))?)),
        Value::Int(_) | Value::Bool(_) => Ok(Value::Int(0)),
        _ => Ok(Value::None),
    }
}

/// Sums `d` over the dimensions that broadcasting to its shape added to `shape`, then casts.
fn reduce_to(d: &Tensor, shape: &[usize], dtype: DType) -> Result<Tensor, crate::pynum::PyErr> {
    let mut r = d.clone();
    if r.shape() != shape {
        let lead = r.ndim().saturating_sub(shape.len());
        let mut axes: Vec<i64> = (0..lead as i64).collect();
        for (i, &s) in shape.iter().enumerate() {
            if s == 1 && r.shape().get(lead + i).is_some_and(|&n| n != 1) {
                axes.push((lead + i) as i64);
            }
        }
        if !axes.is_empty() {
            r = t(Tensor::reduce(ReduceOp::Sum, &r, Some(&axes), true))?;
        }
        let target: Vec<i64> = shape.iter().map(|&n| n as i64).collect();
        r = t(r.reshape(&target))?;
    }
    if r.dtype() != dtype {
        r = r.cast(dtype);
    }
    Ok(r)
}

/// `BroadcastLike(d, x)`.
pub fn broadcast_like(d: &Value, x: &Value) -> OpResult {
    match (d, x) {
        (Value::None, _) => Ok(Value::None),
        (Value::Tensor(dt), Value::Tensor(xt)) => {
            let zeros = t(Tensor::zeros(xt.shape(), dt.dtype()))?;
            binary(Prim::Add, &Value::Tensor(zeros), d)
        }
        (d, Value::Tensor(xt)) => Ok(match sens_tensor(d, xt.shape(), xt.dtype())? {
            Some(dt) => Value::Tensor(dt),
            None => Value::None,
        }),
        (Value::Tensor(dt), Value::Float(_)) => sum_to_shape(&Value::Tensor(dt.clone()), x),
        (d, _) => Ok(d.clone()),
    }
}

/// Zeros shaped like `x` (`None` for values without a gradient).
pub fn zeros_like(x: &Value) -> OpResult {
    Ok(match x {
        Value::Tensor(xt) => Value::Tensor(t(Tensor::zeros(xt.shape(), xt.dtype()))?),
        Value::Float(_) => Value::Float(0.0),
        Value::Int(_) => Value::Int(0),
        Value::Bool(_) => Value::Bool(false),
        Value::Ref(p) => Value::Tensor(t(Tensor::zeros(p.shape(), p.dtype()))?),
        v if items(v).is_some() => map_items(v, zeros_like)?,
        _ => Value::None,
    })
}

/// `FillZeros(d, x)`.
pub fn fill_zeros(d: &Value, x: &Value) -> OpResult {
    match (d, x) {
        (Value::None, x) => zeros_like(x),
        (d, x) if items(d).is_some() && items(x).is_some() => {
            let (ds, xs) = (items(d).unwrap_or(&[]), items(x).unwrap_or(&[]));
            let filled = ds
                .iter()
                .zip(xs)
                .map(|(d, x)| fill_zeros(d, x))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(like(x, filled))
        }
        (d, _) => Ok(d.clone()),
    }
}

/// `SensOnes(y)`.
pub fn sens_ones(y: &Value) -> OpResult {
    Ok(match y {
        Value::Tensor(yt) => Value::Tensor(t(Tensor::ones(yt.shape(), yt.dtype()))?),
        Value::Float(_) => Value::Float(1.0),
        Value::Int(_) | Value::Bool(_) => Value::Float(1.0),
        v if items(v).is_some() => map_items(v, sens_ones)?,
        _ => Value::None,
    })
}

/// `SensCheck(d, y)`: a user-given sensitivity must have the structure, shape and dtype of the
/// output (for dimensions inference could not check).
fn sens_check(d: &Value, y: &Value) -> Result<(), crate::pynum::PyErr> {
    let describe = |v: &Value| match v {
        Value::Tensor(t) => format!(
            "a {} tensor of shape {}",
            t.dtype().name(),
            anfora_tensor::tuple_repr(t.shape())
        ),
        v => format!("'{}'", v.type_name()),
    };
    let fits = match (d, y) {
        (Value::Tensor(a), Value::Tensor(b)) => a.dtype() == b.dtype() && a.shape() == b.shape(),
        (Value::Float(_) | Value::Int(_), Value::Float(_) | Value::Int(_) | Value::Bool(_)) => true,
        _ => match (items(d), items(y)) {
            (Some(ds), Some(ys)) if ds.len() == ys.len() => {
                for (d, y) in ds.iter().zip(ys) {
                    sens_check(d, y)?;
                }
                true
            }
            _ => false,
        },
    };
    if fits {
        Ok(())
    } else {
        Err((
            "ValueError",
            format!(
                "the output sensitivity: expected {} like the output, got {}",
                describe(y),
                describe(d)
            ),
        ))
    }
}

fn index_in(i: &Value, n: usize) -> Result<usize, crate::pynum::PyErr> {
    let i = int_arg(i)?;
    let j = if i < 0 { i + n as i64 } else { i };
    if (0..n as i64).contains(&j) {
        Ok(j as usize)
    } else {
        Err(("IndexError", "tuple index out of range".into()))
    }
}

/// `IndexGrad(d, x, index)`: zeros like tensor `x` holding `d` where `x[index]` reads (float
/// tensors; other dtypes get no gradient).
pub fn index_grad(d: &Value, x: &Value, index: &Value) -> OpResult {
    let x = need_tensor(x, "IndexGrad")?;
    if matches!(d, Value::None) || !x.dtype().is_float() {
        return Ok(Value::None);
    }
    let items = crate::ops::tensor_index_items(index)?;
    let view = t(x.index(&items))?;
    let d = sens_tensor(d, view.shape(), x.dtype())?
        .ok_or_else(|| type_error("IndexGrad: the sensitivity is not a number"))?;
    let d = if d.dtype() == x.dtype() {
        d
    } else {
        d.cast(x.dtype())
    };
    Ok(Value::Tensor(t(d.index_scatter(x.shape(), &items))?))
}

/// `CustomGrad(prim, d, out, args...)`: the registered backward rule of a custom primitive.
pub fn custom_grad(args: &[Value]) -> OpResult {
    let (Some(Value::Prim(Prim::Custom(id))), true) = (args.first(), args.len() >= 3) else {
        return Err(type_error(
            "CustomGrad expects a custom primitive, a sensitivity and a result",
        ));
    };
    let def = crate::custom::get(*id);
    let func = format!("ops.{}", def.name);
    let inputs = &args[3..];
    if matches!(args[1], Value::None) {
        return Ok(Value::tuple(vec![Value::None; inputs.len()]));
    }
    let Some(bprop) = def.bprop.as_ref() else {
        return Err(type_error(format!("{func} has no backward rule")));
    };
    let xs = inputs
        .iter()
        .map(|v| tensor_of(v, &func))
        .collect::<Result<Vec<_>, _>>()?;
    let out = tensor_of(&args[2], &func)?;
    let d = sens_tensor(&args[1], out.shape(), out.dtype())?
        .ok_or_else(|| type_error(format!("{func}: the sensitivity is not a number")))?;
    let grads =
        bprop(&xs, &out, &d).map_err(|m| ("ValueError", format!("{func} backward: {m}")))?;
    if grads.len() != xs.len() {
        return Err((
            "ValueError",
            format!(
                "{func} backward returned {} gradients for {} arguments",
                grads.len(),
                xs.len()
            ),
        ));
    }
    for (i, (g, x)) in grads.iter().zip(&xs).enumerate() {
        if g.shape() != x.shape() {
            return Err((
                "ValueError",
                format!(
                    "{func} backward: gradient {i} has shape {:?}, its argument {:?}",
                    g.shape(),
                    x.shape()
                ),
            ));
        }
    }
    Ok(Value::tuple(grads.into_iter().map(Value::Tensor).collect()))
}

/// `GradTupleAt(t, i, d)`.
pub fn grad_tuple_at(tup: &Value, i: &Value, d: &Value) -> OpResult {
    if matches!(tup, Value::Range(_) | Value::Str(_)) {
        return Ok(Value::None);
    }
    if matches!(tup, Value::Tensor(_)) {
        return index_grad(d, tup, i);
    }
    let Some(xs) = items(tup) else {
        return Err(type_error(format!(
            "the gradient of indexing a {} is not supported",
            tup.type_name()
        )));
    };
    if matches!(d, Value::None) {
        return Ok(Value::None);
    }
    let j = index_in(i, xs.len())?;
    let mut out = vec![Value::None; xs.len()];
    out[j] = d.clone();
    Ok(like(tup, out))
}

/// `GradItem(d, i)`.
pub fn grad_item(d: &Value, i: &Value) -> OpResult {
    match d {
        Value::None => Ok(Value::None),
        d => getitem(d, i),
    }
}

/// `GradHead(ds, n)`.
pub fn grad_head(ds: &Value, n: &Value) -> OpResult {
    let xs = items(ds).ok_or_else(|| type_error("GradHead expects a tuple"))?;
    let n = int_arg(n)?.max(0) as usize;
    Ok(Value::tuple(xs[..xs.len().saturating_sub(n)].to_vec()))
}

/// `GradPad(d, n)`.
pub fn grad_pad(d: &Value, n: &Value) -> OpResult {
    let n = int_arg(n)?.max(0) as usize;
    match d {
        Value::None => Ok(Value::None),
        d => {
            let xs = items(d).ok_or_else(|| type_error("GradPad expects a tuple"))?;
            let mut out = xs.to_vec();
            out.extend(std::iter::repeat_n(Value::None, n));
            Ok(Value::tuple(out))
        }
    }
}

fn swap_last(x: &Tensor) -> Result<Tensor, crate::pynum::PyErr> {
    let n = x.ndim() as i64;
    let mut axes: Vec<i64> = (0..n).collect();
    axes.swap((n - 1) as usize, (n - 2) as usize);
    t(x.transpose(Some(&axes)))
}

fn reshaped(x: &Tensor, shape: &[usize]) -> Result<Tensor, crate::pynum::PyErr> {
    let s: Vec<i64> = shape.iter().map(|&n| n as i64).collect();
    t(x.reshape(&s))
}

/// `MatMulGrad(a, b, d)`: `(d @ b^T, a^T @ d)` with 1-D operands promoted as numpy does and
/// broadcast batch dimensions summed back.
pub fn matmul_grad(a: &Value, b: &Value, d: &Value) -> OpResult {
    let (a, b) = (tensor_of(a, "matmul")?, tensor_of(b, "matmul")?);
    if matches!(d, Value::None) {
        return Ok(Value::tuple(vec![Value::None, Value::None]));
    }
    let d = tensor_of(d, "matmul")?;
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

fn reduced_axes(axis: &Value, ndim: usize) -> Result<Vec<usize>, crate::pynum::PyErr> {
    let list: Vec<i64> = match axis {
        Value::None => (0..ndim as i64).collect(),
        Value::Tuple(xs) | Value::List(xs) => {
            xs.iter().map(int_arg).collect::<Result<Vec<_>, _>>()?
        }
        v => vec![int_arg(v)?],
    };
    Ok(list
        .into_iter()
        .map(|a| if a < 0 { a + ndim as i64 } else { a } as usize)
        .collect())
}

/// `ReduceGrad(kind, d, x, out, axis, keepdims)`.
pub fn reduce_grad(
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
    let xt = tensor_of(x, "reduce")?;
    if !xt.dtype().is_float() {
        return Ok(Value::None);
    }
    let dt = sens_tensor(d, &[], xt.dtype())?.ok_or_else(|| type_error("reduce gradient"))?;
    let axes = reduced_axes(axis, xt.ndim())?;
    let kept: Vec<usize> = xt
        .shape()
        .iter()
        .enumerate()
        .map(|(i, &n)| if axes.contains(&i) { 1 } else { n })
        .collect();
    let keep = crate::ops::truth(keepdims)?;
    let kind = match kind {
        Value::Str(s) => s.to_string(),
        _ => String::new(),
    };
    // "prod_pairs" takes a sensitivity shaped like x (see below); the others one shaped like
    // the reduction's result.
    let spread = if kind == "prod_pairs" {
        broadcast_like(&Value::Tensor(dt), x)?
    } else {
        let dk = if keep { dt } else { reshaped(&dt, &kept)? };
        broadcast_like(&Value::Tensor(dk), x)?
    };
    // A comparison as 0/1 in x's dtype, and a reduction over the axes that keeps them.
    let ax: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
    let as_float =
        |m: OpResult| -> OpResult { Ok(Value::Tensor(tensor_of(&m?, "reduce")?.cast(xt.dtype()))) };
    let reduce_kept = |op: ReduceOp, v: &Value| -> OpResult {
        let vt = tensor_of(v, "reduce")?;
        Ok(Value::Tensor(t(Tensor::reduce(op, &vt, Some(&ax), true))?))
    };
    let r = match kind.as_str() {
        "sum" => spread,
        "prod" => {
            // d out / d x_i is the product of the other elements: out / x_i without zeros;
            // with one zero in a group, that zero gets the product of the rest; with more, 0.
            let zero = Value::Float(0.0);
            let zeros = as_float(crate::ops::compare(Prim::Eq, x, &zero))?;
            let count = reduce_kept(ReduceOp::Sum, &zeros)?;
            // x with its zeros replaced by ones, and the product of that.
            let safe = binary(Prim::Add, x, &zeros)?;
            let safe_prod = reduce_kept(ReduceOp::Prod, &safe)?;
            let no_zero = crate::ops::compare(Prim::Eq, &count, &zero)?;
            let one_zero = crate::ops::compare(Prim::Eq, &count, &Value::Float(1.0))?;
            let quotient = binary(Prim::Div, &safe_prod, &safe)?;
            let at_zero = binary(Prim::Mul, &safe_prod, &zeros)?;
            let at_zero = crate::ops::where_(&[one_zero, at_zero, zero.clone()])?;
            let partial = crate::ops::where_(&[no_zero, quotient, at_zero])?;
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
            let zeros = as_float(crate::ops::compare(Prim::Eq, x, &zero))?;
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
            let g1 = crate::ops::where_(&[zeros.clone(), at_zero, elsewhere])?;
            // Z = 2.
            let other_zero = binary(Prim::Sub, &v_at_zeros, v)?;
            let at_zeros = binary(Prim::Mul, &other_zero, &s_prod)?;
            let g2 = crate::ops::where_(&[zeros.clone(), at_zeros, zero.clone()])?;
            let is = |k: f64| crate::ops::compare(Prim::Eq, &count, &Value::Float(k));
            let g = crate::ops::where_(&[is(2.0)?, g2, zero.clone()])?;
            let g = crate::ops::where_(&[is(1.0)?, g1, g])?;
            crate::ops::where_(&[is(0.0)?, g0, g])?
        }
        "mean" => {
            let count: usize = axes.iter().map(|&a| xt.shape()[a]).product();
            binary(Prim::Div, &spread, &Value::Float(count.max(1) as f64))?
        }
        "logsumexp" => {
            // d out / d x = exp(x - out): the softmax over the reduced axes.
            let ot = tensor_of(out, "reduce")?;
            let ok = if keep { ot } else { reshaped(&ot, &kept)? };
            let diff = binary(Prim::Sub, x, &Value::Tensor(ok))?;
            let share = crate::ops::call_prim(Prim::Exp, &[diff], &mut std::io::sink())?;
            binary(Prim::Mul, &share, &spread)?
        }
        "max" | "min" => {
            // Ties share the sensitivity equally.
            let ot = tensor_of(out, "reduce")?;
            let ok = if keep { ot } else { reshaped(&ot, &kept)? };
            let mask = as_float(crate::ops::compare(Prim::Eq, x, &Value::Tensor(ok)))?;
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

/// `TransposeGrad(d, axes)`.
pub fn transpose_grad(d: &Value, axes: &Value) -> OpResult {
    let dt = match d {
        Value::None => return Ok(Value::None),
        d => tensor_of(d, "transpose")?,
    };
    let inverse = match axes {
        Value::None => None,
        v => {
            let n = dt.ndim();
            let perm = reduced_axes(v, n)?;
            let mut inv = vec![0i64; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                if p < inv.len() {
                    inv[p] = i as i64;
                }
            }
            Some(inv)
        }
    };
    Ok(Value::Tensor(t(dt.transpose(inverse.as_deref()))?))
}

/// Dispatch for the gradient primitives.
pub fn call(p: Prim, args: &[Value]) -> OpResult {
    match p {
        Prim::StopGradient => Ok(args[0].clone()),
        Prim::GradAdd => grad_add(&args[0], &args[1]),
        Prim::SumToShape => sum_to_shape(&args[0], &args[1]),
        Prim::BroadcastLike => broadcast_like(&args[0], &args[1]),
        Prim::FillZeros => fill_zeros(&args[0], &args[1]),
        Prim::SensOnes => sens_ones(&args[0]),
        Prim::SensCheck => {
            sens_check(&args[0], &args[1])?;
            Ok(args[0].clone())
        }
        Prim::GradTupleAt => grad_tuple_at(&args[0], &args[1], &args[2]),
        Prim::GradItem => grad_item(&args[0], &args[1]),
        Prim::GradHead => grad_head(&args[0], &args[1]),
        Prim::GradPad => grad_pad(&args[0], &args[1]),
        Prim::IndexGrad => index_grad(&args[0], &args[1], &args[2]),
        Prim::CustomGrad => custom_grad(args),
        Prim::MatMulGrad => matmul_grad(&args[0], &args[1], &args[2]),
        Prim::ReduceGrad => reduce_grad(&args[0], &args[1], &args[2], &args[3], &args[4], &args[5]),
        Prim::TransposeGrad => transpose_grad(&args[0], &args[1]),
        _ => Err(type_error(format!(
            "{}() must be expanded by the grad stage: its function must be known at compile time",
            p.python_name()
        ))),
    }
}

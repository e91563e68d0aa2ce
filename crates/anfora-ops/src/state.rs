//! Primitives with effects: Parameters (creation, reads, the assign and scatter families, the
//! optimizer updates) and the random generator.
//!
//! A Parameter update computes the new value with the same operations as user code (numpy
//! semantics), then checks that it still has the Parameter's shape and can be cast to its dtype
//! under numpy's `same_kind` rule, as numpy's in-place operators do. `assign` is numpy's
//! `p[...] = v`: the value is broadcast to the Parameter's shape and cast (any cast).

use std::cell::RefCell;
use std::sync::{Arc, Mutex, PoisonError};

use crate::custom::CustomId;
use crate::{ParamRef, Prim};
use anfora_tensor::fused::{FusedKernel, FusedOp};
use anfora_tensor::random::Generator;
use anfora_tensor::{BinaryOp, DType, Scalar, Tensor, tuple_repr};

use crate::ops::{OpResult, binary, tensor_err, type_error, value_error};
use crate::pynum::PyErr;
use crate::value::Value;

thread_local! {
    /// The generator random primitives draw from. It belongs to the calling thread, so a
    /// compiled program's draws depend only on the seed and the draws before it on that thread.
    static RNG: RefCell<Generator> = RefCell::new(Generator::new(0));
}

/// `anfora.set_seed(seed)`: restarts the generator.
pub fn set_seed(seed: u64) {
    RNG.with(|g| *g.borrow_mut() = Generator::new(seed));
}

/// The generator's state (seed, counter), for tests and for saving a run.
pub fn rng_state() -> (u64, u64) {
    RNG.with(|g| {
        let g = g.borrow();
        (g.seed(), g.counter())
    })
}

fn with_rng<T>(f: impl FnOnce(&mut Generator) -> T) -> T {
    RNG.with(|g| f(&mut g.borrow_mut()))
}

fn param_arg<'a>(v: &'a Value, func: &str, what: &str) -> Result<&'a ParamRef, PyErr> {
    match v {
        Value::Ref(p) => Ok(p),
        other => Err(type_error(format!(
            "{func}() expects a Parameter as its {what} argument, got {}",
            other.type_name()
        ))),
    }
}

/// Whether numpy casts `from` to `to` under the `same_kind` rule.
pub fn same_kind(from: DType, to: DType) -> bool {
    let rank = |d: DType| match d {
        DType::Bool => 0,
        d if d.is_int() => 1,
        _ => 2,
    };
    rank(from) <= rank(to)
}

/// Stores the result of an in-place update of `p` (`func` names the operation in errors).
fn store(p: &ParamRef, v: Value, func: &str) -> Result<(), PyErr> {
    let t = match v.into_tensor() {
        Ok(t) => t,
        Err(other) => {
            return Err(type_error(format!(
                "{func}: the update of Parameter '{}' is a {}, not a tensor",
                p.name(),
                other.type_name()
            )));
        }
    };
    if t.shape() != p.shape() {
        return Err(value_error(format!(
            "{func}: non-broadcastable output operand with shape {} doesn't match the broadcast shape {} (Parameter '{}')",
            tuple_repr(p.shape()),
            tuple_repr(t.shape()),
            p.name()
        )));
    }
    if !same_kind(t.dtype(), p.dtype()) {
        return Err(type_error(format!(
            "{func}: cannot cast the update of Parameter '{}' from {} to {} with casting rule 'same_kind'",
            p.name(),
            t.dtype(),
            p.dtype()
        )));
    }
    p.set(t.try_cast(p.dtype()).map_err(tensor_err)?);
    Ok(())
}

fn current(p: &ParamRef) -> Value {
    Value::Tensor(p.get())
}

/// A custom primitive: its kernel gets the current values of the Parameters it writes and its
/// other tensor arguments, and returns the new values of those Parameters and then its result.
pub fn custom(id: CustomId, args: &[Value]) -> OpResult {
    let def = crate::custom::get(id);
    let func = format!("ops.{}", def.name);
    let mut tensors = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        tensors.push(match a {
            Value::Ref(p) if i < def.written_refs => p.get(),
            other if i < def.written_refs => {
                return Err(type_error(format!(
                    "{func}() expects a Parameter as argument {}, got {}",
                    i + 1,
                    other.type_name()
                )));
            }
            Value::Tensor(t) => t.clone(),
            other => {
                return Err(type_error(format!(
                    "{func}() takes tensors, got {} as argument {}",
                    other.type_name(),
                    i + 1
                )));
            }
        });
    }
    let mut outs = (def.kernel)(&tensors).map_err(|m| ("RuntimeError", format!("{func}: {m}")))?;
    if outs.len() != def.written_refs + 1 {
        return Err((
            "RuntimeError",
            format!(
                "{func}: the kernel returned {} tensors, expected {} (the written Parameters and the result)",
                outs.len(),
                def.written_refs + 1
            ),
        ));
    }
    let result = outs.pop().map(Value::Tensor).unwrap_or(Value::None);
    for (i, new) in outs.into_iter().enumerate() {
        if let Value::Ref(p) = &args[i] {
            store(p, Value::Tensor(new), &func)?;
        }
    }
    Ok(result)
}

/// `anfora.Parameter(data, name=None, requires_grad=True)`.
pub fn make_parameter(args: &[Value]) -> OpResult {
    let data = match &args[0] {
        Value::Tensor(t) => t.clone(),
        other => {
            return Err(type_error(format!(
                "Parameter() expects a Tensor as data, got {}",
                other.type_name()
            )));
        }
    };
    let requires_grad = crate::ops::truth(&args[2])?;
    let p = match &args[1] {
        Value::Str(name) => ParamRef::new(Some(name), data, requires_grad),
        Value::None => ParamRef::new(None, data, requires_grad),
        other => {
            return Err(type_error(format!(
                "Parameter() name must be a str, got {}",
                other.type_name()
            )));
        }
    };
    Ok(Value::Ref(p))
}

/// `ops.sgd(param, grad, lr)` with its operands owned, for the compiled engine: when the
/// Parameter's value is free (the usual case inside a training step, where the step's reads of
/// it are dead by then), `param - lr * grad` is computed in one pass over memory into its own
/// buffer, so a step allocates nothing for its updates and reads the gradient once. The values
/// are those of [`update`] (a fused kernel gives the bits of the unfused ops: `lr * grad` rounded
/// to the dtype, then the subtraction), which it falls back to for anything but a float
/// gradient of the Parameter's shape and dtype and a Python number as learning rate.
pub fn sgd_owned(args: &mut [Value]) -> OpResult {
    // A trailing monad, when the program threads one, is not an operand.
    let [Value::Ref(param), Value::Tensor(grad), lr, ..] = args else {
        return update(Prim::Sgd, args);
    };
    let dtype = param.dtype();
    let Some(rate) = learning_rate(lr) else {
        return update(Prim::Sgd, args);
    };
    if !matches!(dtype, DType::F32 | DType::F64)
        || grad.dtype() != dtype
        || grad.shape() != param.shape()
    {
        return update(Prim::Sgd, args);
    }
    let kernel = sgd_kernel(dtype, rate)?;
    let param = param.clone();
    // The update runs with the Parameter locked, so a reader on another thread (the program
    // runs without the GIL) waits for the new value instead of seeing the buffer mid-update.
    let done = param.with_value_mut(|value| {
        if !value.is_unique() {
            return Ok(false);
        }
        let Ok(grad) = std::mem::replace(&mut args[1], Value::None).into_tensor() else {
            unreachable!("matched a tensor above")
        };
        // The program cannot raise, and the value is a free buffer of the result's shape and
        // dtype: it is written in place.
        let old = std::mem::replace(value, Tensor::zeros(&[0], dtype).map_err(tensor_err)?);
        *value = kernel.run_owned(vec![old, grad]).map_err(tensor_err)?;
        Ok(true)
    })?;
    if !done {
        return update(Prim::Sgd, args);
    }
    Ok(Value::Ref(param))
}

/// `ops.sgd(param, gemm(a, b, None, ta, tb), lr)` as one kernel, for the compiled engine when
/// the product's only use is the update right after it: `sgd_args` are the update's operands
/// with the gradient not yet computed, `gemm_args` the product's. The values are those of
/// [`crate::ops`]'s `gemm` followed by [`sgd_owned`] ([`Tensor::sgd_product`]). `None`, with
/// nothing changed, where that kernel does not apply (a Parameter whose value is shared, a
/// learning rate that is a tensor, operands that are not a large float product of the
/// Parameter's shape and dtype): the caller then runs the two ops as written.
pub fn sgd_product(sgd_args: &[Value], gemm_args: &[Value]) -> Option<OpResult> {
    let [Value::Ref(param), _, lr, ..] = sgd_args else {
        return None;
    };
    let [
        Value::Tensor(a),
        Value::Tensor(b),
        Value::None,
        Value::Bool(ta),
        Value::Bool(tb),
    ] = gemm_args
    else {
        return None;
    };
    let rate = learning_rate(lr)?;
    // As in `sgd_owned`, the update runs with the Parameter locked; the kernel itself leaves a
    // value that is not uniquely owned alone.
    let done = param.with_value_mut(|value| value.sgd_product(a, b, *ta, *tb, rate));
    match done {
        Ok(true) => Some(Ok(Value::Ref(param.clone()))),
        Ok(false) => None,
        Err(e) => Some(Err(tensor_err(e))),
    }
}

/// The learning rate of the fused SGD kernels: a Python number (a tensor, even one-element,
/// takes the general `update`).
fn learning_rate(lr: &Value) -> Option<Scalar> {
    lr.as_scalar().filter(|_| !matches!(lr, Value::Tensor(_)))
}

/// The fused kernel of `param - rate * grad` for `dtype`, kept for the next steps: a kernel
/// keeps its generated code, which is compiled at its first run. A few recent (dtype, rate)
/// pairs are kept (a schedule that changes the rate every step rebuilds it each time).
fn sgd_kernel(dtype: DType, rate: Scalar) -> Result<Arc<FusedKernel>, PyErr> {
    const KEPT: usize = 8;
    static KERNELS: Mutex<Vec<(DType, Scalar, Arc<FusedKernel>)>> = Mutex::new(Vec::new());
    let mut kernels = KERNELS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(k) = kernels
        .iter()
        .position(|(d, r, _)| *d == dtype && *r == rate)
    {
        let entry = kernels.remove(k);
        let kernel = entry.2.clone();
        kernels.push(entry);
        return Ok(kernel);
    }
    // Values: 0 the Parameter, 1 the gradient, 2 the rate (a weak operand, so the step keeps the
    // float dtype), 3 `lr * grad`, 4 the result.
    let ops = vec![
        FusedOp::Scalar(rate),
        FusedOp::Binary(BinaryOp::Mul, 2, 1),
        FusedOp::Binary(BinaryOp::Sub, 0, 3),
    ];
    let kernel = Arc::new(FusedKernel::new(&[dtype, dtype], ops).map_err(tensor_err)?);
    if kernels.len() == KEPT {
        kernels.remove(0);
    }
    kernels.push((dtype, rate, kernel.clone()));
    Ok(kernel)
}

/// The assign family, scatter updates and optimizer steps: `args` start with the Parameters
/// they write (`Prim::written_refs`). Returns the first Parameter.
pub fn update(p: Prim, args: &[Value]) -> OpResult {
    let func = p.python_name();
    let first = param_arg(&args[0], &func, "first")?;
    match p {
        Prim::Assign => {
            let v = match &args[1] {
                Value::Tensor(t) => t.clone(),
                v => match v.as_scalar() {
                    Some(s) => Tensor::scalar(s, first.dtype()).map_err(tensor_err)?,
                    None => {
                        return Err(type_error(format!(
                            "{func}() expects a Tensor or a number as value, got {}",
                            v.type_name()
                        )));
                    }
                },
            };
            // numpy's `p[...] = v`: broadcast to the Parameter's shape, any cast.
            let shape =
                anfora_tensor::broadcast_shapes(first.shape(), v.shape()).map_err(tensor_err)?;
            if shape != first.shape() {
                return Err(value_error(format!(
                    "{func}: could not broadcast input array from shape {} into shape {} (Parameter '{}')",
                    tuple_repr(v.shape()),
                    tuple_repr(first.shape()),
                    first.name()
                )));
            }
            let mask = Tensor::full(
                first.shape(),
                anfora_tensor::Scalar::Bool(true),
                DType::Bool,
            )
            .map_err(tensor_err)?;
            let spread = Tensor::where_(&mask, &v, &v).map_err(tensor_err)?;
            first.set(spread.try_cast(first.dtype()).map_err(tensor_err)?);
        }
        Prim::AssignAdd | Prim::AssignSub => {
            let op = if p == Prim::AssignAdd {
                Prim::Add
            } else {
                Prim::Sub
            };
            let new = binary(op, &current(first), &args[1])?;
            store(first, new, &func)?;
        }
        Prim::ScatterUpdate | Prim::ScatterAdd | Prim::ScatterNdUpdate | Prim::ScatterNdAdd => {
            let indices = need(&args[1], &func, "indices")?;
            let updates = need(&args[2], &func, "updates")?;
            let x = first.get();
            let new = match p {
                Prim::ScatterUpdate => x.scatter_update(indices, updates),
                Prim::ScatterAdd => x.scatter_add(indices, updates),
                Prim::ScatterNdUpdate => x.scatter_nd_update(indices, updates),
                _ => x.scatter_nd_add(indices, updates),
            }
            .map_err(tensor_err)?;
            store(first, Value::Tensor(new), &func)?;
        }
        Prim::Sgd => {
            // param -= lr * grad
            let step = binary(Prim::Mul, &args[2], &args[1])?;
            let new = binary(Prim::Sub, &current(first), &step)?;
            store(first, new, &func)?;
        }
        Prim::ApplyMomentum => {
            let accum = param_arg(&args[1], &func, "second")?;
            let (lr, grad, momentum) = (&args[2], &args[3], &args[4]);
            // accum = accum * momentum + grad
            let acc = binary(
                Prim::Add,
                &binary(Prim::Mul, &current(accum), momentum)?,
                grad,
            )?;
            store(accum, acc.clone(), &func)?;
            let acc = current(accum);
            let delta = if crate::ops::truth(&args[5])? {
                // Nesterov: var -= grad * lr + accum * momentum * lr
                binary(
                    Prim::Add,
                    &binary(Prim::Mul, grad, lr)?,
                    &binary(Prim::Mul, &binary(Prim::Mul, &acc, momentum)?, lr)?,
                )?
            } else {
                binary(Prim::Mul, &acc, lr)?
            };
            let new = binary(Prim::Sub, &current(first), &delta)?;
            store(first, new, &func)?;
        }
        Prim::Adam => {
            let m = param_arg(&args[1], &func, "second")?;
            let v = param_arg(&args[2], &func, "third")?;
            let (grad, step, lr, beta1, beta2, eps) =
                (&args[3], &args[4], &args[5], &args[6], &args[7], &args[8]);
            let one_minus = |b: &Value| binary(Prim::Sub, &Value::Float(1.0), b);
            // m = beta1 * m + (1 - beta1) * grad
            let m_new = binary(
                Prim::Add,
                &binary(Prim::Mul, beta1, &current(m))?,
                &binary(Prim::Mul, &one_minus(beta1)?, grad)?,
            )?;
            store(m, m_new, &func)?;
            // v = beta2 * v + (1 - beta2) * grad^2
            let v_new = binary(
                Prim::Add,
                &binary(Prim::Mul, beta2, &current(v))?,
                &binary(
                    Prim::Mul,
                    &one_minus(beta2)?,
                    &binary(Prim::Mul, grad, grad)?,
                )?,
            )?;
            store(v, v_new, &func)?;
            // Bias correction with the 1-based step count.
            let c1 = one_minus(&binary(Prim::Pow, beta1, step)?)?;
            let c2 = one_minus(&binary(Prim::Pow, beta2, step)?)?;
            let m_hat = binary(Prim::Div, &current(m), &c1)?;
            let v_hat = binary(Prim::Div, &current(v), &c2)?;
            let denom = binary(
                Prim::Add,
                &crate::ops::call_prim(Prim::Sqrt, &[v_hat], &mut std::io::sink())?,
                eps,
            )?;
            let delta = binary(Prim::Mul, lr, &binary(Prim::Div, &m_hat, &denom)?)?;
            let new = binary(Prim::Sub, &current(first), &delta)?;
            store(first, new, &func)?;
        }
        other => return Err(type_error(format!("{} is not an update", other.name()))),
    }
    Ok(Value::Ref(first.clone()))
}

fn need<'a>(v: &'a Value, func: &str, what: &str) -> Result<&'a Tensor, PyErr> {
    match v {
        Value::Tensor(t) => Ok(t),
        other => Err(type_error(format!(
            "{func}() expects a Tensor as {what}, got {}",
            other.type_name()
        ))),
    }
}

fn float_arg(v: &Value, func: &str, what: &str) -> Result<f64, PyErr> {
    match v {
        Value::Float(f) => Ok(*f),
        Value::Int(i) => Ok(*i as f64),
        Value::Bool(b) => Ok(*b as i64 as f64),
        other => Err(type_error(format!(
            "{func}() expects a number as {what}, got {}",
            other.type_name()
        ))),
    }
}

fn float_dtype(v: &Value, func: &str) -> Result<DType, PyErr> {
    let d = crate::ops::dtype_arg(v, Some(DType::F32))?.unwrap_or(DType::F32);
    if !d.is_float() {
        return Err(type_error(format!(
            "{func}() needs a floating dtype, got {d}"
        )));
    }
    Ok(d)
}

/// `ops.dropout`'s float tensor and rate, checked.
fn dropout_args<'a>(x: &'a Value, p: &Value) -> Result<(&'a Tensor, f64), PyErr> {
    let func = "ops.dropout";
    let x = need(x, func, "x")?;
    if !x.dtype().is_float() {
        return Err(type_error(format!(
            "{func}() expects a floating tensor, got {}",
            x.dtype()
        )));
    }
    let rate = float_arg(p, func, "p")?;
    if !(0.0..=1.0).contains(&rate) {
        return Err(value_error(format!(
            "{func}: p must be in [0, 1], got {rate}"
        )));
    }
    Ok((x, rate))
}

/// `DropoutMask(x, p, training)`: where `ops.dropout` keeps its input (a uniform draw `>= p`),
/// or everywhere without drawing when it does not drop anything.
pub fn dropout_mask(x: &Value, p: &Value, training: &Value) -> OpResult {
    let (x, rate) = dropout_args(x, p)?;
    if !crate::ops::truth(training)? || rate == 0.0 {
        return Tensor::ones(x.shape(), DType::Bool)
            .map(Value::Tensor)
            .map_err(tensor_err);
    }
    let u = with_rng(|g| g.uniform(x.shape(), 0.0, 1.0, x.dtype())).map_err(tensor_err)?;
    binary(Prim::Ge, &Value::Tensor(u), &Value::Float(rate))
}

/// `DropoutApply(x, mask, p, training)`: `x / (1 - p)` where `mask` holds, 0 elsewhere; `x`
/// itself when not training or `p` is 0.
pub fn dropout_apply(x: &Value, mask: &Value, p: &Value, training: &Value) -> OpResult {
    let (xt, rate) = dropout_args(x, p)?;
    if !crate::ops::truth(training)? || rate == 0.0 {
        return Ok(x.clone());
    }
    if rate >= 1.0 {
        return Tensor::zeros(xt.shape(), xt.dtype())
            .map(Value::Tensor)
            .map_err(tensor_err);
    }
    let scaled = binary(Prim::Div, x, &Value::Float(1.0 - rate))?;
    crate::ops::where_(&[mask.clone(), scaled, Value::Float(0.0)])
}

/// The random primitives (hidden effects: each call draws new values).
pub fn random(p: Prim, args: &[Value]) -> OpResult {
    let func = p.python_name();
    let t = match p {
        Prim::SetSeed => {
            let seed = crate::ops::int_arg(&args[0])?;
            if seed < 0 {
                return Err(value_error("set_seed: the seed must be non-negative"));
            }
            set_seed(seed as u64);
            return Ok(Value::None);
        }
        Prim::Uniform => {
            let shape = crate::ops::shape_arg(&args[0])?;
            let (lo, hi) = (
                float_arg(&args[1], &func, "minval")?,
                float_arg(&args[2], &func, "maxval")?,
            );
            if lo >= hi {
                return Err(value_error(format!(
                    "{func}: minval ({lo}) must be less than maxval ({hi})"
                )));
            }
            let d = float_dtype(&args[3], &func)?;
            with_rng(|g| g.uniform(&shape, lo, hi, d))
        }
        Prim::Normal => {
            let shape = crate::ops::shape_arg(&args[0])?;
            let (mean, std) = (
                float_arg(&args[1], &func, "mean")?,
                float_arg(&args[2], &func, "stddev")?,
            );
            let d = float_dtype(&args[3], &func)?;
            with_rng(|g| g.normal(&shape, mean, std, d))
        }
        Prim::Randint => {
            let (lo, hi) = (
                crate::ops::int_arg(&args[0])?,
                crate::ops::int_arg(&args[1])?,
            );
            let shape = crate::ops::shape_arg(&args[2])?;
            let d = crate::ops::dtype_arg(&args[3], Some(DType::I64))?.unwrap_or(DType::I64);
            if !d.is_int() {
                return Err(type_error(format!(
                    "{func}() needs an integer dtype, got {d}"
                )));
            }
            if lo >= hi {
                return Err(value_error(format!(
                    "{func}: low ({lo}) must be less than high ({hi})"
                )));
            }
            with_rng(|g| g.randint(&shape, lo, hi, d))
        }
        Prim::Bernoulli => {
            let prob = need(&args[0], &func, "p")?;
            if !prob.dtype().is_float() {
                return Err(type_error(format!(
                    "{func}() expects floating probabilities, got {}",
                    prob.dtype()
                )));
            }
            let bad = prob
                .to_f64_vec()
                .into_iter()
                .find(|x| !(0.0..=1.0).contains(x));
            if let Some(x) = bad {
                return Err(value_error(format!(
                    "{func}: probabilities must be in [0, 1], got {x}"
                )));
            }
            let u = with_rng(|g| g.uniform(prob.shape(), 0.0, 1.0, prob.dtype()))
                .map_err(tensor_err)?;
            let hit = binary(Prim::Lt, &Value::Tensor(u), &args[0])?;
            return crate::ops::call_prim(
                Prim::Cast,
                &[hit, Value::DType(prob.dtype())],
                &mut std::io::sink(),
            );
        }
        Prim::Dropout => {
            let mask = dropout_mask(&args[0], &args[1], &args[2])?;
            return dropout_apply(&args[0], &mask, &args[1], &args[2]);
        }
        Prim::DropoutMask => return dropout_mask(&args[0], &args[1], &args[2]),
        other => return Err(type_error(format!("{} is not random", other.name()))),
    };
    t.map(Value::Tensor).map_err(tensor_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Monad;

    fn f32s(v: &[f32], shape: &[usize]) -> Tensor {
        Tensor::from_f32(v.to_vec(), shape).unwrap()
    }

    /// Runs `ops.sgd` both ways on fresh Parameters holding `value` and returns the results
    /// (`Ok` with the new value, or the error text).
    fn both(value: &Tensor, grad: &Tensor, lr: Value) -> [Result<Tensor, String>; 2] {
        let run = |owned: bool| {
            let p = ParamRef::new(Some("w"), value.clone().contiguous(), true);
            let mut args = vec![
                Value::Ref(p.clone()),
                Value::Tensor(grad.clone()),
                lr.clone(),
                Value::Monad(Monad::U),
            ];
            let r = if owned {
                sgd_owned(&mut args)
            } else {
                update(Prim::Sgd, &args)
            };
            r.map(|_| p.get()).map_err(|(k, m)| format!("{k}: {m}"))
        };
        [run(true), run(false)]
    }

    #[test]
    fn owned_sgd_gives_the_values_of_the_reference_update() {
        let w = f32s(&[1.0, -2.5, 3.25, 0.1, 1e-8, -7.0], &[2, 3]);
        let g = f32s(&[0.3, 0.7, -1.1, 2.0, 1e-3, 0.0], &[2, 3]);
        let cases: Vec<(Tensor, Tensor, Value)> = vec![
            (w.clone(), g.clone(), Value::Float(0.1)),
            (w.clone(), g.clone(), Value::Int(2)),
            (w.clone(), g.clone(), Value::Bool(true)),
            (w.cast(DType::F64), g.cast(DType::F64), Value::Float(0.1)),
            // Fallbacks: a broadcast gradient, a 0-d float64 rate, another dtype, ints.
            (w.clone(), f32s(&[1.0, 2.0, 3.0], &[3]), Value::Float(0.5)),
            (
                w.clone(),
                g.clone(),
                Value::Tensor(Tensor::from_f64(vec![0.1], &[]).unwrap()),
            ),
            (w.clone(), g.cast(DType::F64), Value::Float(0.1)),
            (w.cast(DType::I64), g.cast(DType::I64), Value::Int(1)),
            (w.cast(DType::I64), g.cast(DType::I64), Value::Float(0.5)),
            (w.clone(), f32s(&[1.0, 2.0], &[2]), Value::Float(0.5)),
            (w.clone(), g.clone(), Value::str("fast")),
        ];
        for (value, grad, lr) in cases {
            let [owned, reference] = both(&value, &grad, lr.clone());
            match (&owned, &reference) {
                (Ok(a), Ok(b)) => assert!(a.same_as(b), "{lr:?}: {} vs {}", a.repr(), b.repr()),
                (Err(a), Err(b)) => assert_eq!(a, b, "{lr:?}"),
                (a, b) => panic!("{lr:?}: {:?} vs {:?}", a.as_ref().err(), b.as_ref().err()),
            }
        }
        // The float32 case computes lr * g in float32, then subtracts (two roundings).
        let [Ok(got), _] = both(&w, &g, Value::Float(0.1)) else {
            panic!()
        };
        let want: Vec<f32> = w
            .as_f32_slice()
            .unwrap()
            .iter()
            .zip(g.as_f32_slice().unwrap())
            .map(|(&w, &g)| w - 0.1f32 * g)
            .collect();
        assert_eq!(got.as_f32_slice().unwrap(), &want[..]);
    }

    /// A reader on another thread never sees the Parameter mid-update: every value it reads
    /// has the Parameter's shape and is one of the values the updates produce.
    #[test]
    fn readers_on_other_threads_see_whole_values() {
        let p = ParamRef::new(Some("w"), Tensor::zeros(&[1024], DType::F32).unwrap(), true);
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let reader = s.spawn(|| {
                let mut reads = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let v = p.get();
                    assert_eq!(v.shape(), &[1024]);
                    let first = v.as_f32_slice().unwrap()[0];
                    assert!(v.as_f32_slice().unwrap().iter().all(|&x| x == first));
                    reads += 1;
                }
                reads
            });
            for _ in 0..2000 {
                let g = Tensor::ones(&[1024], DType::F32).unwrap();
                let mut args = [Value::Ref(p.clone()), Value::Tensor(g), Value::Float(1.0)];
                sgd_owned(&mut args).unwrap();
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            assert!(reader.join().unwrap() > 0);
        });
        assert_eq!(p.get().as_f32_slice().unwrap()[0], -2000.0);
    }

    #[test]
    fn owned_sgd_writes_into_free_buffers_only() {
        let w = f32s(&[1.0, 2.0, 3.0, 4.0], &[4]);
        let g = f32s(&[1.0, 1.0, 1.0, 1.0], &[4]);
        let p = ParamRef::new(Some("w"), w, true);
        let before = p.get().as_f32_slice().unwrap().as_ptr();
        let mut args = [
            Value::Ref(p.clone()),
            Value::Tensor(g.clone()),
            Value::Float(0.5),
        ];
        sgd_owned(&mut args).unwrap();
        let now = p.get();
        assert_eq!(now.as_f32_slice().unwrap(), &[0.5, 1.5, 2.5, 3.5]);
        assert_eq!(
            now.as_f32_slice().unwrap().as_ptr(),
            before,
            "updated in place"
        );
        // A value someone still holds (a read of the Parameter) keeps its elements.
        let held = p.get();
        let mut args = [
            Value::Ref(p.clone()),
            Value::Tensor(g.clone()),
            Value::Float(0.5),
        ];
        sgd_owned(&mut args).unwrap();
        assert_eq!(held.as_f32_slice().unwrap(), &[0.5, 1.5, 2.5, 3.5]);
        assert_eq!(p.get().as_f32_slice().unwrap(), &[0.0, 1.0, 2.0, 3.0]);
        // The caller's gradient (shared) is not overwritten by the step.
        assert_eq!(g.as_f32_slice().unwrap(), &[1.0; 4]);
    }

    #[test]
    fn sgd_kernels_are_kept_per_dtype_and_rate() {
        let a = sgd_kernel(DType::F32, Scalar::Float(0.125)).unwrap();
        let b = sgd_kernel(DType::F32, Scalar::Float(0.125)).unwrap();
        assert!(
            Arc::ptr_eq(&a, &b),
            "the same kernel (and its generated code) again"
        );
        let c = sgd_kernel(DType::F64, Scalar::Float(0.125)).unwrap();
        let d = sgd_kernel(DType::F32, Scalar::Float(0.25)).unwrap();
        assert!(!Arc::ptr_eq(&a, &c) && !Arc::ptr_eq(&a, &d));
        assert_eq!(c.output_dtype(), DType::F64);
        // The bound: after more pairs than are kept, the first is rebuilt.
        for k in 0..20 {
            sgd_kernel(DType::F32, Scalar::Int(k)).unwrap();
        }
        let e = sgd_kernel(DType::F32, Scalar::Float(0.125)).unwrap();
        assert!(!Arc::ptr_eq(&a, &e));
    }
}

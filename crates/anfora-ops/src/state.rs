//! The state primitives keep, and what the families that write it share: the thread's random
//! generator, and reading, checking and storing Parameters (at run time and in inference).

use std::cell::RefCell;

use anfora_tensor::random::Generator;
use anfora_tensor::{DType, Tensor, tuple_repr};

use crate::ParamRef;
use crate::abs::{Abs, RefAbs, Rule, RuleError, err, shape_text};
use crate::args::dtype_arg;
use crate::prim::Prim;
use crate::pynum::{PyErr, tensor_err, type_error, value_error};
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

pub(crate) fn with_rng<T>(f: impl FnOnce(&mut Generator) -> T) -> T {
    RNG.with(|g| f(&mut g.borrow_mut()))
}

pub(crate) fn param_arg<'a>(v: &'a Value, func: &str, what: &str) -> Result<&'a ParamRef, PyErr> {
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
pub(crate) fn store(p: &ParamRef, v: Value, func: &str) -> Result<(), PyErr> {
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

pub(crate) fn current(p: &ParamRef) -> Value {
    Value::Tensor(p.get())
}

pub(crate) fn need<'a>(v: &'a Value, func: &str, what: &str) -> Result<&'a Tensor, PyErr> {
    match v {
        Value::Tensor(t) => Ok(t),
        other => Err(type_error(format!(
            "{func}() expects a Tensor as {what}, got {}",
            other.type_name()
        ))),
    }
}

pub(crate) fn float_arg(v: &Value, func: &str, what: &str) -> Result<f64, PyErr> {
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

pub(crate) fn float_dtype(v: &Value, func: &str) -> Result<DType, PyErr> {
    let d = dtype_arg(v, Some(DType::F32))?.unwrap_or(DType::F32);
    if !d.is_float() {
        return Err(type_error(format!(
            "{func}() needs a floating dtype, got {d}"
        )));
    }
    Ok(d)
}

// ---- abstract values ----------------------------------------------------------------------
pub(crate) fn known(shape: &[usize]) -> Vec<Option<usize>> {
    shape.iter().map(|&d| Some(d)).collect()
}

/// Checks that `update`, the new value computed for Parameter `r`, can be stored in it.
pub(crate) fn check_update(r: &RefAbs, update: &Abs) -> Result<(), RuleError> {
    let Abs::Tensor(t) = update else {
        return Ok(());
    };
    let name: std::sync::Arc<str> = r.param.as_ref().map_or("?".into(), |p| p.name());
    let fits = t.shape.len() == r.shape.len()
        && t.shape
            .iter()
            .zip(&r.shape)
            .all(|(a, b)| a.is_none_or(|a| a == *b));
    if !fits {
        return Err(err(format!(
            "the update of Parameter '{name}' has shape {}, but the Parameter has shape {}",
            shape_text(&t.shape, "?", ", "),
            shape_text(&known(&r.shape), "?", ", ")
        )));
    }
    if !same_kind(t.dtype, r.dtype) {
        return Err(err(format!(
            "cannot cast the update of Parameter '{name}' from {} to {} with casting rule 'same_kind'",
            t.dtype, r.dtype
        )));
    }
    Ok(())
}

pub(crate) fn float_dtype_abs(a: &Abs, func: &str) -> Result<Option<DType>, RuleError> {
    match crate::args::dtype_arg_abs(a, DType::F32) {
        Some(d) if d.is_float() => Ok(Some(d)),
        Some(d) => Err(err(format!("{func}() needs a floating dtype, got {d}"))),
        None => Ok(None),
    }
}

/// An update's result, the Parameter it writes (its first argument), once every argument it
/// writes is checked to be a Parameter.
pub(crate) fn written_abs(p: Prim, args: &[Abs]) -> Rule {
    let func = p.python_name();
    for (i, a) in args.iter().take(p.written_refs()).enumerate() {
        if !matches!(a, Abs::Ref(_) | Abs::Any) {
            return Err(err(format!(
                "{func}() writes a Parameter, but argument {} is {a}",
                i + 1
            )));
        }
    }
    Ok(match &args[0] {
        Abs::Ref(_) => args[0].clone(),
        _ => Abs::Any,
    })
}

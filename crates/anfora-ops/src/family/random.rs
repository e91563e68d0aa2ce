//! Random draws from the thread's counter-based generator (`anfora.set_seed`, `uniform`,
//! `normal`, `randint`, `bernoulli`) and dropout, whose mask the backward pass reuses.

use anfora_tensor::{DType, Tensor};

use crate::abs::{Abs, Rule, err};
use crate::args::{dtype_arg, dtype_arg_abs, int_arg, shape_arg, shape_arg_abs, tensor_abs};
use crate::def::{Backward, PrimDef, Py, primitives};
use crate::emit::{Emit, Forward};
use crate::ids::NodeId;
use crate::prim::{Effects, Prim};
use crate::pynum::{PyErr, tensor, tensor_err, type_error, value_error};
use crate::python::{binary, truth};
use crate::state::{float_arg, float_dtype, float_dtype_abs, need, set_seed, with_rng};
use crate::value::{OpResult, Value};

primitives! {
    family random = 13;

    /// `anfora.set_seed(n)`: restarts the random generator.
    SetSeed = PrimDef::new("SetSeed", "(seed)", set_seed_abs, |_, a, _| seed(a), Backward::Zero)
        .with_effects(Effects::IO).called(&[Py::Anfora("set_seed")]);
    Uniform = PrimDef::new("UniformReal", "(shape, minval=0.0, maxval=1.0, dtype=None)",
        float_draw_abs, |p, a, _| float_draw(p, a), Backward::Zero)
        .with_effects(Effects::HIDDEN).called(&[Py::Op("uniform")]);
    Normal = PrimDef::new("StandardNormal", "(shape, mean=0.0, stddev=1.0, dtype=None)",
        float_draw_abs, |p, a, _| float_draw(p, a), Backward::Zero)
        .with_effects(Effects::HIDDEN).called(&[Py::Op("normal")]);
    Randint = PrimDef::new("UniformInt", "(low, high, shape, dtype=None)", randint_abs,
        |p, a, _| randint(p, a), Backward::Zero)
        .with_effects(Effects::HIDDEN).called(&[Py::Op("randint")]);
    Bernoulli = PrimDef::new("Bernoulli", "(p)", like_float_tensor, |p, a, _| bernoulli(p, a),
        Backward::Zero)
        .with_effects(Effects::HIDDEN).called(&[Py::Op("bernoulli")]);
    // Differentiated as DropoutApply(x, DropoutMask(x, p, training), p, training), so that
    // the backward pass multiplies by the very mask the forward pass drew.
    Dropout = PrimDef::new("Dropout", "(x, p=0.5, training=True)", like_float_tensor,
        |_, a, _| dropout(a), Backward::Through(dropout_forward))
        .with_effects(Effects::HIDDEN).called(&[Py::Op("dropout")]);
    /// `DropoutMask(x, p, training)`: the keep mask `ops.dropout` draws (bool, shaped like `x`;
    /// all true, drawing nothing, when not training or `p` is 0).
    DropoutMask = PrimDef::new("DropoutMask", "(x, p, training)", like_float_tensor,
        |_, a, _| dropout_mask(&a[0], &a[1], &a[2]), Backward::Zero)
        .with_effects(Effects::HIDDEN);
    /// `DropoutApply(x, mask, p, training)`: `x / (1 - p)` where `mask`, else 0 (`x` itself
    /// when not training or `p` is 0). Linear in `x`: its gradient is itself applied to `d`.
    DropoutApply = PrimDef::new("DropoutApply", "(x, mask, p, training)", like_float_tensor,
        |_, a, _| dropout_apply(&a[0], &a[1], &a[2], &a[3]),
        Backward::First(|e, c| e.op(Prim::DropoutApply, &[c.d, c.x[1], c.x[2], c.x[3]])))
        .tensor_kernel();
}

fn set_seed_abs(_: Prim, a: &[Abs]) -> Rule {
    match &a[0] {
        Abs::Int(_) | Abs::Bool(_) | Abs::Any => Ok(Abs::None),
        other => Err(err(format!("set_seed() expects an int, got {other}"))),
    }
}

fn seed(a: &[Value]) -> OpResult {
    let seed = int_arg(&a[0])?;
    if seed < 0 {
        return Err(value_error("set_seed: the seed must be non-negative"));
    }
    set_seed(seed as u64);
    Ok(Value::None)
}

fn randint_abs(p: Prim, a: &[Abs]) -> Rule {
    let Some(shape) = shape_arg_abs(&a[2]) else {
        return Ok(Abs::Bottom);
    };
    match dtype_arg_abs(&a[3], DType::I64) {
        Some(d) if d.is_int() => Ok(tensor_abs(d, shape)),
        Some(d) => Err(err(format!(
            "{}() needs an integer dtype, got {d}",
            p.python_name()
        ))),
        None => Ok(Abs::Any),
    }
}

fn dropout(a: &[Value]) -> OpResult {
    let mask = dropout_mask(&a[0], &a[1], &a[2])?;
    dropout_apply(&a[0], &mask, &a[1], &a[2])
}

fn dropout_forward(e: &mut dyn Emit, x: &[NodeId]) -> Option<Forward> {
    if x.len() != 3 {
        return None;
    }
    let mask = e.op(Prim::DropoutMask, x);
    let args = vec![x[0], mask, x[1], x[2]];
    let out = e.op(Prim::DropoutApply, &args);
    Some(Forward {
        out,
        prim: Prim::DropoutApply,
        args,
    })
}

/// `uniform(shape, minval, maxval, dtype)` or `normal(shape, mean, stddev, dtype)`: floats
/// drawn with two parameters.
fn float_draw(p: Prim, args: &[Value]) -> OpResult {
    let func = p.python_name();
    let shape = shape_arg(&args[0])?;
    let uniform = p == Prim::Uniform;
    let [first, second] = if uniform {
        ["minval", "maxval"]
    } else {
        ["mean", "stddev"]
    };
    let a = float_arg(&args[1], &func, first)?;
    let b = float_arg(&args[2], &func, second)?;
    if uniform && a >= b {
        return Err(value_error(format!(
            "{func}: minval ({a}) must be less than maxval ({b})"
        )));
    }
    let d = float_dtype(&args[3], &func)?;
    let drawn = with_rng(|g| {
        if uniform {
            g.uniform(&shape, a, b, d)
        } else {
            g.normal(&shape, a, b, d)
        }
    });
    tensor(drawn).map(Value::Tensor)
}

fn randint(p: Prim, args: &[Value]) -> OpResult {
    let func = p.python_name();
    let (lo, hi) = (int_arg(&args[0])?, int_arg(&args[1])?);
    let shape = shape_arg(&args[2])?;
    let d = dtype_arg(&args[3], Some(DType::I64))?.unwrap_or(DType::I64);
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
    tensor(with_rng(|g| g.randint(&shape, lo, hi, d))).map(Value::Tensor)
}

fn bernoulli(p: Prim, args: &[Value]) -> OpResult {
    let func = p.python_name();
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
    let u = with_rng(|g| g.uniform(prob.shape(), 0.0, 1.0, prob.dtype())).map_err(tensor_err)?;
    let hit = binary(Prim::Lt, &Value::Tensor(u), &args[0])?;
    Prim::Cast.eval(&[hit, Value::DType(prob.dtype())])
}

fn float_draw_abs(p: Prim, args: &[Abs]) -> Rule {
    let Some(shape) = shape_arg_abs(&args[0]) else {
        return Ok(Abs::Bottom);
    };
    Ok(match float_dtype_abs(&args[3], &p.python_name())? {
        Some(d) => tensor_abs(d, shape),
        None => Abs::Any,
    })
}

/// Shaped like the floating tensor `x` (the mask: bool).
fn like_float_tensor(p: Prim, args: &[Abs]) -> Rule {
    Ok(match &args[0] {
        Abs::Tensor(t) if t.dtype.is_float() && p == Prim::DropoutMask => {
            tensor_abs(DType::Bool, t.shape.clone())
        }
        Abs::Tensor(t) if t.dtype.is_float() => tensor_abs(t.dtype, t.shape.clone()),
        Abs::Tensor(t) => {
            return Err(err(format!(
                "{}() expects a floating tensor, got {}",
                p.python_name(),
                t.dtype
            )));
        }
        Abs::Any => Abs::Any,
        _ => Abs::Bottom,
    })
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
fn dropout_mask(x: &Value, p: &Value, training: &Value) -> OpResult {
    let (x, rate) = dropout_args(x, p)?;
    if !truth(training)? || rate == 0.0 {
        return Tensor::ones(x.shape(), DType::Bool)
            .map(Value::Tensor)
            .map_err(tensor_err);
    }
    let u = with_rng(|g| g.uniform(x.shape(), 0.0, 1.0, x.dtype())).map_err(tensor_err)?;
    binary(Prim::Ge, &Value::Tensor(u), &Value::Float(rate))
}

/// `DropoutApply(x, mask, p, training)`: `x / (1 - p)` where `mask` holds, 0 elsewhere; `x`
/// itself when not training or `p` is 0.
fn dropout_apply(x: &Value, mask: &Value, p: &Value, training: &Value) -> OpResult {
    let (xt, rate) = dropout_args(x, p)?;
    if !truth(training)? || rate == 0.0 {
        return Ok(x.clone());
    }
    if rate >= 1.0 {
        return Tensor::zeros(xt.shape(), xt.dtype())
            .map(Value::Tensor)
            .map_err(tensor_err);
    }
    let scaled = binary(Prim::Div, x, &Value::Float(1.0 - rate))?;
    Prim::Where.eval(&[mask.clone(), scaled, Value::Float(0.0)])
}

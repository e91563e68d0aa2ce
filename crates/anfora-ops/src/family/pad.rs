//! Padding: numpy's `pad` in its modes 'constant', 'edge', 'reflect' and 'symmetric', PyTorch's
//! 2-D paddings, and their adjoints.

use anfora_tensor::{PadMode, Scalar, Tensor, pad_widths, tuple_repr};

use crate::abs::{Abs, Rule, RuleError, TensorAbs, err, to_value};
use crate::args::tensor_operand;
use crate::args::{int_arg, need_tensor, shaped_like_x, tensor_abs};
use crate::constant::Const;
use std::io::Write;

use crate::def::{Backward, PrimDef, Py, first, primitives};
use crate::emit::{Call, Emit, Grads, unbroadcast};
use crate::ids::NodeId;
use crate::prim::Prim;
use crate::pynum::{PyErr, tensor, type_error, value_error};
use crate::value::{OpResult, Value};

/// The arguments that choose a padding's mode: known at compile time.
const MODE_ARG: &[(usize, &str)] = &[(3, "mode")];

primitives! {
    family pad = 8;

    /// `ops.pad(x, pad_width, mode='constant', constant_values=None)`: numpy's `pad` in its
    /// modes 'constant' (`constant_values`, `None` meaning not given: 0), 'edge', 'reflect'
    /// and 'symmetric'. The mode must be known at compile time.
    Pad = PrimDef::new("Pad", "(x, pad_width, mode='constant', constant_values=None)",
        |_, a| pad_abs(a), pad, Backward::Rule(pad_back))
        .tensor_kernel().called(&[Py::Op("pad")]).with_constant_args(&[(2, "mode")]);
    /// `PadGrad(d, x, pad_width, mode)`: the adjoint of `Pad` in `x` (the interior of `d` in
    /// the constant mode; each element of `d` added into the element it copies in the others).
    /// Linear in d: the adjoint of the adjoint is the pad itself (zeros around in the constant
    /// mode).
    PadGrad = PrimDef::new("PadGrad", "(d, x, pad_width, mode)", |_, a| Ok(shaped_like_x(a)),
        pad_grad, first(|e, c| { let none = e.konst(Const::None);
            e.op(Prim::Pad, &[c.d, c.x[2], c.x[3], none])
        }))
        .tensor_kernel()
        .with_constant_args(MODE_ARG);
    /// `ops.reflection_pad2d(x, padding)`: PyTorch's `ReflectionPad2d` of (N, C, H, W) or
    /// (C, H, W) input, `padding` an int or `(left, right, top, bottom)`, each less than the
    /// size of its axis.
    ReflectionPad2D = pad2d_primitive("ReflectionPad2D", &[Py::Op("reflection_pad2d")]);
    /// `ops.replication_pad2d(x, padding)`: PyTorch's `ReplicationPad2d` (numpy's 'edge').
    ReplicationPad2D = pad2d_primitive("ReplicationPad2D", &[Py::Op("replication_pad2d")]);
    /// `ops.zero_pad2d(x, padding)`: PyTorch's `ZeroPad2d`.
    ZeroPad2D = pad2d_primitive("ZeroPad2D", &[Py::Op("zero_pad2d")]);
    /// `Pad2DGrad(d, x, padding, mode)`: the adjoint in `x` of the 2-D padding of `mode`
    /// ('reflect', 'edge' or 'constant').
    Pad2DGrad = PrimDef::new("Pad2DGrad", "(d, x, padding, mode)", |_, a| Ok(shaped_like_x(a)),
        pad2d_grad, first(pad2d_grad_back))
        .tensor_kernel().with_constant_args(MODE_ARG);
}

/// A 2-D padding of (N, C, H, W) or (C, H, W) input, of its mode.
const fn pad2d_primitive(name: &'static str, python: &'static [Py]) -> PrimDef {
    PrimDef::new(name, "(x, padding)", pad2d_abs, pad2d, first(pad2d_back))
        .tensor_kernel()
        .called(python)
}

fn pad(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.pad")?;
    let (widths, mode, value) = pad_args(x, &a[1], &a[2], &a[3])?;
    tensor(x.pad(&widths, mode, value)).map(Value::Tensor)
}

fn pad_grad(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let d = need_tensor(&a[0], "PadGrad")?;
    let x = need_tensor(&a[1], "PadGrad")?;
    let widths = tensor(pad_widths(&pad_width_rows(&a[2])?, x.ndim()))?;
    tensor(Tensor::pad_grad(d, x.shape(), &widths, pad_mode(&a[3])?)).map(Value::Tensor)
}

fn pad2d_grad(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let d = need_tensor(&a[0], "Pad2DGrad")?;
    let x = need_tensor(&a[1], "Pad2DGrad")?;
    let mode = pad_mode(&a[3])?;
    let widths = pad2d_widths(x.shape(), &a[2], mode)?;
    tensor(Tensor::pad_grad(d, x.shape(), &widths, mode)).map(Value::Tensor)
}

/// The three 2-D paddings.
const PAD2D: [Prim; 3] = [
    Prim::ReflectionPad2D,
    Prim::ReplicationPad2D,
    Prim::ZeroPad2D,
];

fn pad2d(p: Prim, args: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&args[0], &p.python_name())?;
    let mode = pad2d_mode(p).expect("a 2-D padding");
    let widths = pad2d_widths(x.shape(), &args[1], mode)?;
    tensor(x.pad(&widths, mode, Scalar::Int(0))).map(Value::Tensor)
}

fn pad_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let (x, d) = (c.x, c.d);
    let mut g = c.none();
    let inner = e.op(Prim::PadGrad, &[d, x[0], x[1], x[2]]);
    if c.need(0) {
        g[0] = Some(unbroadcast(e, inner, x[0]));
    }
    // The padding value's sensitivity: everything outside the interior (in the other modes
    // every element of `d` flows back into `x`, so this is zero, and `constant_values` is
    // None there anyway).
    if c.need(3) {
        let none = e.konst(Const::None);
        let no = e.konst(Const::Bool(false));
        let all = e.op(Prim::ReduceSum, &[d, none, no]);
        let kept = e.op(Prim::ReduceSum, &[inner, none, no]);
        let t = e.op(Prim::Sub, &[all, kept]);
        g[3] = Some(unbroadcast(e, t, x[3]));
    }
    Some(g)
}

/// Each 2-D padding is a pad of its mode.
fn pad2d_back(e: &mut dyn Emit, c: &Call) -> NodeId {
    let mode = pad2d_mode(c.prim).expect("a 2-D padding").name();
    let mode = e.konst(Const::str(mode));
    let t = e.op(Prim::Pad2DGrad, &[c.d, c.x[0], c.x[1], mode]);
    unbroadcast(e, t, c.x[0])
}

/// Linear in d: its adjoint is the 2-D padding of its mode.
fn pad2d_grad_back(e: &mut dyn Emit, c: &Call) -> NodeId {
    let (x, d) = (c.x, c.d);
    let forward = match e.constant(x[3]) {
        Some(Const::Str(m)) => PAD2D
            .into_iter()
            .find(|&p| pad2d_mode(p).is_some_and(|mode| mode.name() == &*m)),
        _ => None,
    };
    match forward {
        Some(f) => e.op(f, &[d, x[2]]),
        // The rule above always gives the mode as a constant; a mode known only at run
        // time chooses the padding then.
        None => {
            let (r, ed) = (e.konst(Const::str("reflect")), e.konst(Const::str("edge")));
            let is_reflect = e.op(Prim::Eq, &[x[3], r]);
            let is_edge = e.op(Prim::Eq, &[x[3], ed]);
            let [kr, ke, kz] = PAD2D.map(|f| e.konst(Const::Prim(f)));
            let other = e.op(Prim::Switch, &[is_edge, ke, kz]);
            let f = e.op(Prim::Switch, &[is_reflect, kr, other]);
            e.call(f, &[d, x[2]])
        }
    }
}

/// `pad_width` as nested ints (a scalar is one row of one).
fn pad_width_rows(v: &Value) -> Result<Vec<Vec<i64>>, PyErr> {
    let bad = || type_error("ops.pad() expects pad_width as an int or (nested) tuples of ints");
    match v {
        Value::Tuple(items) | Value::List(items) => {
            if items.iter().all(|i| i.as_index().is_some()) {
                return Ok(vec![items.iter().map(int_arg).collect::<Result<_, _>>()?]);
            }
            items
                .iter()
                .map(|row| match row {
                    Value::Tuple(r) | Value::List(r) => r.iter().map(int_arg).collect(),
                    other => other.as_index().map(|i| vec![i]).ok_or_else(bad),
                })
                .collect()
        }
        other => other.as_index().map(|i| vec![vec![i]]).ok_or_else(bad),
    }
}

/// `ops.pad`'s mode: a str naming one of the modes anfora implements (numpy's message for a
/// mode numpy does not know either).
fn pad_mode(v: &Value) -> Result<PadMode, PyErr> {
    let name = crate::value::to_str(v);
    if let (Value::Str(_), Some(mode)) = (v, PadMode::from_name(&name)) {
        return Ok(mode);
    }
    const NUMPY_ONLY: [&str; 7] = [
        "wrap",
        "empty",
        "linear_ramp",
        "maximum",
        "mean",
        "median",
        "minimum",
    ];
    if matches!(v, Value::Str(_)) && NUMPY_ONLY.contains(&name.as_str()) {
        return Err(value_error(format!(
            "mode '{name}' is not supported by ops.pad (its modes are 'constant', 'edge', \
             'reflect' and 'symmetric')"
        )));
    }
    Err(value_error(format!("mode '{name}' is not supported")))
}

/// The checked arguments of `ops.pad(x, pad_width, mode, constant_values)`: the widths, the
/// mode and the padding value (numpy accepts `constant_values` in the constant mode only;
/// `None` is "not given", 0 there).
fn pad_args(
    x: &Tensor,
    width: &Value,
    mode: &Value,
    value: &Value,
) -> Result<(Vec<[usize; 2]>, PadMode, anfora_tensor::Scalar), PyErr> {
    let widths = tensor(pad_widths(&pad_width_rows(width)?, x.ndim()))?;
    let mode = pad_mode(mode)?;
    let value = match (mode, value) {
        (_, Value::None) => anfora_tensor::Scalar::Int(0),
        (PadMode::Constant, Value::Tensor(t)) if t.numel() == 1 => tensor(t.item())?,
        (PadMode::Constant, v) => v.as_scalar().ok_or_else(|| {
            type_error(format!(
                "ops.pad() expects a number as its constant_values, got {}",
                v.type_name()
            ))
        })?,
        (mode, _) => {
            return Err(value_error(format!(
                "unsupported keyword arguments for mode '{}': {{'constant_values'}}",
                mode.name()
            )));
        }
    };
    Ok((widths, mode, value))
}

/// The mode of a 2-D padding primitive (`Pad2DGrad` names it).
fn pad2d_mode(p: Prim) -> Option<PadMode> {
    match p {
        Prim::ReflectionPad2D => Some(PadMode::Reflect),
        Prim::ReplicationPad2D => Some(PadMode::Edge),
        Prim::ZeroPad2D => Some(PadMode::Constant),
        _ => None,
    }
}

/// PyTorch's 2-D padding of an (N, C, H, W) or (C, H, W) tensor of shape `x` as numpy's pad
/// widths: `padding` an int or `(left, right, top, bottom)`; reflection needs each padding
/// less than the size of its axis.
fn pad2d_widths(x: &[usize], padding: &Value, mode: PadMode) -> Result<Vec<[usize; 2]>, PyErr> {
    let op = match mode {
        PadMode::Reflect => "reflection_pad2d",
        PadMode::Edge => "replication_pad2d",
        _ => "zero_pad2d",
    };
    let bad = || {
        type_error(format!(
            "ops.{op}() expects padding as an int or a tuple of 4 ints (left, right, top, \
             bottom), got {}",
            padding.type_name()
        ))
    };
    let pads: Vec<i64> = match padding {
        Value::Tuple(items) | Value::List(items) => {
            let pads = items
                .iter()
                .map(|v| v.as_index().ok_or_else(bad))
                .collect::<Result<Vec<_>, _>>()?;
            if pads.len() != 4 {
                return Err(value_error(format!(
                    "{op}: padding must be an int or 4 ints (left, right, top, bottom), got {}",
                    pads.len()
                )));
            }
            pads
        }
        v => vec![v.as_index().ok_or_else(bad)?; 4],
    };
    if !matches!(x.len(), 3 | 4) {
        return Err(value_error(format!(
            "{op}: expected a 4-D input (N, C, H, W) or a 3-D one (C, H, W), got shape {}",
            tuple_repr(x)
        )));
    }
    if pads.iter().any(|&p| p < 0) {
        return Err(value_error(format!(
            "{op}: padding must be non-negative, got ({}, {}, {}, {})",
            pads[0], pads[1], pads[2], pads[3]
        )));
    }
    let (h, w) = (x.len() - 2, x.len() - 1);
    if mode == PadMode::Reflect {
        for (axis, pair, what) in [(w, &pads[..2], "width"), (h, &pads[2..], "height")] {
            if pair.iter().any(|&p| p as u64 >= x[axis] as u64) {
                return Err(value_error(format!(
                    "{op}: padding ({}, {}) of the {what} must be less than its size {} \
                     (axis {axis} of shape {})",
                    pair[0],
                    pair[1],
                    x[axis],
                    tuple_repr(x)
                )));
            }
        }
    }
    let mut widths = vec![[0, 0]; x.len()];
    widths[h] = [pads[2] as usize, pads[3] as usize];
    widths[w] = [pads[0] as usize, pads[1] as usize];
    Ok(widths)
}

// ---- abstract values ----------------------------------------------------------------------

/// `pad_width` as nested ints, `None` when not known.
fn pad_rows(a: &Abs) -> Option<Vec<Vec<i64>>> {
    match a {
        Abs::Tuple(items) | Abs::List(items) => {
            if let Some(row) = items.iter().map(Abs::as_i64).collect::<Option<Vec<_>>>() {
                return Some(vec![row]);
            }
            items
                .iter()
                .map(|r| match r {
                    Abs::Tuple(r) | Abs::List(r) => r.iter().map(Abs::as_i64).collect(),
                    other => other.as_i64().map(|i| vec![i]),
                })
                .collect()
        }
        other => other.as_i64().map(|i| vec![vec![i]]),
    }
}

/// numpy's refusal to extend an empty axis in the modes other than 'constant'.
fn extends_empty_axis(
    shape: &[Option<usize>],
    widths: &[[usize; 2]],
    mode: PadMode,
) -> Result<(), RuleError> {
    if mode == PadMode::Constant {
        return Ok(());
    }
    match (0..shape.len()).find(|&d| shape[d] == Some(0) && widths[d] != [0, 0]) {
        Some(axis) => Err(err(format!(
            "can't extend empty axis {axis} using modes other than 'constant' or 'empty'"
        ))),
        None => Ok(()),
    }
}

fn padded(x: &TensorAbs, widths: &[[usize; 2]]) -> Abs {
    let shape = x
        .shape
        .iter()
        .zip(widths)
        .map(|(d, w)| d.and_then(|d| d.checked_add(w[0])?.checked_add(w[1])))
        .collect();
    tensor_abs(x.dtype, shape)
}

/// `ops.pad(x, pad_width, mode, constant_values)`: the errors in the order the VM checks
/// (widths, mode, `constant_values`, an empty axis). The mode is a constant by now (the
/// engine refuses one known only at run time, E0304).
fn pad_abs(args: &[Abs]) -> Rule {
    let x = tensor_operand!(&args[0]);
    // Widths known only at run time keep the rank.
    let widths = match pad_rows(&args[1]) {
        Some(rows) => {
            Some(pad_widths(&rows, x.shape.len()).map_err(|e| err(format!("pad: {}", e.message)))?)
        }
        None => None,
    };
    let mode = match to_value(&args[2]) {
        Some(v) => Some(pad_mode(&v).map_err(|e| err(format!("pad: {}", e.1)))?),
        None => None,
    };
    match (mode, &args[3]) {
        (_, Abs::None | Abs::Any) => {}
        (Some(PadMode::Constant) | None, v) => {
            if !(v.is_number() || matches!(v, Abs::Tensor(t) if t.numel() == Some(1))) {
                // A TypeError at run time.
                return Ok(Abs::Bottom);
            }
        }
        (Some(mode), _) => {
            return Err(err(format!(
                "pad: unsupported keyword arguments for mode '{}': {{'constant_values'}}",
                mode.name()
            )));
        }
    }
    let Some(widths) = widths else {
        return Ok(tensor_abs(x.dtype, vec![None; x.shape.len()]));
    };
    if let Some(mode) = mode {
        extends_empty_axis(&x.shape, &widths, mode).map_err(|e| err(format!("pad: {}", e.0)))?;
    }
    Ok(padded(x, &widths))
}

/// `ops.reflection_pad2d`, `ops.replication_pad2d` and `ops.zero_pad2d`, checked by the VM's
/// own function (an unknown size passes the reflection check).
fn pad2d_abs(p: Prim, args: &[Abs]) -> Rule {
    let x = tensor_operand!(&args[0]);
    let mode = pad2d_mode(p).expect("a 2-D padding");
    let Some(padding) = to_value(&args[1]) else {
        if !matches!(x.shape.len(), 3 | 4) {
            // Refused at run time, whatever the padding.
            return Ok(Abs::Bottom);
        }
        let mut shape = x.shape.clone();
        let n = shape.len();
        shape[n - 2] = None;
        shape[n - 1] = None;
        return Ok(tensor_abs(x.dtype, shape));
    };
    let sizes: Vec<usize> = x.shape.iter().map(|d| d.unwrap_or(usize::MAX)).collect();
    let widths = match pad2d_widths(&sizes, &padding, mode) {
        Ok(w) => w,
        // The message names the shape: with a size known only at run time, the error is
        // raised then (it does not depend on that size, which passes the reflection check).
        Err((kind, msg)) if kind != "TypeError" && x.shape.iter().all(Option::is_some) => {
            return Err(err(msg));
        }
        Err(_) => return Ok(Abs::Bottom),
    };
    extends_empty_axis(&x.shape, &widths, mode)?;
    Ok(padded(x, &widths))
}

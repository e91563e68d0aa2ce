//! numpy's array functions (`ops.argmax`, `ops.one_hot`, `ops.squeeze`, ...): argument
//! checking with Python's exception kinds and the calls of the tensor library.

use crate::Prim;
use anfora_tensor::{DType, PadMode, SplitSpec, Tensor, pad_widths, tuple_repr};

use crate::ops::{
    OpResult, dtype_arg, int_arg, int_list, need_tensor, shape_arg, tensor, truth, type_error,
    value_error,
};
use crate::pynum::PyErr;
use crate::value::Value;

/// An axis argument: `None`, an int, or a tuple/list of ints.
pub fn axes_arg(v: &Value) -> Result<Option<Vec<i64>>, PyErr> {
    Ok(match v {
        Value::None => None,
        Value::Tuple(items) | Value::List(items) => {
            Some(items.iter().map(int_arg).collect::<Result<_, _>>()?)
        }
        other => Some(vec![int_arg(other)?]),
    })
}

/// A tuple or list of tensors.
fn tensors_arg(v: &Value, name: &str) -> Result<Vec<Tensor>, PyErr> {
    let items = match v {
        Value::Tuple(items) | Value::List(items) => items,
        other => {
            return Err(type_error(format!(
                "{name}() expects a tuple or list of tensors, got {}",
                other.type_name()
            )));
        }
    };
    items
        .iter()
        .map(|t| need_tensor(t, name).cloned())
        .collect()
}

/// `ops.split`'s second argument: a number of sections or a sequence of indices.
fn split_spec(v: &Value) -> Result<SplitSpec, PyErr> {
    Ok(match v {
        Value::Tuple(items) | Value::List(items) => {
            SplitSpec::Indices(items.iter().map(int_arg).collect::<Result<_, _>>()?)
        }
        other => SplitSpec::Sections(int_arg(other)?),
    })
}

/// The sensitivity `d` of a concatenation (`stacked`: of a stack) cut into one sensitivity
/// per input, each in its input's kind (`SumToShape`: zeros for integers).
/// Each tensor as a 1-d tensor of its elements.
fn flattened(ts: &[Tensor]) -> Result<Vec<Tensor>, PyErr> {
    ts.iter()
        .map(|t| tensor(t.reshape(&[t.numel() as i64])))
        .collect()
}

fn unjoin(d: &Value, xs: &Value, axis: &Value, stacked: bool) -> OpResult {
    let name = if stacked { "StackGrad" } else { "ConcatGrad" };
    let items = match xs {
        Value::Tuple(items) | Value::List(items) => items.clone(),
        other => {
            return Err(type_error(format!(
                "{name}: expected a tuple of tensors, got {}",
                other.type_name()
            )));
        }
    };
    if !stacked && matches!(axis, Value::None) {
        // concatenate(axis=None) joined the tensors flattened: cut `d` at their sizes and
        // give each part its tensor's shape.
        let dt = need_tensor(d, name)?;
        let mut at = 0i64;
        let mut cuts = Vec::new();
        for t in items.iter().take(items.len().saturating_sub(1)) {
            at += need_tensor(t, name)?.numel() as i64;
            cuts.push(at);
        }
        let parts = tensor(dt.split(&SplitSpec::Indices(cuts), 0))?;
        let mut out = Vec::with_capacity(parts.len());
        for (part, x) in parts.into_iter().zip(items.iter()) {
            let shape: Vec<i64> = need_tensor(x, name)?
                .shape()
                .iter()
                .map(|&n| n as i64)
                .collect();
            out.push(Value::Tensor(tensor(part.reshape(&shape))?));
        }
        return Ok(Value::tuple(out));
    }
    let axis = int_arg(axis)?;
    let dt = need_tensor(d, name)?;
    let spec = if stacked {
        SplitSpec::Sections(items.len() as i64)
    } else {
        let ax = if axis < 0 {
            axis + dt.ndim() as i64
        } else {
            axis
        };
        let mut at = 0i64;
        let mut cuts = Vec::new();
        for t in items.iter().take(items.len().saturating_sub(1)) {
            let n = need_tensor(t, name)?
                .shape()
                .get(ax as usize)
                .copied()
                .unwrap_or(0);
            at += n as i64;
            cuts.push(at);
        }
        SplitSpec::Indices(cuts)
    };
    let parts = tensor(dt.split(&spec, axis))?;
    let mut out = Vec::with_capacity(parts.len());
    for (part, x) in parts.into_iter().zip(items.iter()) {
        let part = if stacked {
            tensor(part.squeeze(Some(&[axis])))?
        } else {
            part
        };
        out.push(crate::grad_ops::sum_to_shape(&Value::Tensor(part), x)?);
    }
    Ok(Value::tuple(out))
}

/// `take`'s indices: an integer tensor, an int, or nested lists of ints.
fn indices_arg(v: &Value) -> Result<Tensor, PyErr> {
    match v {
        Value::Tensor(t) => Ok(t.clone()),
        Value::Tuple(_) | Value::List(_) | Value::Int(_) | Value::Bool(_) => {
            let t = crate::ops::call_prim(
                Prim::MakeTensor,
                &[v.clone(), Value::None],
                &mut std::io::sink(),
            )?
            .into_tensor()
            .map_err(|_| type_error("ops.take() expects integer indices"))?;
            // `[]` holds no number: numpy's take reads it as no indices, not as floats.
            if t.numel() == 0 && t.dtype().is_float() {
                return tensor(t.try_cast(DType::I64));
            }
            Ok(t)
        }
        other => Err(type_error(format!(
            "ops.take() expects integer indices, got {}",
            other.type_name()
        ))),
    }
}

fn axis_opt(v: &Value) -> Result<Option<i64>, PyErr> {
    Ok(match v {
        Value::None => None,
        other => Some(int_arg(other)?),
    })
}

/// `pad_width` as nested ints (a scalar is one row of one).
pub fn pad_width_rows(v: &Value) -> Result<Vec<Vec<i64>>, PyErr> {
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
pub fn pad_mode(v: &Value) -> Result<PadMode, PyErr> {
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
pub fn pad_args(
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
pub fn pad2d_mode(p: Prim) -> Option<PadMode> {
    match p {
        Prim::ReflectionPad2D => Some(PadMode::Reflect),
        Prim::ReplicationPad2D => Some(PadMode::Edge),
        Prim::ZeroPad2D => Some(PadMode::Constant),
        _ => None,
    }
}

/// The 2-D padding primitive of a mode.
pub fn pad2d_prim(mode: PadMode) -> Option<Prim> {
    match mode {
        PadMode::Reflect => Some(Prim::ReflectionPad2D),
        PadMode::Edge => Some(Prim::ReplicationPad2D),
        PadMode::Constant => Some(Prim::ZeroPad2D),
        PadMode::Symmetric => None,
    }
}

/// PyTorch's 2-D padding of an (N, C, H, W) or (C, H, W) tensor of shape `x` as numpy's pad
/// widths: `padding` an int or `(left, right, top, bottom)`; reflection needs each padding
/// less than the size of its axis.
pub fn pad2d_widths(x: &[usize], padding: &Value, mode: PadMode) -> Result<Vec<[usize; 2]>, PyErr> {
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

/// `ops.index_select`'s index: a 1-D int32 or int64 tensor.
fn select_index(v: &Value) -> Result<&Tensor, PyErr> {
    let Value::Tensor(t) = v else {
        return Err(type_error(format!(
            "ops.index_select() expects index as a 1-D int32 or int64 tensor, got {}",
            v.type_name()
        )));
    };
    if !matches!(t.dtype(), DType::I32 | DType::I64) {
        return Err(type_error(format!(
            "ops.index_select() expects an int32 or int64 index, got {}",
            t.dtype()
        )));
    }
    if t.ndim() != 1 {
        return Err(value_error(format!(
            "ops.index_select() expects a 1-D index, got shape {}",
            tuple_repr(t.shape())
        )));
    }
    Ok(t)
}

/// The array primitives, arguments bound to their signatures.
pub fn call(p: Prim, args: &[Value]) -> OpResult {
    let name = p.python_name();
    let t = match p {
        Prim::ArgMax | Prim::ArgMin => {
            let x = need_tensor(&args[0], &name)?;
            let axis = match &args[1] {
                Value::None => None,
                v => Some(int_arg(v)?),
            };
            let keep = truth(&args[2])?;
            if p == Prim::ArgMax {
                Tensor::argmax(x, axis, keep)
            } else {
                Tensor::argmin(x, axis, keep)
            }
        }
        Prim::OneHot => {
            let idx = need_tensor(&args[0], &name)?;
            let depth = int_arg(&args[1])?;
            let dtype = dtype_arg(&args[2], Some(DType::F32))?.unwrap_or(DType::F32);
            Tensor::one_hot(idx, depth, dtype)
        }
        Prim::Squeeze => {
            let x = need_tensor(&args[0], &name)?;
            x.squeeze(axes_arg(&args[1])?.as_deref())
        }
        Prim::ExpandDims => {
            let x = need_tensor(&args[0], &name)?;
            let axes = axes_arg(&args[1])?
                .ok_or_else(|| type_error("ops.expand_dims() needs an axis, not None"))?;
            x.expand_dims(&axes)
        }
        Prim::BroadcastTo => {
            let x = need_tensor(&args[0], &name)?;
            x.broadcast_to(&shape_arg(&args[1])?)
        }
        // numpy's concatenate with axis=None joins the tensors flattened.
        Prim::Concat if matches!(args[1], Value::None) => {
            let ts = tensors_arg(&args[0], &name)?;
            Tensor::concat(&flattened(&ts)?, 0)
        }
        Prim::Concat | Prim::Stack => {
            let ts = tensors_arg(&args[0], &name)?;
            let axis = int_arg(&args[1])?;
            if p == Prim::Concat {
                Tensor::concat(&ts, axis)
            } else {
                Tensor::stack(&ts, axis)
            }
        }
        Prim::Split => {
            let x = need_tensor(&args[0], &name)?;
            let parts = tensor(x.split(&split_spec(&args[1])?, int_arg(&args[2])?))?;
            return Ok(Value::tuple(parts.into_iter().map(Value::Tensor).collect()));
        }
        Prim::Take => {
            let x = need_tensor(&args[0], "ops.take")?;
            Tensor::take(x, &indices_arg(&args[1])?, axis_opt(&args[2])?)
        }
        Prim::TakeGrad => {
            let d = need_tensor(&args[0], "TakeGrad")?;
            let x = need_tensor(&args[1], "TakeGrad")?;
            Tensor::take_grad(d, x.shape(), &indices_arg(&args[2])?, axis_opt(&args[3])?)
        }
        Prim::Pad => {
            let x = need_tensor(&args[0], "ops.pad")?;
            let (widths, mode, value) = pad_args(x, &args[1], &args[2], &args[3])?;
            x.pad(&widths, mode, value)
        }
        Prim::PadGrad => {
            let d = need_tensor(&args[0], "PadGrad")?;
            let x = need_tensor(&args[1], "PadGrad")?;
            let widths = tensor(pad_widths(&pad_width_rows(&args[2])?, x.ndim()))?;
            Tensor::pad_grad(d, x.shape(), &widths, pad_mode(&args[3])?)
        }
        Prim::ReflectionPad2D | Prim::ReplicationPad2D | Prim::ZeroPad2D => {
            let x = need_tensor(&args[0], &name)?;
            let mode = pad2d_mode(p).expect("a 2-D padding");
            let widths = pad2d_widths(x.shape(), &args[1], mode)?;
            x.pad(&widths, mode, anfora_tensor::Scalar::Int(0))
        }
        Prim::Pad2DGrad => {
            let d = need_tensor(&args[0], "Pad2DGrad")?;
            let x = need_tensor(&args[1], "Pad2DGrad")?;
            let mode = pad_mode(&args[3])?;
            let widths = pad2d_widths(x.shape(), &args[2], mode)?;
            Tensor::pad_grad(d, x.shape(), &widths, mode)
        }
        Prim::Permute => {
            let x = need_tensor(&args[0], "ops.permute")?;
            if matches!(args[1], Value::None) {
                return Err(type_error("ops.permute() needs axes, not None"));
            }
            x.transpose(Some(&int_list(&args[1])?))
        }
        Prim::IndexSelect => {
            let x = need_tensor(&args[0], "ops.index_select")?;
            let axis = int_arg(&args[1])?;
            Tensor::take(x, select_index(&args[2])?, Some(axis))
        }
        Prim::ConcatGrad => return unjoin(&args[0], &args[1], &args[2], false),
        Prim::StackGrad => return unjoin(&args[0], &args[1], &args[2], true),
        other => {
            return Err(type_error(format!(
                "{} is not an array primitive",
                other.name()
            )));
        }
    };
    tensor(t).map(Value::Tensor)
}

//! numpy's array functions (`ops.argmax`, `ops.one_hot`, `ops.squeeze`, ...): argument
//! checking with Python's exception kinds and the calls of the tensor library.

use anfora_ir::Prim;
use anfora_tensor::{DType, SplitSpec, Tensor, pad_widths};

use crate::ops::{OpResult, dtype_arg, int_arg, need_tensor, shape_arg, tensor, truth, type_error};
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
        Prim::Pad | Prim::PadGrad => {
            let (x, width) = if p == Prim::Pad {
                (need_tensor(&args[0], "ops.pad")?, &args[1])
            } else {
                (need_tensor(&args[1], "PadGrad")?, &args[2])
            };
            let widths = tensor(pad_widths(&pad_width_rows(width)?, x.ndim()))?;
            if p == Prim::Pad {
                let value = match &args[2] {
                    Value::Tensor(t) if t.numel() == 1 => tensor(t.item())?,
                    v => v.as_scalar().ok_or_else(|| {
                        type_error(format!(
                            "ops.pad() expects a number as its value, got {}",
                            v.type_name()
                        ))
                    })?,
                };
                x.pad(&widths, value)
            } else {
                Tensor::pad_grad(need_tensor(&args[0], "PadGrad")?, x.shape(), &widths)
            }
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

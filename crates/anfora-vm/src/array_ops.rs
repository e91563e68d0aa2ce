//! numpy's array functions (`ops.argmax`, `ops.one_hot`, `ops.squeeze`, ...): argument
//! checking with Python's exception kinds and the calls of the tensor library.

use anfora_ir::Prim;
use anfora_tensor::{DType, Tensor};

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
        other => {
            return Err(type_error(format!(
                "{} is not an array primitive",
                other.name()
            )));
        }
    };
    tensor(t).map(Value::Tensor)
}

//! Primitive calls that own their operands: a tensor operand the program will not read again
//! arrives here by value, so an elementwise result can be written into its buffer instead of
//! a new one (when nothing else holds the tensor and the result has its shape and dtype); a
//! `Gemm` accumulates into its accumulator's buffer the same way.

use std::io::Write;

use crate::Prim;
use crate::Value;
use crate::ops::{self, OpResult, tensor_err};
use anfora_tensor::{BinaryOp, Tensor};

/// `x op y` for a binary operator or comparison.
pub fn binary(p: Prim, x: Value, y: Value) -> OpResult {
    let Some(op) = ops::tensor_op(p) else {
        return ops::binary(p, &x, &y);
    };
    let r = match (x.into_tensor(), y.into_tensor()) {
        (Ok(a), Ok(b)) => {
            // Addition and multiplication commute exactly: reuse whichever buffer is free.
            if !a.is_unique() && b.is_unique() && matches!(op, BinaryOp::Add | BinaryOp::Mul) {
                Tensor::binary_owned(op, b, &a)
            } else {
                Tensor::binary_owned(op, a, &b)
            }
        }
        (Ok(a), Err(s)) => match s.as_scalar() {
            Some(s) => Tensor::binary_scalar_owned(op, a, s, false),
            None => return ops::binary(p, &Value::Tensor(a), &s),
        },
        (Err(s), Ok(b)) => match s.as_scalar() {
            Some(s) => Tensor::binary_scalar_owned(op, b, s, true),
            None => return ops::binary(p, &s, &Value::Tensor(b)),
        },
        (Err(x), Err(y)) => return ops::binary(p, &x, &y),
    };
    r.map(Value::Tensor).map_err(tensor_err)
}

/// `p(args...)`; the arguments are consumed.
pub fn prim(p: Prim, args: &mut [Value], out: &mut dyn Write) -> OpResult {
    match args {
        [Value::Tensor(_)] => {
            if let Some(op) = ops::tensor_unary_op(p) {
                let t = std::mem::replace(&mut args[0], Value::None)
                    .into_tensor()
                    .map_err(|_| ops::type_error("expected a tensor"))?;
                return Tensor::unary_owned(op, t)
                    .map(Value::Tensor)
                    .map_err(tensor_err);
            }
        }
        [a, b]
            if (matches!(a, Value::Tensor(_)) || matches!(b, Value::Tensor(_)))
                && ops::tensor_op(p).is_some()
                && p != Prim::Divmod =>
        {
            let x = std::mem::replace(&mut args[0], Value::None);
            let y = std::mem::replace(&mut args[1], Value::None);
            return binary(p, x, y);
        }
        // The accumulator of a product: written in place when it is free and result-shaped.
        [a, b, c, ta, tb] if p == Prim::Gemm => {
            return ops::gemm(a, b, std::mem::replace(c, Value::None), ta, tb);
        }
        // The update written into the Parameter's own buffer when it is free.
        _ if p == Prim::Sgd => return crate::state::sgd_owned(args),
        _ => {}
    }
    ops::call_prim(p, args, out)
}

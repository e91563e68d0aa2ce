//! Primitive calls that own their operands: a tensor operand the program will not read again
//! arrives here by value, so an elementwise result can be written into its buffer instead of
//! a new one (when nothing else holds the tensor and the result has its shape and dtype), and
//! a primitive with a kernel of its own that consumes its operands (`Gemm`'s accumulator,
//! `sgd`'s Parameter) runs it. Which applies is the primitive's declaration (`Kernels`).

use std::io::Write;

use anfora_tensor::{BinaryOp, Tensor};

use crate::call::call_prim;
use crate::def::Kernels;
use crate::prim::Prim;
use crate::pynum::{tensor_err, type_error};
use crate::value::{OpResult, Value};

/// `x op y` for a binary operator or comparison.
pub fn binary(p: Prim, x: Value, y: Value) -> OpResult {
    let mut args = [x, y];
    if let Some(k) = crate::kernels::on_device(p, &args) {
        return k.call(&mut args, &mut std::io::sink());
    }
    let [x, y] = args;
    let Some(op) = p.def().kernels.binary_op() else {
        return p.eval(&[x, y]);
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
            None => return p.eval(&[Value::Tensor(a), s]),
        },
        (Err(s), Ok(b)) => match s.as_scalar() {
            Some(s) => Tensor::binary_scalar_owned(op, b, s, true),
            None => return p.eval(&[s, Value::Tensor(b)]),
        },
        (Err(x), Err(y)) => return p.eval(&[x, y]),
    };
    r.map(Value::Tensor).map_err(tensor_err)
}

/// `p(args...)`; the arguments are consumed.
pub fn prim(p: Prim, args: &mut [Value], out: &mut dyn Write) -> OpResult {
    if let Some(k) = crate::kernels::on_device(p, args) {
        return k.call(args, out);
    }
    match (p.def().kernels, &*args) {
        (Kernels::Unary(op), [Value::Tensor(_)]) => {
            let t = std::mem::replace(&mut args[0], Value::None)
                .into_tensor()
                .map_err(|_| type_error("expected a tensor"))?;
            Tensor::unary_owned(op, t)
                .map(Value::Tensor)
                .map_err(tensor_err)
        }
        (Kernels::Binary { .. }, [a, b])
            if matches!(a, Value::Tensor(_)) || matches!(b, Value::Tensor(_)) =>
        {
            let x = std::mem::replace(&mut args[0], Value::None);
            let y = std::mem::replace(&mut args[1], Value::None);
            binary(p, x, y)
        }
        (Kernels::Owned(run) | Kernels::Update(run), _) => run(p, args, out),
        _ => call_prim(p, args, out),
    }
}

//! softmax, log_softmax and logsumexp, composed of the crate's own reductions and elementwise
//! kernels (so their numerics are those of `ops.max`, `ops.exp`, `ops.sum`, `ops.log`),
//! stabilized by subtracting the maximum.

use super::{nn_float_dtype, value_error};
use crate::{Result, Tensor};

/// `axis` of an `ndim`-d tensor, or numpy's error prefixed with the operation.
fn nn_axis(op: &str, axis: i64, ndim: usize) -> Result<usize> {
    crate::shape::normalize_axis(axis, ndim).map_err(|e| value_error(op, e.message))
}

pub(crate) fn softmax(x: &Tensor, axis: i64, log: bool) -> Result<Tensor> {
    use crate::{BinaryOp, ReduceOp, UnaryOp};
    let op = if log { "log_softmax" } else { "softmax" };
    nn_float_dtype(op, &[x.dtype()])?;
    let ax = [nn_axis(op, axis, x.ndim())? as i64];
    if x.numel() == 0 {
        return Ok(x.clone());
    }
    let m = Tensor::reduce(ReduceOp::Max, x, Some(&ax), true)?;
    let z = Tensor::binary(BinaryOp::Sub, x, &m)?;
    let e = Tensor::unary(UnaryOp::Exp, &z)?;
    let s = Tensor::reduce(ReduceOp::Sum, &e, Some(&ax), true)?;
    if log {
        Tensor::binary(BinaryOp::Sub, &z, &Tensor::unary(UnaryOp::Log, &s)?)
    } else {
        Tensor::binary(BinaryOp::Div, &e, &s)
    }
}

pub(crate) fn logsumexp(x: &Tensor, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
    use crate::{BinaryOp, ReduceOp, Scalar, UnaryOp};
    let op = "logsumexp";
    nn_float_dtype(op, &[x.dtype()])?;
    if let Some(axes) = axes {
        for &a in axes {
            nn_axis(op, a, x.ndim())?;
        }
    }
    let sum = |t: &Tensor, keep: bool| Tensor::reduce(ReduceOp::Sum, t, axes, keep);
    if x.numel() == 0 {
        // A sum over nothing is 0: its log is -inf.
        return Tensor::unary(UnaryOp::Log, &sum(x, keepdims)?);
    }
    let m = Tensor::reduce(ReduceOp::Max, x, axes, true)?;
    // An infinite maximum is not subtracted (inf - inf would be NaN): all -inf gives -inf,
    // an inf gives inf.
    let finite = Tensor::binary_scalar(
        BinaryOp::Eq,
        &Tensor::binary(BinaryOp::Sub, &m, &m)?,
        Scalar::Int(0),
        false,
    )?;
    let m = Tensor::where_(&finite, &m, &Tensor::scalar(Scalar::Int(0), x.dtype())?)?;
    let e = Tensor::unary(UnaryOp::Exp, &Tensor::binary(BinaryOp::Sub, x, &m)?)?;
    let l = Tensor::unary(UnaryOp::Log, &sum(&e, keepdims)?)?;
    let shape: Vec<i64> = l.shape().iter().map(|&d| d as i64).collect();
    Tensor::binary(BinaryOp::Add, &l, &m.reshape(&shape)?)
}

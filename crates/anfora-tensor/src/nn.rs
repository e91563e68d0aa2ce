//! Neural-network kernels on float tensors: 2-D convolution and its two backward products
//! ([`conv`], with the patch layout in [`im2col`]), 2-D max and average pooling ([`pool`]) and
//! the softmax family ([`softmax`]). This module holds what they share: the element types, the
//! dtype rule and the dispatch on the operands' dtype.

use std::mem::MaybeUninit;

use crate::matmul::GemmElem;
use crate::shape_repr::tuple_repr;
use crate::{DType, ErrorKind, Result, Storage, Tensor, TensorError};

mod conv;
mod im2col;
mod pool;
mod softmax;

pub use conv::{Conv2dSpec, Padding2d, conv2d_output_shape};
pub(crate) use conv::{conv2d, conv2d_backprop_filter, conv2d_backprop_input};
pub use pool::{Pool2dSpec, pool2d_output_shape};
pub(crate) use pool::{PoolKind, avg_pool2d_grad, max_pool2d_grad, max_pool2d_grad_grad, pool2d};
pub(crate) use softmax::{logsumexp, softmax};

/// Products at least this large (multiply-adds) are worth spreading over threads.
const PARALLEL_WORK: usize = 1 << 18;

/// The element types the nn kernels run on.
pub(crate) trait Float:
    GemmElem
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::AddAssign
{
    /// `s` as float32 values, when `Self` is `f32` (for kernels written for that type only).
    fn as_f32(_: &[Self]) -> Option<&[f32]> {
        None
    }
    fn as_f32_mut(_: &mut [Self]) -> Option<&mut [f32]> {
        None
    }
    fn as_f32_uninit(_: &mut [MaybeUninit<Self>]) -> Option<&mut [MaybeUninit<f32>]> {
        None
    }
}
impl Float for f32 {
    fn as_f32(s: &[f32]) -> Option<&[f32]> {
        Some(s)
    }
    fn as_f32_mut(s: &mut [f32]) -> Option<&mut [f32]> {
        Some(s)
    }
    fn as_f32_uninit(s: &mut [MaybeUninit<f32>]) -> Option<&mut [MaybeUninit<f32>]> {
        Some(s)
    }
}
impl Float for f64 {}

fn value_error(op: &str, msg: impl std::fmt::Display) -> TensorError {
    TensorError::new(ErrorKind::Value, format!("{op}: {msg}"))
}

/// The common float dtype of the operands of an nn kernel: a TypeError for other dtypes or
/// operands of two dtypes (PyTorch's rule: no implicit promotion).
pub fn nn_float_dtype(op: &str, dtypes: &[DType]) -> Result<DType> {
    let first = dtypes[0];
    if let Some(bad) = dtypes.iter().find(|d| !d.is_float()) {
        return Err(TensorError::new(
            ErrorKind::Type,
            format!("{op}: expected float32 or float64 tensors, got {bad}"),
        ));
    }
    if let Some(other) = dtypes.iter().find(|&&d| d != first) {
        return Err(TensorError::new(
            ErrorKind::Type,
            format!("{op}: the tensors must have one dtype, got {first} and {other}"),
        ));
    }
    Ok(first)
}

/// `acc += other`, element by element.
pub(crate) fn add_into<T: Float>(acc: &mut [T], other: &[T]) {
    for (a, &b) in acc.iter_mut().zip(other) {
        *a += b;
    }
}

fn check_shape(op: &str, what: &str, got: &[usize], expected: &[usize]) -> Result<()> {
    if got != expected {
        return Err(value_error(
            op,
            format!(
                "{what} has shape {}, expected {}",
                tuple_repr(got),
                tuple_repr(expected)
            ),
        ));
    }
    Ok(())
}

/// Runs the kernel for the operands' float dtype.
fn dispatch2(
    a: &Tensor,
    b: &Tensor,
    f32_kernel: impl FnOnce(&[f32], &[f32]) -> Result<Vec<f32>>,
    f64_kernel: impl FnOnce(&[f64], &[f64]) -> Result<Vec<f64>>,
) -> Result<Storage> {
    Ok(match (a.data(), b.data()) {
        (Storage::F32(x), Storage::F32(y)) => Storage::F32(f32_kernel(x, y)?),
        (Storage::F64(x), Storage::F64(y)) => Storage::F64(f64_kernel(x, y)?),
        _ => unreachable!("dtypes checked by nn_float_dtype"),
    })
}

/// Runs a one-operand kernel for the operand's float dtype.
fn dispatch1(
    op: &str,
    a: &Tensor,
    f32_kernel: impl FnOnce(&[f32]) -> Result<Vec<f32>>,
    f64_kernel: impl FnOnce(&[f64]) -> Result<Vec<f64>>,
) -> Result<Storage> {
    nn_float_dtype(op, &[a.dtype()])?;
    Ok(match a.data() {
        Storage::F32(x) => Storage::F32(f32_kernel(x)?),
        Storage::F64(x) => Storage::F64(f64_kernel(x)?),
        _ => unreachable!("dtype checked by nn_float_dtype"),
    })
}

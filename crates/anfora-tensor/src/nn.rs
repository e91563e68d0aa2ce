//! Neural-network kernels on float tensors: 2-D convolution and its two backward products
//! ([`conv`], with the patch layout in [`im2col`]), 2-D max and average pooling ([`pool`]) and
//! the softmax family ([`softmax`]). This module holds what they share: the element types, the
//! dtype rule and the dispatch on the operands' dtype.

use std::mem::MaybeUninit;

use crate::matmul::GemmElem;
use crate::shape_repr::tuple_repr;
use crate::{DType, ErrorKind, Result, TensorError};

mod conv;
mod geometry;
mod im2col;
mod pool;
mod qconv;
mod softmax;

pub(crate) use conv::{Wrt, conv2d, conv2d_backprop};
pub use geometry::{Conv2dSpec, Padding2d, conv2d_output_shape};
#[cfg(target_arch = "x86_64")]
pub use pool::{Pool2dSpec, pool2d_output_shape};
pub(crate) use pool::{PoolKind, avg_pool2d_grad, max_pool2d_grad, max_pool2d_grad_grad, pool2d};
pub(crate) use qconv::{max_pool_u8, quant_conv2d};
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

/// A ValueError unless both values of a pair (`what`: the stride, ...) are positive.
fn check_positive(op: &str, what: &str, [a, b]: [usize; 2]) -> Result<()> {
    if a == 0 || b == 0 {
        return Err(value_error(
            op,
            format!("{what} must be positive, got ({a}, {b})"),
        ));
    }
    Ok(())
}

/// The dimensions of an image input, `(N, C, H, W)` or unbatched `(C, H, W)`: the batch size
/// (`None` when unbatched), the channels, the height and the width.
fn image_dims(op: &str, x: &[usize]) -> Result<(Option<usize>, usize, usize, usize)> {
    match *x {
        [n, c, h, w] => Ok((Some(n), c, h, w)),
        [c, h, w] => Ok((None, c, h, w)),
        _ => Err(value_error(
            op,
            format!(
                "expected a 4-D input (N, C, H, W) or a 3-D one (C, H, W), got shape {}",
                tuple_repr(x)
            ),
        )),
    }
}

/// The tensor of shape `$shape` that `$kernel` computes: an expression in the operands `$t`
/// (tensors of one float dtype, as [`nn_float_dtype`] checked), each bound to its elements,
/// written once and compiled for float32 and for float64. `$shape` is read after the kernel ran.
macro_rules! float_kernel {
    ($shape:expr; $($t:ident),+ => $kernel:expr) => {{
        use $crate::Storage;
        let storage = match ($($t.try_data()?,)+) {
            ($(Storage::F32($t),)+) => Storage::F32($kernel?),
            ($(Storage::F64($t),)+) => Storage::F64($kernel?),
            _ => unreachable!("dtypes checked by nn_float_dtype"),
        };
        $crate::Tensor::from_storage(storage, $shape)
    }};
}
use float_kernel;

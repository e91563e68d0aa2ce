//! Neural-network kernels: convolution, pooling and the softmax family.

use crate::nn::{self, PoolKind, Wrt};
use crate::{Conv2dSpec, Pool2dSpec, Result, Tensor, narrow};

impl Tensor {
    /// `ops.conv2d`: the 2-D convolution (cross-correlation, as in PyTorch) of `x` (N, C, H, W)
    /// or unbatched (C, H, W) with `w` (O, C/groups, KH, KW), both float32 or both float64.
    /// Errors: TypeError for other or mixed dtypes, ValueError for ranks, channels, groups and
    /// sizes that do not fit (see [`conv2d_output_shape`]).
    pub fn conv2d(x: &Tensor, w: &Tensor, spec: &Conv2dSpec) -> Result<Tensor> {
        on_two(x, w, |x, w| nn::conv2d(x, w, spec))
    }
    /// The gradient of [`Tensor::conv2d`] with respect to its input of shape `input_shape`,
    /// for the output sensitivity `d` (the transposed convolution of `d` with `w`).
    pub fn conv2d_backprop_input(
        d: &Tensor,
        w: &Tensor,
        input_shape: &[usize],
        spec: &Conv2dSpec,
    ) -> Result<Tensor> {
        on_two(d, w, |d, w| {
            nn::conv2d_backprop(Wrt::Input, d, w, input_shape, spec)
        })
    }
    /// The gradient of [`Tensor::conv2d`] with respect to its weight of shape `weight_shape`,
    /// for the input `x` and the output sensitivity `d`.
    pub fn conv2d_backprop_filter(
        d: &Tensor,
        x: &Tensor,
        weight_shape: &[usize],
        spec: &Conv2dSpec,
    ) -> Result<Tensor> {
        on_two(d, x, |d, x| {
            nn::conv2d_backprop(Wrt::Weight, d, x, weight_shape, spec)
        })
    }

    /// `ops.max_pool2d`: the largest element of each window of an (N, C, H, W) or (C, H, W)
    /// float tensor; the padding is `-inf` and at most half the kernel (PyTorch's rules).
    pub fn max_pool2d(x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
        if let Some(v) = x.as_u8_slice() {
            // A quantized activation: the largest byte (the order of bytes is the order of the
            // values they stand for).
            let shape = nn::pool2d_output_shape("max_pool2d", x.shape(), spec)?;
            return Tensor::from_u8(nn::max_pool_u8(v, x.shape(), spec, &shape), &shape);
        }
        on_one(x, |x| nn::pool2d(PoolKind::Max, x, spec))
    }
    /// `ops.avg_pool2d`: the mean of each window, the zero padding counted (PyTorch's
    /// `count_include_pad=True`): every window divides by the kernel's size.
    pub fn avg_pool2d(x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
        on_one(x, |x| nn::pool2d(PoolKind::Avg, x, spec))
    }
    /// The gradient of [`Tensor::max_pool2d`] of `x`: each window's sensitivity goes to the
    /// window's first largest element (row-major; a NaN counts as largest).
    pub fn max_pool2d_grad(d: &Tensor, x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
        on_two(d, x, |d, x| nn::max_pool2d_grad(d, x, spec))
    }
    /// The adjoint of [`Tensor::max_pool2d_grad`] in its sensitivity: `dd` (shaped like `x`)
    /// read at each window's first largest element of `x`.
    pub fn max_pool2d_grad_grad(dd: &Tensor, x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
        on_two(dd, x, |dd, x| nn::max_pool2d_grad_grad(dd, x, spec))
    }
    /// The gradient of [`Tensor::avg_pool2d`] of an input of shape `input_shape`.
    pub fn avg_pool2d_grad(d: &Tensor, input_shape: &[usize], spec: &Pool2dSpec) -> Result<Tensor> {
        on_one(d, |d| nn::avg_pool2d_grad(d, input_shape, spec))
    }

    /// `ops.softmax`: `exp(x - max) / sum(exp(x - max))` along `axis`, for float tensors.
    pub fn softmax(x: &Tensor, axis: i64) -> Result<Tensor> {
        on_one(x, |x| nn::softmax(x, axis, false))
    }
    /// `ops.log_softmax`: `(x - max) - log(sum(exp(x - max)))` along `axis`.
    pub fn log_softmax(x: &Tensor, axis: i64) -> Result<Tensor> {
        on_one(x, |x| nn::softmax(x, axis, true))
    }
    /// `ops.logsumexp` (scipy's): `log(sum(exp(x)))` over `axes` (`None`: all), computed as
    /// `max + log(sum(exp(x - max)))` with an infinite maximum left out; over no elements it is
    /// `-inf`.
    pub fn logsumexp(x: &Tensor, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        on_one(x, |x| nn::logsumexp(x, axes, keepdims))
    }
}

/// `kernel` on `x`, in float32 when `x` is half-precision (see [`narrow`]).
fn on_one(x: &Tensor, kernel: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<Tensor> {
    if x.is_narrow() {
        return narrow::via_wide(&[x], |t| kernel(&t[0]));
    }
    kernel(x)
}

/// `kernel` on `a` and `b`, in float32 when one is half-precision (see [`narrow`]).
fn on_two(
    a: &Tensor,
    b: &Tensor,
    kernel: impl FnOnce(&Tensor, &Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    if a.is_narrow() || b.is_narrow() {
        return narrow::via_wide(&[a, b], |t| kernel(&t[0], &t[1]));
    }
    kernel(a, b)
}

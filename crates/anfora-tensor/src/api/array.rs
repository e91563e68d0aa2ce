//! Reductions and numpy's array functions: arg-reductions, one-hot, take and pad.

use crate::{DType, PadMode, ReduceOp, Result, Scalar, Tensor, array_ops, narrow, promote, reduce};

impl Tensor {
    /// `axes = None` reduces everything. Negative axes count from the end.
    pub fn reduce(
        op: ReduceOp,
        a: &Tensor,
        axes: Option<&[i64]>,
        keepdims: bool,
    ) -> Result<Tensor> {
        if a.dtype() == DType::U8 && matches!(op, ReduceOp::Sum | ReduceOp::Prod) {
            return Err(crate::TensorError::new(
                crate::ErrorKind::Type,
                "numpy sums and multiplies uint8 in uint64, which anfora does not have: cast \
                 with astype('int64') first",
            ));
        }
        if a.is_narrow() {
            return narrow::via_wide(&[a], |w| reduce::reduce(op, &w[0], axes, keepdims));
        }
        reduce::reduce(op, a, axes, keepdims)
    }

    /// numpy's `argmax`: int64 indices of the first largest element along `axis` (`None`: of
    /// the flattened tensor); a NaN counts as largest. ValueError for an empty sequence.
    pub fn argmax(x: &Tensor, axis: Option<i64>, keepdims: bool) -> Result<Tensor> {
        array_ops::arg_reduce(&x.widen(), axis, keepdims, true)
    }
    /// numpy's `argmin`, as [`Tensor::argmax`].
    pub fn argmin(x: &Tensor, axis: Option<i64>, keepdims: bool) -> Result<Tensor> {
        array_ops::arg_reduce(&x.widen(), axis, keepdims, false)
    }
    /// `indices.shape + (depth,)` of `dtype`: 1 at each index, 0 elsewhere (a row of zeros for
    /// an index outside `[0, depth)`).
    pub fn one_hot(indices: &Tensor, depth: i64, dtype: DType) -> Result<Tensor> {
        if dtype.is_narrow() || indices.is_narrow() {
            return array_ops::one_hot(&indices.widen(), depth, DType::F32)?.try_cast(dtype);
        }
        array_ops::one_hot(indices, depth, dtype)
    }

    /// numpy's `take` (mode 'raise'): elements at integer `indices` along `axis` (`None`: of
    /// the flattened tensor); IndexError for an index out of bounds.
    pub fn take(x: &Tensor, indices: &Tensor, axis: Option<i64>) -> Result<Tensor> {
        if x.is_narrow() || indices.is_narrow() {
            let i = indices.widen();
            return narrow::via_wide(&[x], |w| array_ops::take(&w[0], &i, axis));
        }
        array_ops::take(x, indices, axis)
    }
    /// The gradient of [`Tensor::take`] from `x`'s shape: `d` added at every index taken.
    pub fn take_grad(
        d: &Tensor,
        x_shape: &[usize],
        indices: &Tensor,
        axis: Option<i64>,
    ) -> Result<Tensor> {
        if d.is_narrow() || indices.is_narrow() {
            let i = indices.widen();
            return narrow::via_wide(&[d], |w| array_ops::take_grad(&w[0], x_shape, &i, axis));
        }
        array_ops::take_grad(d, x_shape, indices, axis)
    }
    /// numpy's `pad` with `widths` from [`pad_widths`]: `value` (cast to the dtype) around
    /// the tensor in the constant mode, copies of its elements in the others.
    pub fn pad(&self, widths: &[[usize; 2]], mode: PadMode, value: Scalar) -> Result<Tensor> {
        if self.is_narrow() {
            // numpy stores the fill value in the array's dtype: round it there first.
            let value = promote::convert_scalar(value, self.dtype())?;
            return narrow::via_wide(&[self], |w| array_ops::pad(&w[0], widths, mode, value));
        }
        array_ops::pad(self, widths, mode, value)
    }
    /// The gradient of [`Tensor::pad`] (its adjoint in `x`), shaped like `x`: the interior of
    /// `d` in the constant mode; in the others, every element of `d` added into the element
    /// it copies.
    pub fn pad_grad(
        d: &Tensor,
        x_shape: &[usize],
        widths: &[[usize; 2]],
        mode: PadMode,
    ) -> Result<Tensor> {
        if d.is_narrow() {
            return narrow::via_wide(&[d], |w| array_ops::pad_grad(&w[0], x_shape, widths, mode));
        }
        array_ops::pad_grad(d, x_shape, widths, mode)
    }
}

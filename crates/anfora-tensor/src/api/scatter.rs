//! MindSpore's scatter ops.

use crate::scatter::ScatterOp;
use crate::{Result, Tensor, narrow, scatter};

impl Tensor {
    /// MindSpore's ScatterUpdate: numpy's `out = x.copy(); out[indices] = updates` along axis 0.
    ///
    /// `indices` is int32 or int64 of any shape (0-d included), each element an index along
    /// axis 0 (negative ones count from the end); `updates` has shape
    /// `indices.shape + x.shape[1:]` and a dtype that casts to x's safely or within its kind
    /// (bool -> int -> float). With duplicate indices the last one (row-major) wins. Errors:
    /// TypeError for other index dtypes or an unsafe cast, ValueError for a 0-d `x` or a shape
    /// mismatch, IndexError for an index out of range.
    pub fn scatter_update(&self, indices: &Tensor, updates: &Tensor) -> Result<Tensor> {
        self.scatter_with(ScatterOp::Update, indices, updates)
    }
    /// MindSpore's ScatterAdd: [`Tensor::scatter_update`] with `np.add.at` semantics, so
    /// duplicate indices accumulate (ints wrap). A TypeError for bool tensors.
    pub fn scatter_add(&self, indices: &Tensor, updates: &Tensor) -> Result<Tensor> {
        self.scatter_with(ScatterOp::Add, indices, updates)
    }
    /// MindSpore's ScatterNdUpdate: `indices` (int32 or int64) has shape `(..., K)` with
    /// `1 <= K <= x.ndim`; each K-tuple selects the slice `x[i0, ..., iK-1]`, overwritten by the
    /// matching slice of `updates`, whose shape is `indices.shape[:-1] + x.shape[K:]`. Last write
    /// wins; dtype, index and error rules as [`Tensor::scatter_update`].
    pub fn scatter_nd_update(&self, indices: &Tensor, updates: &Tensor) -> Result<Tensor> {
        self.scatter_with(ScatterOp::NdUpdate, indices, updates)
    }
    /// MindSpore's ScatterNdAdd: [`Tensor::scatter_nd_update`], accumulating (ints wrap). A
    /// TypeError for bool tensors.
    pub fn scatter_nd_add(&self, indices: &Tensor, updates: &Tensor) -> Result<Tensor> {
        self.scatter_with(ScatterOp::NdAdd, indices, updates)
    }

    /// `op`, half-precision operands computed in float32.
    fn scatter_with(&self, op: ScatterOp, indices: &Tensor, updates: &Tensor) -> Result<Tensor> {
        if self.is_narrow() || updates.is_narrow() || indices.is_narrow() {
            return narrow::scatter(op, self, indices, updates);
        }
        scatter::scatter(op, self, indices, updates)
    }
}

//! Elementwise ops, `where` and casts.

use std::sync::Arc;

use crate::{BinaryOp, DType, Result, Scalar, Tensor, UnaryOp, elementwise, narrow, promote};

impl Tensor {
    /// Tensor-tensor op with numpy broadcasting and promotion.
    pub fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        if a.is_narrow() || b.is_narrow() {
            return narrow::via_wide(&[a, b], |w| elementwise::binary(op, &w[0], &w[1]));
        }
        elementwise::binary(op, a, b)
    }
    /// Tensor-scalar op; the Python scalar is "weak" (NEP 50). `scalar_first` means `s op t`.
    pub fn binary_scalar(
        op: BinaryOp,
        t: &Tensor,
        s: Scalar,
        scalar_first: bool,
    ) -> Result<Tensor> {
        if t.dtype().is_narrow_int() {
            let weak = promote::weak_scalar_dtype(op, t.dtype(), s);
            if weak == t.dtype() {
                // numpy refuses a Python int the 8-bit dtype cannot hold.
                promote::convert_scalar(s, weak)?;
            } else {
                let to = promote::promote_types(t.dtype(), weak);
                return Tensor::binary_scalar(op, &t.try_cast(to)?, s, scalar_first);
            }
        }
        if t.is_narrow() {
            return narrow::via_wide(&[t], |w| {
                elementwise::binary_scalar(op, &w[0], s, scalar_first)
            });
        }
        elementwise::binary_scalar(op, t, s, scalar_first)
    }
    pub fn unary(op: UnaryOp, a: &Tensor) -> Result<Tensor> {
        if a.dtype().is_narrow_int() && promote::unary_result_dtype(op, a.dtype())?.is_float() {
            // numpy computes float functions of 8-bit integers in float16.
            return Tensor::unary(op, &a.try_cast(DType::F16)?);
        }
        if a.is_narrow() {
            return narrow::via_wide(&[a], |w| elementwise::unary(op, &w[0]));
        }
        elementwise::unary(op, a)
    }
    /// `binary`, reusing `a`'s buffer when it is uniquely owned and already has the result's
    /// shape and dtype (no allocation); otherwise exactly `binary`.
    pub fn binary_owned(op: BinaryOp, a: Tensor, b: &Tensor) -> Result<Tensor> {
        if a.is_narrow() || b.is_narrow() {
            return Tensor::binary(op, &a, b);
        }
        elementwise::binary_in_place(op, a, b, true)
    }
    /// `binary_scalar`, reusing `t`'s buffer when it is uniquely owned and already has the
    /// result's dtype (no allocation); otherwise exactly `binary_scalar`.
    pub fn binary_scalar_owned(
        op: BinaryOp,
        t: Tensor,
        s: Scalar,
        scalar_first: bool,
    ) -> Result<Tensor> {
        if t.is_narrow() {
            return Tensor::binary_scalar(op, &t, s, scalar_first);
        }
        let st = Tensor::scalar(s, promote::weak_scalar_dtype(op, t.dtype(), s))?;
        elementwise::binary_in_place(op, t, &st, !scalar_first)
    }
    /// `unary`, reusing `a`'s buffer when it is uniquely owned and the result has its dtype (no
    /// allocation); otherwise exactly `unary`.
    pub fn unary_owned(op: UnaryOp, a: Tensor) -> Result<Tensor> {
        if a.is_narrow() {
            return Tensor::unary(op, &a);
        }
        elementwise::unary_in_place(op, a)
    }
    /// `where(cond, x, y)` with broadcasting; `cond` is converted to bool.
    pub fn where_(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
        if cond.is_narrow() || x.is_narrow() || y.is_narrow() {
            // The condition is only tested: its dtype does not decide the result's.
            let c = cond.widen();
            return narrow::via_wide(&[x, y], |w| elementwise::where_(&c, &w[0], &w[1]));
        }
        elementwise::where_(cond, x, y)
    }
    /// numpy's `astype`. A cast to the same dtype shares the storage.
    ///
    /// # Panics
    /// When the result does not fit in memory (a wider dtype needs more bytes); use
    /// [`Tensor::try_cast`] to get that as a `MemoryError`.
    pub fn cast(&self, dtype: DType) -> Tensor {
        self.try_cast(dtype).unwrap_or_else(|e| panic!("{e}"))
    }
    /// numpy's `astype`; a MemoryError when the result does not fit in memory.
    #[inline]
    pub fn try_cast(&self, dtype: DType) -> Result<Tensor> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        self.cast_copy(dtype)
    }
    fn cast_copy(&self, dtype: DType) -> Result<Tensor> {
        if self.is_narrow() || dtype.is_narrow() {
            return narrow::cast(self, dtype);
        }
        Ok(Tensor {
            shape: self.shape.clone(),
            storage: Arc::new(elementwise::cast_storage(
                self.try_data()?,
                &self.shape,
                dtype,
            )?),
        })
    }
}

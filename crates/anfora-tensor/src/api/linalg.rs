//! Matrix products.

use crate::{DType, Result, Scalar, Tensor, matmul, narrow};

impl Tensor {
    /// numpy `matmul` semantics (1-d promotion, batch broadcasting).
    pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        if a.is_narrow() || b.is_narrow() {
            return narrow::via_wide(&[a, b], |w| matmul::matmul(&w[0], &w[1]));
        }
        // A product of float matrices of one dtype reads views (`x.T`, `x[::2]`) in place.
        if (a.is_view() || b.is_view())
            && let (&[_, k], &[k2, _]) = (a.shape(), b.shape())
            && k == k2
            && a.dtype() == b.dtype()
            && matches!(a.dtype(), DType::F32 | DType::F64)
        {
            return matmul::gemm(a, b, None, (false, false), false);
        }
        matmul::matmul(a, b)
    }
    /// `op(a) @ op(b) + c` for 2-d float matrices of one dtype: `op` transposes when asked
    /// (through strides, without a copy) and `c` (broadcast to the result) is accumulated
    /// into, in its own buffer when it is unique and has the result's shape.
    pub fn gemm(
        a: &Tensor,
        b: &Tensor,
        c: Option<Tensor>,
        transpose_a: bool,
        transpose_b: bool,
    ) -> Result<Tensor> {
        gemm_then(a, b, c, (transpose_a, transpose_b), false)
    }

    /// `relu(op(a) @ op(b) + c)`, with the bits of [`Tensor::gemm`] followed by
    /// `unary(Relu)`: a linear layer and its activation, in one pass over the result where
    /// the product's kernel applies ReLU as it stores the sums.
    pub fn gemm_relu(
        a: &Tensor,
        b: &Tensor,
        c: Option<Tensor>,
        transpose_a: bool,
        transpose_b: bool,
    ) -> Result<Tensor> {
        gemm_then(a, b, c, (transpose_a, transpose_b), true)
    }

    /// One SGD step on a gradient that is a product: `self -= rate * (op(a) @ op(b))`, in
    /// `self`'s buffer, with the bits of `Tensor::gemm` followed by the update
    /// `self - rate * g` (`rate` a weak scalar), but without the gradient as a tensor: the
    /// product is computed by parts, each updated while in cache. Returns `Ok(false)` and
    /// changes nothing where that does not apply (a shared or non-float `self`, operands that
    /// do not make a product of its shape and dtype, products too small for gemm's general
    /// kernel); the caller then takes the unfused path, which also reports any error.
    pub fn sgd_product(
        &mut self,
        a: &Tensor,
        b: &Tensor,
        transpose_a: bool,
        transpose_b: bool,
        rate: Scalar,
    ) -> Result<bool> {
        matmul::sgd_product(self, a, b, (transpose_a, transpose_b), rate)
    }

    /// Two independent products, as two calls of [`Tensor::gemm`] would give them (the same
    /// bits: the kernels' sums do not depend on the number of threads). Products of similar
    /// size run side by side, one per core, each on one thread: for the products of a
    /// backward pass (`d @ Wᵀ` and `hᵀ @ d`) that keeps both cores busy at one core's rate of
    /// gemm, which scales poorly over two threads at these sizes.
    pub fn gemm_pair(
        first: matmul::GemmCall,
        second: matmul::GemmCall,
    ) -> (Result<Tensor>, Result<Tensor>) {
        matmul::gemm_pair(first, second)
    }
}

/// [`Tensor::gemm`], then ReLU when `relu`.
fn gemm_then(
    a: &Tensor,
    b: &Tensor,
    c: Option<Tensor>,
    transposed: (bool, bool),
    relu: bool,
) -> Result<Tensor> {
    if a.is_narrow() || b.is_narrow() || c.as_ref().is_some_and(Tensor::is_narrow) {
        let c = c.map(|c| c.widen());
        let r = matmul::gemm(&a.widen(), &b.widen(), c, transposed, relu)?;
        let dtypes = [a.dtype(), b.dtype()];
        return r.try_cast(narrow::stored_dtype(r.dtype(), dtypes));
    }
    matmul::gemm(a, b, c, transposed, relu)
}

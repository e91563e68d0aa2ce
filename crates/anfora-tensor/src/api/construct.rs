//! Making tensors: from vectors, scalars, ranges and nested lists.

use crate::{DType, Nested, Result, Scalar, Tensor, alloc, construct, promote};

impl Tensor {
    pub fn from_f32(data: Vec<f32>, shape: &[usize]) -> Result<Tensor> {
        Tensor::from_vec(data, shape)
    }
    pub fn from_f64(data: Vec<f64>, shape: &[usize]) -> Result<Tensor> {
        Tensor::from_vec(data, shape)
    }
    pub fn from_i32(data: Vec<i32>, shape: &[usize]) -> Result<Tensor> {
        Tensor::from_vec(data, shape)
    }
    pub fn from_i64(data: Vec<i64>, shape: &[usize]) -> Result<Tensor> {
        Tensor::from_vec(data, shape)
    }
    pub fn from_bool(data: Vec<bool>, shape: &[usize]) -> Result<Tensor> {
        Tensor::from_vec(data, shape)
    }
    /// A 0-d tensor holding `value` converted to `dtype`.
    pub fn scalar(value: Scalar, dtype: DType) -> Result<Tensor> {
        if dtype.is_narrow() {
            let value = promote::convert_scalar(value, dtype)?;
            let exact = if dtype.is_half() {
                DType::F64
            } else {
                DType::I64
            };
            return construct::scalar(value, exact)?.try_cast(dtype);
        }
        construct::scalar(value, dtype)
    }
    pub fn full(shape: &[usize], value: Scalar, dtype: DType) -> Result<Tensor> {
        if dtype.is_narrow() {
            alloc::checked_numel_of(shape, dtype)?;
            let v = promote::convert_scalar(value, dtype)?;
            return construct::full(shape, v, dtype.wide())?.try_cast(dtype);
        }
        construct::full(shape, value, dtype)
    }
    /// Fails only when the tensor is too large (ValueError on overflow, else MemoryError).
    pub fn zeros(shape: &[usize], dtype: DType) -> Result<Tensor> {
        Tensor::full(shape, Scalar::Bool(false), dtype)
    }
    /// Fails only when the tensor is too large (ValueError on overflow, else MemoryError).
    pub fn ones(shape: &[usize], dtype: DType) -> Result<Tensor> {
        Tensor::full(shape, Scalar::Bool(true), dtype)
    }
    /// numpy's `arange`; dtype defaults to int64 for integer arguments, float32 otherwise.
    pub fn arange(
        start: Scalar,
        stop: Scalar,
        step: Scalar,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        if let Some(h) = dtype.filter(|d| d.is_half()) {
            return construct::arange(start, stop, step, Some(DType::F64))?.try_cast(h);
        }
        if let Some(n) = dtype.filter(|d| d.is_narrow_int()) {
            return construct::arange(start, stop, step, Some(DType::I64))?.try_cast(n);
        }
        construct::arange(start, stop, step, dtype)
    }
    /// Builds a tensor from a nested list literal. Default dtype: bool if all elements are bool,
    /// int64 if all are int/bool, float32 otherwise. Ragged lists are a ValueError.
    pub fn from_nested(data: &Nested, dtype: Option<DType>) -> Result<Tensor> {
        if let Some(h) = dtype.filter(|d| d.is_half()) {
            return construct::from_nested(data, Some(DType::F64))?.try_cast(h);
        }
        if let Some(n) = dtype.filter(|d| d.is_narrow_int()) {
            // numpy refuses a Python int the dtype cannot hold; floats are cast (truncated).
            let t = construct::from_nested(data, None)?;
            if t.dtype() == DType::I64 {
                for s in t.to_scalars() {
                    promote::convert_scalar(s, n)?;
                }
            }
            return t.try_cast(n);
        }
        construct::from_nested(data, dtype)
    }
}

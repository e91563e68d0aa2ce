//! anfora's tensor: an immutable n-d array with numpy semantics.
//!
//! Row-major storage shared behind an `Arc`, or a strided view of another tensor's storage
//! (`transpose`, basic indexing and `broadcast_to` copy nothing; 2-D products read views in
//! place through their strides, other kernels read a view's elements gathered once, on first
//! use), five compute dtypes plus float16 and
//! bfloat16 storage (computed in float32, see [`half`]), numpy broadcasting and type
//! promotion (NEP 50 "weak" Python scalars), `gemm`-backed matmul, reductions,
//! reshape/transpose, basic indexing, and printing that matches numpy's `repr`/`str` exactly.
//!
//! Elementwise kernels are vectorized (AVX-512, AVX2+FMA or baseline, picked at run time) and
//! split over threads (rayon) for large tensors. [`fused::FusedKernel`] evaluates a chain of
//! elementwise ops in one pass over memory, bitwise equal to the ops one by one; the `_owned`
//! ops ([`Tensor::binary_owned`], ...) and [`fused::FusedKernel::run_owned`] write into the buffer
//! of a uniquely owned operand. [`random::Generator`] draws uniform, normal and integer samples
//! from a counter-based generator (Philox4x32-10): reproducible under a seed and identical
//! however the work is split over threads.
//!
//! Deliberate differences from numpy 2.x:
//! - integer (and bool) floor division and modulo by zero raise `ZeroDivisionError` instead of
//!   returning 0 with a warning;
//! - results numpy gives as int8 (floor division, modulo, power and shifts of two bools) are
//!   int64, and float16 results (float functions of bools) are float64;
//! - float literals in `from_nested` and float arguments of `arange` default to float32;
//! - `exp`, `log`, `tanh`, `sigmoid` (and float32 `sin`/`cos`) are anfora's own vectorized
//!   implementations, within 2 ulp of the correctly rounded result (`sqrt` is exact); they can
//!   differ from numpy's in the last bit, as numpy's SIMD kernels differ from libm. float64
//!   `sin`/`cos` and float `pow` use Rust's libm;
//! - a result larger than the machine's memory (or than `ANFORA_MAX_TENSOR_BYTES` bytes, when
//!   that environment variable is set) is a `MemoryError` up front, with a message of anfora's
//!   own; sizes that overflow are numpy's ValueErrors.

use std::fmt;
use std::sync::Arc;

mod alloc;
mod array_ops;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod codegen;
mod construct;
pub mod device;
#[cfg(target_arch = "x86_64")]
mod direct_conv;
mod element;
mod elementwise;
mod format;
pub mod fused;
pub mod half;
mod loops;
mod math;
mod matmul;
mod nn;
mod promote;
pub mod random;
mod reduce;
mod scatter;
mod shape;
mod shape_repr;
#[cfg(test)]
mod tests;
mod transpose;

pub use array_ops::{PadMode, SplitSpec, pad_widths, split_bounds};
pub use device::{Backend, CpuBackend, Device, DeviceKind};
use element::{Element, with_storage};
pub use fused::{FusedKernel, FusedOp};
pub use matmul::GemmCall;
pub use nn::{
    Conv2dSpec, Padding2d, Pool2dSpec, conv2d_output_shape, nn_float_dtype, pool2d_output_shape,
};
pub use promote::{
    binary_result_dtype, binary_scalar_result_dtype, promote_types, result_type, unary_result_dtype,
};
pub use reduce::reduce_result_dtype;
pub use shape::{broadcast_shapes, broadcast_shapes_n, resolve_reshape};
pub use shape_repr::tuple_repr;

/// Element types. `F16` and `BF16` are storage types: their tensors compute in float32 (see
/// [`half`](crate::half)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I32,
    I64,
    F32,
    F64,
    F16,
    BF16,
}

impl DType {
    /// Every dtype.
    pub const ALL: [DType; 7] = [
        DType::Bool,
        DType::I32,
        DType::I64,
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
    ];

    /// numpy's name: `bool`, `int32`, `int64`, `float32`, `float64`.
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
        }
    }

    /// Accepts numpy names and the `bool_` spelling.
    pub fn from_name(name: &str) -> Option<DType> {
        Some(match name {
            "bool" | "bool_" => DType::Bool,
            "int32" => DType::I32,
            "int64" => DType::I64,
            "float32" => DType::F32,
            "float64" => DType::F64,
            "float16" => DType::F16,
            "bfloat16" => DType::BF16,
            _ => return None,
        })
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
    }

    /// float16 or bfloat16: stored in 16 bits, computed in float32.
    pub fn is_half(self) -> bool {
        matches!(self, DType::F16 | DType::BF16)
    }

    pub fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::I64)
    }

    pub fn size_of(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Python scalar as it meets a tensor: `bool`, `int` (64-bit) or `float`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl Scalar {
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as i64 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }
}

impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Scalar::Bool(v)
    }
}

impl From<i32> for Scalar {
    fn from(v: i32) -> Self {
        Scalar::Int(i64::from(v))
    }
}

impl From<i64> for Scalar {
    fn from(v: i64) -> Self {
        Scalar::Int(v)
    }
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Scalar::Float(v)
    }
}

/// The Python exception class an error maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Type,
    Value,
    Index,
    ZeroDivision,
    Overflow,
    /// A tensor too large for the machine's memory (or the `ANFORA_MAX_TENSOR_BYTES` cap).
    Memory,
}

impl ErrorKind {
    pub fn python_name(self) -> &'static str {
        match self {
            ErrorKind::Type => "TypeError",
            ErrorKind::Value => "ValueError",
            ErrorKind::Index => "IndexError",
            ErrorKind::ZeroDivision => "ZeroDivisionError",
            ErrorKind::Overflow => "OverflowError",
            ErrorKind::Memory => "MemoryError",
        }
    }
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}: {message}", kind.python_name())]
pub struct TensorError {
    pub kind: ErrorKind,
    pub message: String,
}

impl TensorError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        TensorError {
            kind,
            message: message.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, TensorError>;

/// Elementwise binary operations (operators and `ops.*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// True division `/`: integer inputs give float64, as in numpy.
    Div,
    FloorDiv,
    Mod,
    Pow,
    Maximum,
    Minimum,
    BitAnd,
    BitOr,
    BitXor,
    LShift,
    RShift,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Elementwise unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Pos,
    Abs,
    /// `~`: bitwise not on ints, logical not on bool (numpy).
    Invert,
    LogicalNot,
    Exp,
    Log,
    Sqrt,
    Tanh,
    Sin,
    Cos,
    Sigmoid,
    Relu,
    /// `log(1 + x)`, accurate near 0.
    Log1p,
    /// `exp(x) - 1`, accurate near 0.
    Expm1,
    /// The error function.
    Erf,
    /// `x·Φ(x)`, the exact GELU (`Φ` the standard normal distribution function).
    Gelu,
    /// GELU's tanh approximation `x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
    GeluTanh,
    /// `x·sigmoid(x)`.
    Silu,
    /// `log(1 + exp(x))`, computed as `max(x, 0) + log1p(exp(-|x|))`.
    Softplus,
    /// `1 / sqrt(x)`.
    Rsqrt,
    /// numpy's `sign`: -1, 0 or 1 in the input's dtype (NaN stays NaN).
    Sign,
}

/// Reductions over axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
}

/// One item of a basic-indexing subscript (`x[1, 2:5, ::-1]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexItem {
    Int(i64),
    Slice {
        start: Option<i64>,
        stop: Option<i64>,
        step: Option<i64>,
    },
    NewAxis,
    Ellipsis,
}

/// A nested list literal (`[[1, 2], [3, 4]]`) before it becomes a tensor.
#[derive(Clone, Debug, PartialEq)]
pub enum Nested {
    Scalar(Scalar),
    List(Vec<Nested>),
}

#[derive(Clone, Debug)]
enum Storage {
    Bool(Vec<bool>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    /// Half-precision storage: kernels never see it (they get float32 copies, see `half`).
    F16(Vec<::half::f16>),
    BF16(Vec<::half::bf16>),
    /// A strided view of another storage (never itself a view). Readers get the gathered
    /// elements (`Tensor::data`), so kernels never meet this variant.
    View(View),
}

fn storage_len(storage: &Storage) -> usize {
    match storage {
        Storage::F16(v) => v.len(),
        Storage::BF16(v) => v.len(),
        Storage::View(_) => unreachable!("the length of a view's base is asked"),
        s => with_storage!(s, v => v.len()),
    }
}

fn storage_dtype(storage: &Storage) -> DType {
    match storage {
        Storage::Bool(_) => DType::Bool,
        Storage::I32(_) => DType::I32,
        Storage::I64(_) => DType::I64,
        Storage::F32(_) => DType::F32,
        Storage::F64(_) => DType::F64,
        Storage::F16(_) => DType::F16,
        Storage::BF16(_) => DType::BF16,
        Storage::View(v) => storage_dtype(&v.base),
    }
}

/// An immutable n-d array. Cloning is cheap (shared storage). It is either contiguous
/// (row-major over all of `storage`) or a strided view of `storage` made by `transpose`, basic
/// indexing or `broadcast_to` without copying: kernels that take strides read the view
/// directly (2-D products), every other reader gets its row-major elements, gathered once on
/// first read and kept with the view.
#[derive(Clone)]
pub struct Tensor {
    shape: Arc<[usize]>,
    /// The elements, or a `Storage::View` of another tensor's (a view lives in the storage
    /// slot, so a tensor stays three words and a register value four).
    storage: Arc<Storage>,
}

/// Where a view's elements are: the element at multi-index `i` is `base[offset + Σ i_k ·
/// strides_k]`.
#[derive(Clone, Debug)]
struct View {
    base: Arc<Storage>,
    offset: isize,
    strides: Box<[isize]>,
    /// The elements in row-major order, gathered on first read.
    dense: std::sync::OnceLock<Arc<Storage>>,
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

impl Tensor {
    // ----- construction -----------------------------------------------------------------
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
        if dtype.is_half() {
            return construct::scalar(value, DType::F64)?.try_cast(dtype);
        }
        construct::scalar(value, dtype)
    }
    pub fn full(shape: &[usize], value: Scalar, dtype: DType) -> Result<Tensor> {
        if dtype.is_half() {
            alloc::checked_numel_of(shape, dtype)?;
            let v = promote::convert_scalar(value, dtype)?;
            return construct::full(shape, v, DType::F32)?.try_cast(dtype);
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
        construct::arange(start, stop, step, dtype)
    }
    /// Builds a tensor from a nested list literal. Default dtype: bool if all elements are bool,
    /// int64 if all are int/bool, float32 otherwise. Ragged lists are a ValueError.
    pub fn from_nested(data: &Nested, dtype: Option<DType>) -> Result<Tensor> {
        if let Some(h) = dtype.filter(|d| d.is_half()) {
            return construct::from_nested(data, Some(DType::F64))?.try_cast(h);
        }
        construct::from_nested(data, dtype)
    }

    // ----- metadata ----------------------------------------------------------------------
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    pub fn dtype(&self) -> DType {
        storage_dtype(&self.storage)
    }
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    // ----- elementwise -------------------------------------------------------------------
    /// Tensor-tensor op with numpy broadcasting and promotion.
    pub fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        if a.is_half() || b.is_half() {
            return half::via_f32(&[a, b], |w| elementwise::binary(op, &w[0], &w[1]));
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
        if t.is_half() {
            return half::via_f32(&[t], |w| {
                elementwise::binary_scalar(op, &w[0], s, scalar_first)
            });
        }
        elementwise::binary_scalar(op, t, s, scalar_first)
    }
    pub fn unary(op: UnaryOp, a: &Tensor) -> Result<Tensor> {
        if a.is_half() {
            return half::via_f32(&[a], |w| elementwise::unary(op, &w[0]));
        }
        elementwise::unary(op, a)
    }
    /// `binary`, reusing `a`'s buffer when it is uniquely owned and already has the result's
    /// shape and dtype (no allocation); otherwise exactly `binary`.
    pub fn binary_owned(op: BinaryOp, a: Tensor, b: &Tensor) -> Result<Tensor> {
        if a.is_half() || b.is_half() {
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
        if t.is_half() {
            return Tensor::binary_scalar(op, &t, s, scalar_first);
        }
        let st = Tensor::scalar(s, promote::weak_scalar_dtype(op, t.dtype(), s))?;
        elementwise::binary_in_place(op, t, &st, !scalar_first)
    }
    /// `unary`, reusing `a`'s buffer when it is uniquely owned and the result has its dtype (no
    /// allocation); otherwise exactly `unary`.
    pub fn unary_owned(op: UnaryOp, a: Tensor) -> Result<Tensor> {
        if a.is_half() {
            return Tensor::unary(op, &a);
        }
        elementwise::unary_in_place(op, a)
    }
    /// `where(cond, x, y)` with broadcasting; `cond` is converted to bool.
    pub fn where_(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
        if cond.is_half() || x.is_half() || y.is_half() {
            // The condition is only tested: its dtype does not decide the result's.
            let c = cond.widen();
            return half::via_f32(&[x, y], |w| elementwise::where_(&c, &w[0], &w[1]));
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
        if self.is_half() || dtype.is_half() {
            return half::cast(self, dtype);
        }
        Ok(Tensor {
            shape: self.shape.clone(),
            storage: Arc::new(elementwise::cast_storage(self.data(), &self.shape, dtype)?),
        })
    }

    // ----- linear algebra, reductions, shapes --------------------------------------------
    /// numpy `matmul` semantics (1-d promotion, batch broadcasting).
    pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        if a.is_half() || b.is_half() {
            return half::via_f32(&[a, b], |w| matmul::matmul(&w[0], &w[1]));
        }
        // A product of float matrices of one dtype reads views (`x.T`, `x[::2]`) in place.
        if (a.is_view() || b.is_view())
            && let (&[_, k], &[k2, _]) = (a.shape(), b.shape())
            && k == k2
            && a.dtype() == b.dtype()
            && matches!(a.dtype(), DType::F32 | DType::F64)
        {
            return matmul::gemm(a, b, None, false, false);
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
        if a.is_half() || b.is_half() || c.as_ref().is_some_and(Tensor::is_half) {
            let c = c.map(|c| c.widen());
            let r = matmul::gemm(&a.widen(), &b.widen(), c, transpose_a, transpose_b)?;
            let dtypes = [a.dtype(), b.dtype()];
            return r.try_cast(half::stored_dtype(r.dtype(), dtypes));
        }
        matmul::gemm(a, b, c, transpose_a, transpose_b)
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

    /// `axes = None` reduces everything. Negative axes count from the end.
    pub fn reduce(
        op: ReduceOp,
        a: &Tensor,
        axes: Option<&[i64]>,
        keepdims: bool,
    ) -> Result<Tensor> {
        if a.is_half() {
            return half::via_f32(&[a], |w| reduce::reduce(op, &w[0], axes, keepdims));
        }
        reduce::reduce(op, a, axes, keepdims)
    }
    /// One dimension may be -1.
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        let shape = shape::resolve_reshape(self.numel(), shape)?;
        alloc::checked_numel_of(&shape, self.dtype())?;
        Ok(Tensor {
            shape: shape.into(),
            storage: self.dense(),
        })
    }
    /// `None` reverses the axes.
    pub fn transpose(&self, axes: Option<&[i64]>) -> Result<Tensor> {
        let perm = shape::resolve_permutation(self.ndim(), axes)?;
        if perm.iter().enumerate().all(|(i, &p)| i == p) {
            return Ok(self.clone());
        }
        let strides = self.strides();
        let new_shape: Vec<usize> = perm.iter().map(|&p| self.shape[p]).collect();
        let new_strides: Vec<isize> = perm.iter().map(|&p| strides[p]).collect();
        self.view_of(self.offset(), new_shape, new_strides)
    }
    /// numpy basic indexing (a view, as numpy's).
    pub fn index(&self, items: &[IndexItem]) -> Result<Tensor> {
        let (offset, new_shape, strides) =
            shape::index_view_strided(&self.shape, &self.strides(), items)?;
        self.view_of(self.offset() + offset, new_shape, strides)
    }

    /// The gradient of basic indexing: zeros of `shape` holding `self` where `x[items]` reads
    /// (basic indices never read a position twice). `self` has the shape of that view.
    pub fn index_scatter(&self, shape: &[usize], items: &[IndexItem]) -> Result<Tensor> {
        if self.is_half() {
            return half::via_f32(&[self], |w| w[0].index_scatter(shape, items));
        }
        let (offset, view, strides) = shape::index_view(shape, items)?;
        if self.shape() != view.as_slice() {
            return Err(TensorError::new(
                ErrorKind::Value,
                format!(
                    "the sensitivity of an indexing has shape {:?}, not the indexed shape {:?}",
                    self.shape(),
                    view
                ),
            ));
        }
        let storage = with_storage!(self.data(), v => {
            let mut out = alloc::try_filled(shape, Element::from_bool(false))?;
            shape::scatter_view(&mut out, offset, &view, &strides, v);
            Element::into_storage(out)
        });
        Ok(Tensor::from_storage(storage, shape.to_vec()))
    }

    // ----- array functions -----------------------------------------------------------------
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
        if dtype.is_half() || indices.is_half() {
            return array_ops::one_hot(&indices.widen(), depth, DType::F32)?.try_cast(dtype);
        }
        array_ops::one_hot(indices, depth, dtype)
    }
    /// numpy's `squeeze` (`None`: every axis of length 1).
    pub fn squeeze(&self, axes: Option<&[i64]>) -> Result<Tensor> {
        if self.is_half() {
            return half::via_f32(&[self], |w| array_ops::squeeze(&w[0], axes));
        }
        array_ops::squeeze(self, axes)
    }
    /// numpy's `expand_dims`.
    pub fn expand_dims(&self, axes: &[i64]) -> Result<Tensor> {
        if self.is_half() {
            return half::via_f32(&[self], |w| array_ops::expand_dims(&w[0], axes));
        }
        array_ops::expand_dims(self, axes)
    }
    /// numpy's `broadcast_to`.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Tensor> {
        if self.is_half() {
            return half::via_f32(&[self], |w| array_ops::broadcast_to(&w[0], shape));
        }
        array_ops::broadcast_to(self, shape)
    }

    /// numpy's `concatenate` along `axis` (dtypes promoted).
    pub fn concat(tensors: &[Tensor], axis: i64) -> Result<Tensor> {
        if tensors.iter().any(Tensor::is_half) {
            let all: Vec<&Tensor> = tensors.iter().collect();
            return half::via_f32(&all, |w| array_ops::concat(w, axis));
        }
        array_ops::concat(tensors, axis)
    }
    /// numpy's `stack` along a new `axis`.
    pub fn stack(tensors: &[Tensor], axis: i64) -> Result<Tensor> {
        if tensors.iter().any(Tensor::is_half) {
            let all: Vec<&Tensor> = tensors.iter().collect();
            return half::via_f32(&all, |w| array_ops::stack(w, axis));
        }
        array_ops::stack(tensors, axis)
    }
    /// numpy's `split` along `axis`: `n` equal parts, or the parts between indices.
    pub fn split(&self, spec: &SplitSpec, axis: i64) -> Result<Vec<Tensor>> {
        if self.is_half() {
            return half::via_f32(&[self], |w| array_ops::split(&w[0], spec, axis));
        }
        array_ops::split(self, spec, axis)
    }

    /// numpy's `take` (mode 'raise'): elements at integer `indices` along `axis` (`None`: of
    /// the flattened tensor); IndexError for an index out of bounds.
    pub fn take(x: &Tensor, indices: &Tensor, axis: Option<i64>) -> Result<Tensor> {
        if x.is_half() || indices.is_half() {
            let i = indices.widen();
            return half::via_f32(&[x], |w| array_ops::take(&w[0], &i, axis));
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
        if d.is_half() || indices.is_half() {
            let i = indices.widen();
            return half::via_f32(&[d], |w| array_ops::take_grad(&w[0], x_shape, &i, axis));
        }
        array_ops::take_grad(d, x_shape, indices, axis)
    }
    /// numpy's `pad` with `widths` from [`pad_widths`]: `value` (cast to the dtype) around
    /// the tensor in the constant mode, copies of its elements in the others.
    pub fn pad(&self, widths: &[[usize; 2]], mode: PadMode, value: Scalar) -> Result<Tensor> {
        if self.is_half() {
            // numpy stores the fill value in the array's dtype: round it there first.
            let value = promote::convert_scalar(value, self.dtype())?;
            return half::via_f32(&[self], |w| array_ops::pad(&w[0], widths, mode, value));
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
        if d.is_half() {
            return half::via_f32(&[d], |w| array_ops::pad_grad(&w[0], x_shape, widths, mode));
        }
        array_ops::pad_grad(d, x_shape, widths, mode)
    }

    // ----- neural-network kernels ------------------------------------------------------------
    /// `ops.conv2d`: the 2-D convolution (cross-correlation, as in PyTorch) of `x` (N, C, H, W)
    /// or unbatched (C, H, W) with `w` (O, C/groups, KH, KW), both float32 or both float64.
    /// Errors: TypeError for other or mixed dtypes, ValueError for ranks, channels, groups and
    /// sizes that do not fit (see [`conv2d_output_shape`]).
    pub fn conv2d(x: &Tensor, w: &Tensor, spec: &Conv2dSpec) -> Result<Tensor> {
        if x.is_half() || w.is_half() {
            return half::via_f32(&[x, w], |t| nn::conv2d(&t[0], &t[1], spec));
        }
        nn::conv2d(x, w, spec)
    }
    /// The gradient of [`Tensor::conv2d`] with respect to its input of shape `input_shape`,
    /// for the output sensitivity `d` (the transposed convolution of `d` with `w`).
    pub fn conv2d_backprop_input(
        d: &Tensor,
        w: &Tensor,
        input_shape: &[usize],
        spec: &Conv2dSpec,
    ) -> Result<Tensor> {
        if d.is_half() || w.is_half() {
            return half::via_f32(&[d, w], |t| {
                nn::conv2d_backprop_input(&t[0], &t[1], input_shape, spec)
            });
        }
        nn::conv2d_backprop_input(d, w, input_shape, spec)
    }
    /// The gradient of [`Tensor::conv2d`] with respect to its weight of shape `weight_shape`,
    /// for the input `x` and the output sensitivity `d`.
    pub fn conv2d_backprop_filter(
        d: &Tensor,
        x: &Tensor,
        weight_shape: &[usize],
        spec: &Conv2dSpec,
    ) -> Result<Tensor> {
        if d.is_half() || x.is_half() {
            return half::via_f32(&[d, x], |t| {
                nn::conv2d_backprop_filter(&t[0], &t[1], weight_shape, spec)
            });
        }
        nn::conv2d_backprop_filter(d, x, weight_shape, spec)
    }

    /// `ops.max_pool2d`: the largest element of each window of an (N, C, H, W) or (C, H, W)
    /// float tensor; the padding is `-inf` and at most half the kernel (PyTorch's rules).
    pub fn max_pool2d(x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
        if x.is_half() {
            return half::via_f32(&[x], |t| nn::pool2d(nn::PoolKind::Max, &t[0], spec));
        }
        nn::pool2d(nn::PoolKind::Max, x, spec)
    }
    /// `ops.avg_pool2d`: the mean of each window, the zero padding counted (PyTorch's
    /// `count_include_pad=True`): every window divides by the kernel's size.
    pub fn avg_pool2d(x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
        if x.is_half() {
            return half::via_f32(&[x], |t| nn::pool2d(nn::PoolKind::Avg, &t[0], spec));
        }
        nn::pool2d(nn::PoolKind::Avg, x, spec)
    }
    /// The gradient of [`Tensor::max_pool2d`] of `x`: each window's sensitivity goes to the
    /// window's first largest element (row-major; a NaN counts as largest).
    pub fn max_pool2d_grad(d: &Tensor, x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
        if d.is_half() || x.is_half() {
            return half::via_f32(&[d, x], |t| nn::max_pool2d_grad(&t[0], &t[1], spec));
        }
        nn::max_pool2d_grad(d, x, spec)
    }
    /// The adjoint of [`Tensor::max_pool2d_grad`] in its sensitivity: `dd` (shaped like `x`)
    /// read at each window's first largest element of `x`.
    pub fn max_pool2d_grad_grad(dd: &Tensor, x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
        if dd.is_half() || x.is_half() {
            return half::via_f32(&[dd, x], |t| nn::max_pool2d_grad_grad(&t[0], &t[1], spec));
        }
        nn::max_pool2d_grad_grad(dd, x, spec)
    }
    /// The gradient of [`Tensor::avg_pool2d`] of an input of shape `input_shape`.
    pub fn avg_pool2d_grad(d: &Tensor, input_shape: &[usize], spec: &Pool2dSpec) -> Result<Tensor> {
        if d.is_half() {
            return half::via_f32(&[d], |t| nn::avg_pool2d_grad(&t[0], input_shape, spec));
        }
        nn::avg_pool2d_grad(d, input_shape, spec)
    }

    /// `ops.softmax`: `exp(x - max) / sum(exp(x - max))` along `axis`, for float tensors.
    pub fn softmax(x: &Tensor, axis: i64) -> Result<Tensor> {
        if x.is_half() {
            return half::via_f32(&[x], |t| nn::softmax(&t[0], axis, false));
        }
        nn::softmax(x, axis, false)
    }
    /// `ops.log_softmax`: `(x - max) - log(sum(exp(x - max)))` along `axis`.
    pub fn log_softmax(x: &Tensor, axis: i64) -> Result<Tensor> {
        if x.is_half() {
            return half::via_f32(&[x], |t| nn::softmax(&t[0], axis, true));
        }
        nn::softmax(x, axis, true)
    }
    /// `ops.logsumexp` (scipy's): `log(sum(exp(x)))` over `axes` (`None`: all), computed as
    /// `max + log(sum(exp(x - max)))` with an infinite maximum left out; over no elements it is
    /// `-inf`.
    pub fn logsumexp(x: &Tensor, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        if x.is_half() {
            return half::via_f32(&[x], |t| nn::logsumexp(&t[0], axes, keepdims));
        }
        nn::logsumexp(x, axes, keepdims)
    }

    // ----- scatter -----------------------------------------------------------------------
    /// MindSpore's ScatterUpdate: numpy's `out = x.copy(); out[indices] = updates` along axis 0.
    ///
    /// `indices` is int32 or int64 of any shape (0-d included), each element an index along
    /// axis 0 (negative ones count from the end); `updates` has shape
    /// `indices.shape + x.shape[1:]` and a dtype that casts to x's safely or within its kind
    /// (bool -> int -> float). With duplicate indices the last one (row-major) wins. Errors:
    /// TypeError for other index dtypes or an unsafe cast, ValueError for a 0-d `x` or a shape
    /// mismatch, IndexError for an index out of range.
    pub fn scatter_update(&self, indices: &Tensor, updates: &Tensor) -> Result<Tensor> {
        if self.is_half() || updates.is_half() || indices.is_half() {
            return half::scatter(scatter::ScatterOp::Update, self, indices, updates);
        }
        scatter::scatter(scatter::ScatterOp::Update, self, indices, updates)
    }
    /// MindSpore's ScatterAdd: [`Tensor::scatter_update`] with `np.add.at` semantics, so
    /// duplicate indices accumulate (ints wrap). A TypeError for bool tensors.
    pub fn scatter_add(&self, indices: &Tensor, updates: &Tensor) -> Result<Tensor> {
        if self.is_half() || updates.is_half() || indices.is_half() {
            return half::scatter(scatter::ScatterOp::Add, self, indices, updates);
        }
        scatter::scatter(scatter::ScatterOp::Add, self, indices, updates)
    }
    /// MindSpore's ScatterNdUpdate: `indices` (int32 or int64) has shape `(..., K)` with
    /// `1 <= K <= x.ndim`; each K-tuple selects the slice `x[i0, ..., iK-1]`, overwritten by the
    /// matching slice of `updates`, whose shape is `indices.shape[:-1] + x.shape[K:]`. Last write
    /// wins; dtype, index and error rules as [`Tensor::scatter_update`].
    pub fn scatter_nd_update(&self, indices: &Tensor, updates: &Tensor) -> Result<Tensor> {
        if self.is_half() || updates.is_half() || indices.is_half() {
            return half::scatter(scatter::ScatterOp::NdUpdate, self, indices, updates);
        }
        scatter::scatter(scatter::ScatterOp::NdUpdate, self, indices, updates)
    }
    /// MindSpore's ScatterNdAdd: [`Tensor::scatter_nd_update`], accumulating (ints wrap). A
    /// TypeError for bool tensors.
    pub fn scatter_nd_add(&self, indices: &Tensor, updates: &Tensor) -> Result<Tensor> {
        if self.is_half() || updates.is_half() || indices.is_half() {
            return half::scatter(scatter::ScatterOp::NdAdd, self, indices, updates);
        }
        scatter::scatter(scatter::ScatterOp::NdAdd, self, indices, updates)
    }

    // ----- conversion --------------------------------------------------------------------
    /// The single element of a one-element tensor.
    pub fn item(&self) -> Result<Scalar> {
        if self.numel() != 1 {
            return Err(TensorError::new(
                ErrorKind::Value,
                "can only convert an array of size 1 to a Python scalar",
            ));
        }
        Ok(self.get_flat(0))
    }
    /// Element `i` of the flattened tensor.
    pub fn get_flat(&self, i: usize) -> Scalar {
        if let Some(v) = half::values_f64(self.data()) {
            return Scalar::Float(v[i]);
        }
        with_storage!(self.data(), v => v[i].to_scalar())
    }
    /// numpy's `bool(a)`: one element required.
    pub fn truth(&self) -> Result<bool> {
        match self.numel() {
            1 => Ok(match half::values_f64(self.data()) {
                Some(v) => v[0] != 0.0,
                None => with_storage!(self.data(), v => !v[0].is_zero()),
            }),
            0 => Err(TensorError::new(
                ErrorKind::Value,
                "The truth value of an empty array is ambiguous. Use `array.size > 0` to check \
                 that an array is not empty.",
            )),
            _ => Err(TensorError::new(
                ErrorKind::Value,
                "The truth value of an array with more than one element is ambiguous. Use a.any() \
                 or a.all()",
            )),
        }
    }
    /// Exact equality of dtype, shape and values (NaN equals NaN).
    pub fn same_as(&self, other: &Tensor) -> bool {
        fn same<T: Element>(a: &[T], b: &Storage) -> bool {
            T::slice(b).is_some_and(|b| a.iter().zip(b).all(|(&x, &y)| x.same(y)))
        }
        if self.is_half() || other.is_half() {
            return self.shape == other.shape
                && self.dtype() == other.dtype()
                && self.as_half_bits() == other.as_half_bits();
        }
        self.shape == other.shape && with_storage!(self.data(), v => same(v, other.data()))
    }

    // ----- printing ----------------------------------------------------------------------
    /// `repr(np_array)`, byte for byte.
    pub fn repr(&self) -> String {
        format::repr(self, "array")
    }
    /// The repr of an anfora tensor, `Tensor([1., 2.], dtype=float32)`: numpy's repr of an
    /// ndarray subclass named `Tensor` (the wrapping accounts for the longer prefix).
    pub fn tensor_repr(&self) -> String {
        format::repr(self, "Tensor")
    }
    /// `str(np_array)`, byte for byte.
    pub fn to_str(&self) -> String {
        format::to_str(self)
    }
}

// ----- crate-internal plumbing and typed accessors ------------------------------------------------
impl Tensor {
    /// `shape` must pass `alloc::checked_numel` (the crate's invariant on tensor shapes), as it
    /// does when `storage` came from the `alloc` helpers.
    fn from_storage(storage: Storage, shape: Vec<usize>) -> Tensor {
        debug_assert_eq!(
            Ok(storage_len(&storage)),
            alloc::checked_numel_of(&shape, storage_dtype(&storage))
        );
        Tensor {
            shape: shape.into(),
            storage: Arc::new(storage),
        }
    }

    fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        let n = alloc::checked_numel(shape, T::DTYPE.size_of())?;
        if data.len() != n {
            return Err(TensorError::new(
                ErrorKind::Value,
                format!(
                    "cannot reshape array of size {} into shape {}",
                    data.len(),
                    shape_repr::compact_shape(shape)
                ),
            ));
        }
        Ok(Tensor::from_storage(T::into_storage(data), shape.to_vec()))
    }

    pub fn as_bool_slice(&self) -> Option<&[bool]> {
        bool::slice(self.data())
    }
    pub fn as_i32_slice(&self) -> Option<&[i32]> {
        i32::slice(self.data())
    }
    pub fn as_i64_slice(&self) -> Option<&[i64]> {
        i64::slice(self.data())
    }
    pub fn as_f32_slice(&self) -> Option<&[f32]> {
        f32::slice(self.data())
    }
    pub fn as_f64_slice(&self) -> Option<&[f64]> {
        f64::slice(self.data())
    }

    /// All elements converted to f64 (bools as 0/1), in row-major order.
    pub fn to_f64_vec(&self) -> Vec<f64> {
        if let Some(v) = half::values_f64(self.data()) {
            return v;
        }
        with_storage!(self.data(), v => v.iter().map(|&x| x.to_f64()).collect())
    }

    /// All elements as Python scalars, in row-major order.
    pub fn to_scalars(&self) -> Vec<Scalar> {
        if let Some(v) = half::values_f64(self.data()) {
            return v.into_iter().map(Scalar::Float).collect();
        }
        with_storage!(self.data(), v => v.iter().map(|&x| x.to_scalar()).collect())
    }

    /// Whether the storage is uniquely owned (no other Tensor shares it) and not a view, so
    /// that the `_owned` ops and `FusedKernel::run_owned` can write into it.
    pub fn is_unique(&self) -> bool {
        self.view().is_none()
            && Arc::strong_count(&self.storage) == 1
            && Arc::weak_count(&self.storage) == 0
    }

    /// The storage to write into: `None` unless uniquely owned and not a view.
    fn storage_mut(&mut self) -> Option<&mut Storage> {
        if self.view().is_some() {
            return None;
        }
        Arc::get_mut(&mut self.storage)
    }

    fn view(&self) -> Option<&View> {
        match &*self.storage {
            Storage::View(v) => Some(v),
            _ => None,
        }
    }

    /// The storage the elements are in (a view's base).
    fn base(&self) -> &Arc<Storage> {
        self.view().map_or(&self.storage, |v| &v.base)
    }

    /// Whether this tensor is a strided view (its elements are not its storage in order).
    pub fn is_view(&self) -> bool {
        self.view().is_some()
    }

    /// The same elements, contiguous (a view's are gathered once and kept).
    pub fn contiguous(&self) -> Tensor {
        Tensor {
            shape: self.shape.clone(),
            storage: self.dense(),
        }
    }

    /// The elements in row-major order.
    #[inline]
    fn data(&self) -> &Storage {
        match &*self.storage {
            Storage::View(v) => self.gathered(v),
            s => s,
        }
    }

    /// [`Tensor::data`] as a shared storage.
    fn dense(&self) -> Arc<Storage> {
        match &*self.storage {
            Storage::View(v) => self.gathered(v).clone(),
            _ => self.storage.clone(),
        }
    }

    /// A view's elements, gathered on the first call and kept.
    fn gathered<'a>(&'a self, v: &'a View) -> &'a Arc<Storage> {
        v.dense.get_or_init(|| Arc::new(self.gather_view(v)))
    }

    fn gather_view(&self, v: &View) -> Storage {
        fn pick<T: Copy>(src: &[T], offset: isize, shape: &[usize], strides: &[isize]) -> Vec<T> {
            let mut out = Vec::with_capacity(shape.iter().product());
            shape::gather_into(&mut out, src, offset, shape, strides);
            out
        }
        /// A transposed matrix (strides `(1, s)`, as `x.T` makes) by the blocked transpose,
        /// which moves whole cache lines; anything else row by row.
        fn pick_bits<T: Copy + pulp::bytemuck::Pod>(
            src: &[T],
            offset: isize,
            shape: &[usize],
            strides: &[isize],
        ) -> Vec<T> {
            if let ([rows, cols], &[1, s]) = (shape, strides)
                && *rows > 1
                && *cols > 1
                && s >= *rows as isize
                && offset >= 0
            {
                // Element (i, j) is at offset + i + j·s: the transpose of the cols×rows
                // matrix at `offset` with row stride s.
                let mut out = vec![src[offset as usize]; rows * cols];
                transpose::transpose(
                    &src[offset as usize..],
                    s as usize,
                    *cols,
                    *rows,
                    &mut out,
                    *cols,
                );
                return out;
            }
            pick(src, offset, shape, strides)
        }
        let (o, sh, st) = (v.offset, &self.shape[..], &v.strides[..]);
        // The size was checked (memory cap included) when the view was made.
        match &*v.base {
            Storage::F16(x) => Storage::F16(pick(x, o, sh, st)),
            Storage::BF16(x) => Storage::BF16(pick(x, o, sh, st)),
            Storage::Bool(x) => Storage::Bool(pick(x, o, sh, st)),
            Storage::I32(x) => Storage::I32(pick_bits(x, o, sh, st)),
            Storage::I64(x) => Storage::I64(pick_bits(x, o, sh, st)),
            Storage::F32(x) => Storage::F32(pick_bits(x, o, sh, st)),
            Storage::F64(x) => Storage::F64(pick_bits(x, o, sh, st)),
            Storage::View(_) => unreachable!("a view's base is dense"),
        }
    }

    /// Whether a view's elements have been gathered (tests check that kernels reading strides
    /// did not).
    #[cfg(test)]
    pub(crate) fn is_gathered(&self) -> bool {
        self.view().is_some_and(|v| v.dense.get().is_some())
    }

    /// This tensor's strides over its storage, in elements.
    fn strides(&self) -> std::borrow::Cow<'_, [isize]> {
        match self.view() {
            None => std::borrow::Cow::Owned(shape::contiguous_strides(&self.shape)),
            Some(v) => std::borrow::Cow::Borrowed(&v.strides),
        }
    }

    /// The storage itself (a view's elements are somewhere in it: see `matrix_layout`).
    pub(crate) fn raw_storage(&self) -> &Storage {
        self.base()
    }

    /// Where this tensor's first element is in its storage.
    fn offset(&self) -> isize {
        self.view().map_or(0, |v| v.offset)
    }

    /// The 2-D strides and storage offset to read this matrix in place, when it is one (a
    /// view with non-negative strides, or contiguous).
    pub(crate) fn matrix_layout(&self) -> Option<(isize, isize, isize)> {
        match (self.view(), &self.shape[..]) {
            (None, &[_, c]) => Some((0, c as isize, 1)),
            (Some(v), &[_, _]) if v.strides.iter().all(|&s| s >= 0) => {
                Some((v.offset, v.strides[0], v.strides[1]))
            }
            _ => None,
        }
    }

    /// A view of this tensor's storage with `shape` and `strides` from `offset` (contiguous
    /// again when that is what it reads).
    fn view_of(&self, offset: isize, shape: Vec<usize>, strides: Vec<isize>) -> Result<Tensor> {
        let n = alloc::checked_numel_of(&shape, self.dtype())?;
        let base = self.base();
        let dense = offset == 0
            && n == storage_len(base)
            && shape::contiguous_strides(&shape)
                .iter()
                .zip(&strides)
                .zip(&shape)
                .all(|((a, b), &d)| d <= 1 || a == b);
        let storage = if dense {
            base.clone()
        } else {
            Arc::new(Storage::View(View {
                base: base.clone(),
                offset,
                strides: strides.into(),
                dense: std::sync::OnceLock::new(),
            }))
        };
        Ok(Tensor {
            shape: shape.into(),
            storage,
        })
    }

    /// The address of the first element of the storage (to check buffer reuse; never
    /// dereference it).
    pub fn as_ptr_addr(&self) -> usize {
        match self.data() {
            Storage::F16(v) => v.as_ptr() as usize,
            Storage::BF16(v) => v.as_ptr() as usize,
            s => with_storage!(s, v => v.as_ptr() as usize),
        }
    }

    /// Whether two tensors share the same storage allocation (cheap clones and reshapes do).
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(self.base(), other.base())
    }
}

impl fmt::Display for Tensor {
    /// numpy's `str`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_str())
    }
}

/// Makes the calling thread one of the kernel threads: builds rayon's global pool with one
/// thread per core, the caller included. Parallel kernels called from this thread then run
/// on it and wake one helper, instead of handing the work to other threads and sleeping
/// (which, with as many helpers as cores, also leaves them spinning against the caller's own
/// serial work). Call it first thing, from the thread that will run programs; returns `false`
/// when the pool already exists (then nothing changes).
pub fn run_kernels_on_this_thread() -> bool {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .use_current_thread()
        .build_global()
        .is_ok()
}

/// While alive, keeps the pool's other threads polling for work instead of going to sleep
/// between the parallel kernels of one program. A training step alternates parallel products
/// with short serial ops, long enough for rayon's idle threads to fall asleep: each of the
/// dozen or so parallel kernels of a W1 step then paid a futex wake-up (under a hypervisor an
/// interprocessor interrupt too), 11 % of the step's samples in a profile. With this guard the
/// helpers wake once per program. For programs that take a while (the executor starts it
/// after a run of at least [`KeepThreadsAwake::WORTH`]): a microsecond-scale call would pay
/// more for the one wake-up than it saves.
pub struct KeepThreadsAwake {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl KeepThreadsAwake {
    /// The shortest previous run worth keeping the threads awake for.
    pub const WORTH: std::time::Duration = std::time::Duration::from_micros(200);

    /// A helper polls at most this long: the bound on the CPU time one guard can waste.
    const MAX_POLL: std::time::Duration = std::time::Duration::from_millis(100);

    /// Starts polling on every other thread of the pool; `None` (nothing to do) when this
    /// thread is not one of the pool's or the pool has one thread.
    pub fn start() -> Option<KeepThreadsAwake> {
        use std::sync::atomic::{AtomicBool, Ordering};
        let me = rayon::current_thread_index()?;
        let others = rayon::current_num_threads()
            .checked_sub(1)
            .filter(|&n| n > 0)?;
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        for _ in 0..others {
            let stop = stop.clone();
            rayon::spawn(move || {
                // This thread may pick its own helper job up while it waits inside a kernel:
                // polling there would stall the program.
                if rayon::current_thread_index() == Some(me) {
                    return;
                }
                let until = std::time::Instant::now() + Self::MAX_POLL;
                // The clock is read every 64 rounds (it was 2.6 % of a W1 profile read every
                // round), and an idle round pauses a little, leaving the core's resources to
                // the other thread should the two share one.
                let mut round = 0u32;
                while !stop.load(Ordering::Relaxed)
                    && (!round.is_multiple_of(64) || std::time::Instant::now() < until)
                {
                    round = round.wrapping_add(1);
                    if rayon::yield_now() != Some(rayon::Yield::Executed) {
                        for _ in 0..4 {
                            std::hint::spin_loop();
                        }
                    }
                }
            });
        }
        Some(KeepThreadsAwake { stop })
    }
}

impl Drop for KeepThreadsAwake {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

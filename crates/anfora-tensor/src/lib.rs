//! anfora's tensor: an immutable n-d array with numpy semantics.
//!
//! Row-major storage shared behind an `Arc`, or a strided view of another tensor's storage
//! (`transpose`, basic indexing and `broadcast_to` copy nothing; 2-D products read views in
//! place through their strides, other kernels read a view's elements gathered once, on first
//! use), five compute dtypes plus float16 and
//! bfloat16 storage (computed in float32, see [`narrow`]), numpy broadcasting and type
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

mod advanced;
mod alloc;
mod api;
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
mod format_mindspore;
pub use format_mindspore::{mindspore_dtype_name, mindspore_print, mindspore_repr};
pub mod fused;
mod loops;
mod math;
mod matmul;
pub mod memory;
pub mod narrow;
mod nn;
mod parallel;
mod promote;
pub mod quant;
pub mod random;
mod reduce;
mod scatter;
mod shape;
mod shape_repr;
mod storage;
#[cfg(test)]
mod tests;
mod threads;
mod transpose;

pub use alloc::{probe, try_buffer};
pub use api::quant::{QuantOutput, QuantWeights, U8Quant};
pub use array_ops::{PadMode, SplitSpec, pad_widths, split_bounds};
pub use device::{Backend, CpuBackend, Device, DeviceKind};
pub use elementwise::float_divmod;
pub use fused::{FusedKernel, FusedOp};
pub use matmul::{GemmCall, MatmulShape, gemm_plan, matmul_plan};
pub use nn::{
    Conv2dSpec, Padding2d, Pool2dSpec, conv2d_output_shape, nn_float_dtype, pool2d_output_shape,
};
pub use promote::{
    binary_result_dtype, binary_scalar_result_dtype, promote_types, result_type, unary_result_dtype,
};
pub use reduce::{ReducePlan, reduce_plan, reduce_result_dtype};
pub use shape::{
    broadcast_shapes, broadcast_shapes_n, broadcast_strides, contiguous_strides, resolve_reshape,
};
pub use shape_repr::tuple_repr;
use storage::{Storage, storage_dtype};
pub use threads::{KeepThreadsAwake, run_kernels_on_this_thread};

/// Element types. `F16`, `BF16`, `I8` and `U8` are storage types: their tensors compute in
/// float32 or int32 (see [`narrow`](crate::narrow)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I32,
    I64,
    F32,
    F64,
    F16,
    BF16,
    I8,
    U8,
}

impl DType {
    /// Every dtype.
    pub const ALL: [DType; 9] = [
        DType::Bool,
        DType::I32,
        DType::I64,
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::I8,
        DType::U8,
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
            DType::I8 => "int8",
            DType::U8 => "uint8",
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
            "int8" => DType::I8,
            "uint8" => DType::U8,
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
        matches!(self, DType::I32 | DType::I64 | DType::I8 | DType::U8)
    }

    /// int8 or uint8: stored in 8 bits, computed in int32.
    pub fn is_narrow_int(self) -> bool {
        matches!(self, DType::I8 | DType::U8)
    }

    /// A storage dtype (half or narrow int), whose kernels run on its [`DType::wide`] type.
    pub fn is_narrow(self) -> bool {
        self.is_half() || self.is_narrow_int()
    }

    /// The dtype a storage dtype computes in: float32 for the half types, int32 for int8 and
    /// uint8; every other dtype is its own.
    pub fn wide(self) -> DType {
        match self {
            DType::F16 | DType::BF16 => DType::F32,
            DType::I8 | DType::U8 => DType::I32,
            d => d,
        }
    }

    pub fn size_of(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
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
    /// A run went past the time limit its caller set (`memory::with_deadline`).
    Timeout,
    /// A device failed (a driver or kernel compiler error).
    Runtime,
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
            ErrorKind::Timeout => "TimeoutError",
            ErrorKind::Runtime => "RuntimeError",
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

/// One item of a numpy subscript, advanced indices included (`x[[0, 2], 1:]`, `x[mask]`).
#[derive(Clone, Debug)]
pub enum AdvIndexItem {
    /// An int, a slice, `None` or `...`.
    Basic(IndexItem),
    /// An integer array (any integer dtype) or a boolean mask.
    Array(Tensor),
}

/// A nested list literal (`[[1, 2], [3, 4]]`) before it becomes a tensor.
#[derive(Clone, Debug, PartialEq)]
pub enum Nested {
    Scalar(Scalar),
    List(Vec<Nested>),
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

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

impl Tensor {
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
}

impl fmt::Display for Tensor {
    /// numpy's `str`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_str())
    }
}

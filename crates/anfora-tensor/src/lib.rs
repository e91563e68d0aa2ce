//! anfora's tensor: an immutable n-d array with numpy semantics.
//!
//! This is the minimal tensor of the foundation issue: contiguous row-major storage shared behind
//! an `Arc`, five dtypes, numpy broadcasting and type promotion (NEP 50 "weak" Python scalars),
//! `gemm`-backed matmul, reductions, reshape/transpose, basic indexing, and printing that matches
//! numpy's `repr`/`str` exactly.

use std::fmt;
use std::sync::Arc;

/// Element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I32,
    I64,
    F32,
    F64,
}

impl DType {
    /// numpy's name: `bool`, `int32`, `int64`, `float32`, `float64`.
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F32 => "float32",
            DType::F64 => "float64",
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
            _ => return None,
        })
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    pub fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::I64)
    }

    pub fn size_of(self) -> usize {
        match self {
            DType::Bool => 1,
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

/// The Python exception class an error maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Type,
    Value,
    Index,
    ZeroDivision,
    Overflow,
}

impl ErrorKind {
    pub fn python_name(self) -> &'static str {
        match self {
            ErrorKind::Type => "TypeError",
            ErrorKind::Value => "ValueError",
            ErrorKind::Index => "IndexError",
            ErrorKind::ZeroDivision => "ZeroDivisionError",
            ErrorKind::Overflow => "OverflowError",
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
}

/// An immutable, contiguous, row-major n-d array. Cloning is cheap (shared storage).
#[derive(Clone)]
pub struct Tensor {
    shape: Arc<[usize]>,
    storage: Arc<Storage>,
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

#[allow(unused_variables)]
impl Tensor {
    // ----- construction -----------------------------------------------------------------
    pub fn from_f32(data: Vec<f32>, shape: &[usize]) -> Result<Tensor> {
        todo!()
    }
    pub fn from_f64(data: Vec<f64>, shape: &[usize]) -> Result<Tensor> {
        todo!()
    }
    pub fn from_i32(data: Vec<i32>, shape: &[usize]) -> Result<Tensor> {
        todo!()
    }
    pub fn from_i64(data: Vec<i64>, shape: &[usize]) -> Result<Tensor> {
        todo!()
    }
    pub fn from_bool(data: Vec<bool>, shape: &[usize]) -> Result<Tensor> {
        todo!()
    }
    /// A 0-d tensor holding `value` converted to `dtype`.
    pub fn scalar(value: Scalar, dtype: DType) -> Result<Tensor> {
        todo!()
    }
    pub fn full(shape: &[usize], value: Scalar, dtype: DType) -> Result<Tensor> {
        todo!()
    }
    pub fn zeros(shape: &[usize], dtype: DType) -> Tensor {
        todo!()
    }
    pub fn ones(shape: &[usize], dtype: DType) -> Tensor {
        todo!()
    }
    /// numpy's `arange`; dtype defaults to int64 for integer arguments, float32 otherwise.
    pub fn arange(start: Scalar, stop: Scalar, step: Scalar, dtype: Option<DType>) -> Result<Tensor> {
        todo!()
    }
    /// Builds a tensor from a nested list literal. Default dtype: bool if all elements are bool,
    /// int64 if all are int/bool, float32 otherwise. Ragged lists are a ValueError.
    pub fn from_nested(data: &Nested, dtype: Option<DType>) -> Result<Tensor> {
        todo!()
    }

    // ----- metadata ----------------------------------------------------------------------
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    pub fn dtype(&self) -> DType {
        todo!()
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
        todo!()
    }
    /// Tensor-scalar op; the Python scalar is "weak" (NEP 50). `scalar_first` means `s op t`.
    pub fn binary_scalar(op: BinaryOp, t: &Tensor, s: Scalar, scalar_first: bool) -> Result<Tensor> {
        todo!()
    }
    pub fn unary(op: UnaryOp, a: &Tensor) -> Result<Tensor> {
        todo!()
    }
    /// `where(cond, x, y)` with broadcasting; `cond` is converted to bool.
    pub fn where_(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
        todo!()
    }
    pub fn cast(&self, dtype: DType) -> Tensor {
        todo!()
    }

    // ----- linear algebra, reductions, shapes --------------------------------------------
    /// numpy `matmul` semantics (1-d promotion, batch broadcasting).
    pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
        todo!()
    }
    /// `axes = None` reduces everything. Negative axes count from the end.
    pub fn reduce(op: ReduceOp, a: &Tensor, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
        todo!()
    }
    /// One dimension may be -1.
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        todo!()
    }
    /// `None` reverses the axes.
    pub fn transpose(&self, axes: Option<&[i64]>) -> Result<Tensor> {
        todo!()
    }
    /// numpy basic indexing.
    pub fn index(&self, items: &[IndexItem]) -> Result<Tensor> {
        todo!()
    }

    // ----- conversion --------------------------------------------------------------------
    /// The single element of a one-element tensor.
    pub fn item(&self) -> Result<Scalar> {
        todo!()
    }
    /// Element `i` of the flattened tensor.
    pub fn get_flat(&self, i: usize) -> Scalar {
        todo!()
    }
    /// numpy's `bool(a)`: one element required.
    pub fn truth(&self) -> Result<bool> {
        todo!()
    }
    /// Exact equality of dtype, shape and values (NaN equals NaN).
    pub fn same_as(&self, other: &Tensor) -> bool {
        todo!()
    }

    // ----- printing ----------------------------------------------------------------------
    /// `repr(np_array)`, byte for byte.
    pub fn repr(&self) -> String {
        todo!()
    }
    /// `str(np_array)`, byte for byte.
    pub fn to_str(&self) -> String {
        todo!()
    }
}

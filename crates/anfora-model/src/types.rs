//! What a model's callers see: its inputs, outputs and the shape of its result, and the
//! dtype and kind tables shared by the writer and the reader (one row per dtype or kind).

use anfora_ir::GraphKind;
use anfora_ops::Const;
use anfora_tensor::DType;

use crate::schema;

/// Each dtype and its code in the file.
const DTYPES: [(DType, schema::DType); 9] = [
    (DType::Bool, schema::DType::Bool),
    (DType::I32, schema::DType::Int32),
    (DType::I64, schema::DType::Int64),
    (DType::F32, schema::DType::Float32),
    (DType::F64, schema::DType::Float64),
    (DType::F16, schema::DType::Float16),
    (DType::BF16, schema::DType::Bfloat16),
    (DType::I8, schema::DType::Int8),
    (DType::U8, schema::DType::Uint8),
];

/// Each graph kind and its code in the file.
const KINDS: [(GraphKind, schema::GraphKind); 9] = [
    (GraphKind::Function, schema::GraphKind::Function),
    (GraphKind::Lambda, schema::GraphKind::Lambda),
    (GraphKind::ModuleInit, schema::GraphKind::ModuleInit),
    (GraphKind::TrueBranch, schema::GraphKind::TrueBranch),
    (GraphKind::FalseBranch, schema::GraphKind::FalseBranch),
    (GraphKind::Join, schema::GraphKind::Join),
    (GraphKind::LoopHeader, schema::GraphKind::LoopHeader),
    (GraphKind::LoopBody, schema::GraphKind::LoopBody),
    (GraphKind::Fused, schema::GraphKind::Fused),
];

pub fn dtype_code(d: DType) -> i32 {
    let row = DTYPES.iter().find(|(ours, _)| *ours == d);
    row.expect("every dtype has a code").1 as i32
}

pub fn dtype_of(code: i32) -> Option<DType> {
    DTYPES
        .iter()
        .find(|(_, c)| *c as i32 == code)
        .map(|(d, _)| *d)
}

pub fn kind_code(k: GraphKind) -> i32 {
    let row = KINDS.iter().find(|(ours, _)| *ours == k);
    row.expect("every graph kind has a code").1 as i32
}

pub fn kind_of(code: i32) -> Option<GraphKind> {
    KINDS
        .iter()
        .find(|(_, c)| *c as i32 == code)
        .map(|(k, _)| *k)
}

/// A tensor's dtype and shape; `None` for a dimension not known when the model was compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec {
    pub dtype: DType,
    pub shape: Vec<Option<usize>>,
}

impl TensorSpec {
    /// Whether a tensor of `dtype` and `shape` fits.
    pub fn admits(&self, dtype: DType, shape: &[usize]) -> bool {
        dtype == self.dtype
            && shape.len() == self.shape.len()
            && shape
                .iter()
                .zip(&self.shape)
                .all(|(&d, s)| s.is_none_or(|s| s == d))
    }

    /// `float32[1, 64]`, with `?` for unknown dimensions.
    pub fn text(&self) -> String {
        let dims: Vec<String> = self
            .shape
            .iter()
            .map(|d| d.map_or("?".to_string(), |d| d.to_string()))
            .collect();
        format!("{}[{}]", self.dtype.name(), dims.join(", "))
    }
}

/// One of the entry's parameters.
#[derive(Clone, Debug)]
pub struct InputSpec {
    pub name: String,
    pub kind: InputKind,
}

#[derive(Clone, Debug)]
pub enum InputKind {
    /// The caller passes a tensor of this type.
    Tensor(TensorSpec),
    /// The value the compiled code was specialized on; the runtime passes it.
    Fixed(Const),
}

/// One leaf of the result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputSpec {
    pub name: String,
    pub kind: OutputKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    Bool,
    Int,
    Float,
}

impl ScalarKind {
    pub const ALL: [(ScalarKind, &'static str, DType); 3] = [
        (ScalarKind::Bool, "bool", DType::Bool),
        (ScalarKind::Int, "int", DType::I64),
        (ScalarKind::Float, "float", DType::F64),
    ];

    pub fn name(self) -> &'static str {
        Self::row(self).1
    }

    /// The dtype of the 0-d tensor a C caller receives for it.
    pub fn dtype(self) -> DType {
        Self::row(self).2
    }

    pub fn from_name(name: &str) -> Option<ScalarKind> {
        Self::ALL.iter().find(|r| r.1 == name).map(|r| r.0)
    }

    fn row(self) -> &'static (ScalarKind, &'static str, DType) {
        let row = Self::ALL.iter().find(|r| r.0 == self);
        row.expect("every scalar kind has a row")
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputKind {
    Tensor(TensorSpec),
    /// A Python number: a 0-d tensor of [`ScalarKind::dtype`] through the C API.
    Scalar(ScalarKind),
}

impl OutputSpec {
    /// The tensor type a C caller receives.
    pub fn tensor_spec(&self) -> TensorSpec {
        match &self.kind {
            OutputKind::Tensor(t) => t.clone(),
            OutputKind::Scalar(s) => TensorSpec {
                dtype: s.dtype(),
                shape: vec![],
            },
        }
    }
}

/// The structure of the result: leaves index the outputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResultTree {
    Leaf(usize),
    Tuple(Vec<ResultTree>),
    List(Vec<ResultTree>),
    None,
}

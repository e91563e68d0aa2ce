//! ONNX export: a compiled, specialized and optimized anfora program written as an ONNX model.
//!
//! [`export`] walks the optimized graphs from the entry, as the executor would run them, and
//! writes one ONNX node (or a few) per primitive call:
//!
//! * calls of graphs (functions the optimizer kept, `Fused` elementwise chains, the blocks of
//!   `if` and loops) are expanded in place, so the model is one flat graph with subgraphs only
//!   where ONNX needs them;
//! * `Switch(c, @✓, @✗)` followed by a call of its result becomes `If` (both branches give the
//!   same values, flattened by the call's abstract);
//! * a loop header (`↵`, a block whose `Switch` chooses between a body that tail-calls the
//!   header again and an exit) becomes `Loop`: the header's parameters are the loop-carried
//!   values, the condition is computed once before the loop and again at the end of each
//!   iteration, and the exit block runs after the loop on the final values;
//! * Parameters read by `Load` become initializers; the monad plumbing (`UpdateState`,
//!   `Depend`, the `U`/`IO` states) is dropped; tuples are flattened into several values;
//!   Python scalars computed at run time are 0-d `int64`/`double`/`bool` tensors.
//!
//! What ONNX cannot express is refused with an [`OnnxError`] that names the construct and
//! carries the node's span (recursion other than a loop, function values used as data, prints
//! and other effects, primitives without a translation).

use std::collections::HashMap;
use std::fmt;

use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, GraphId, GraphKind, Module, NodeId, NodeKind, Prim, SourceMap, Span};
use anfora_ops::Abs;
use anfora_tensor::{DType, Scalar, Tensor};
use prost::Message;

mod ops;

/// The Rust types of ONNX's model format (the subset in `proto/onnx.proto`).
#[allow(clippy::all, missing_docs)]
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/onnx.rs"));
}

use proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    TensorShapeProto, TypeProto, ValueInfoProto, attribute_proto::AttributeType,
    tensor_shape_proto::Dimension, tensor_shape_proto::dimension, type_proto,
};

/// What the exported model is called and which operator set it uses.
#[derive(Clone, Debug)]
pub struct OnnxOptions {
    /// The default-domain operator set, 17 to 21 (the IR version follows from it).
    pub opset: i64,
    /// The graph's name (default: the entry graph's).
    pub graph_name: Option<String>,
    /// Names of the model's inputs, one per tensor the entry's parameters flatten to (default:
    /// the parameters' names, tuple items suffixed `_0`, `_1`, ...).
    pub input_names: Vec<String>,
    /// Names of the model's outputs, one per tensor the result flattens to (default: `output`
    /// for one, `output_0`, `output_1`, ... for several).
    pub output_names: Vec<String>,
}

impl Default for OnnxOptions {
    fn default() -> Self {
        OnnxOptions {
            opset: 17,
            graph_name: None,
            input_names: Vec::new(),
            output_names: Vec::new(),
        }
    }
}

/// The lowest and highest operator sets [`export`] writes.
pub const MIN_OPSET: i64 = 17;
pub const MAX_OPSET: i64 = 21;

/// The ONNX IR version that goes with an operator set.
pub fn ir_version(opset: i64) -> i64 {
    match opset {
        ..=18 => 8,
        19 | 20 => 9,
        _ => 10,
    }
}

/// A program ONNX cannot express: the construct, why, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnnxError {
    /// The construct, short: `recursion`, `primitive Print`, `function value`, ...
    pub construct: String,
    /// The whole sentence.
    pub message: String,
    /// The node (or graph) that needs it; `Span::NONE` for option errors.
    pub span: Span,
}

impl OnnxError {
    fn new(construct: impl Into<String>, message: impl Into<String>, span: Span) -> OnnxError {
        OnnxError {
            construct: construct.into(),
            message: message.into(),
            span,
        }
    }

    /// The error as a diagnostic (code E0602), rendered like every compile error.
    pub fn diagnostic(&self) -> Diagnostic {
        Diagnostic::error(
            anfora_ir::codes::ONNX_EXPORT,
            format!("cannot export to ONNX: {}", self.message),
            self.span,
        )
        .with_label(self.construct.clone())
        .with_hint(
            "ONNX export takes pure tensor programs: loops as `while`/`for`, no recursion, no \
             effects, primitives with an ONNX translation (docs/deployment.md)",
        )
    }

    /// `file:line:col`, the source line and the message, as `anfora check` prints errors.
    pub fn render(&self, sources: &SourceMap) -> String {
        self.diagnostic().render(sources)
    }
}

impl fmt::Display for OnnxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot export to ONNX: {}", self.message)
    }
}

impl std::error::Error for OnnxError {}

type Result<T> = std::result::Result<T, OnnxError>;

/// Exports graph `entry` of `module` (a specialized, optimized graph, such as
/// `Compiled::graph`, with `abstracts` its abstract values, `Compiled::abstracts`) as a
/// serialized ONNX `ModelProto`.
pub fn export(
    module: &Module,
    entry: GraphId,
    abstracts: &HashMap<NodeId, Abs>,
    options: &OnnxOptions,
) -> std::result::Result<Vec<u8>, OnnxError> {
    export_model(module, entry, abstracts, options).map(|m| m.encode_to_vec())
}

/// [`export`] before serialization.
pub fn export_model(
    module: &Module,
    entry: GraphId,
    abstracts: &HashMap<NodeId, Abs>,
    options: &OnnxOptions,
) -> std::result::Result<ModelProto, OnnxError> {
    let span = module.graph(entry).span;
    if !(MIN_OPSET..=MAX_OPSET).contains(&options.opset) {
        return Err(OnnxError::new(
            "opset",
            format!(
                "operator set {} is not supported (anfora writes {MIN_OPSET} to {MAX_OPSET})",
                options.opset
            ),
            Span::NONE,
        ));
    }
    let mut ex = Exporter::new(module, abstracts, options.opset);
    let graph = ex.entry_graph(entry, options, span)?;
    Ok(ModelProto {
        ir_version: ir_version(options.opset),
        producer_name: "anfora".into(),
        producer_version: env!("CARGO_PKG_VERSION").into(),
        graph: Some(graph),
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: options.opset,
        }],
        ..Default::default()
    })
}

// ---- values ----------------------------------------------------------------------------------

/// An ONNX tensor value: its name, element type and shape; `weak` for a Python scalar (a 0-d
/// tensor that takes the other operand's dtype, NEP 50).
#[derive(Clone, Debug)]
pub(crate) struct Tv {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<Option<usize>>,
    pub weak: bool,
}

/// What a node evaluates to during export.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    T(Tv),
    Tuple(Vec<Val>),
    /// A compile-time constant, written into the model only where a tensor needs it.
    Const(Const),
    /// An effect state: carries nothing.
    Monad,
    /// A graph, as a callee.
    Graph(GraphId),
    /// The result of `Switch(cond, @a, @b)`: called next.
    Switch {
        cond: Tv,
        t: GraphId,
        f: GraphId,
    },
    /// A slice with bounds known at compile time (`None` where omitted), as an index.
    Slice {
        start: Option<i64>,
        stop: Option<i64>,
        step: i64,
    },
    /// `range(start, stop, step)`, as a loop walks it (its length and items are computed).
    Range {
        start: Box<Val>,
        stop: Box<Val>,
        step: i64,
    },
}

/// The result of running a graph: a value, or (in a loop body) the values the header is
/// called with again.
enum Outcome {
    Value(Val),
    Continue(Vec<Val>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Normal,
    /// Inside the body of the loop with this header: a tail call of it continues the loop.
    Body(GraphId),
}

pub(crate) fn onnx_dtype(d: DType) -> i32 {
    match d {
        DType::F32 => 1,
        DType::I32 => 6,
        DType::I64 => 7,
        DType::Bool => 9,
        DType::F16 => 10,
        DType::F64 => 11,
        DType::BF16 => 16,
        DType::U8 => 2,
        DType::I8 => 3,
    }
}

fn value_info(name: &str, dtype: DType, shape: &[Option<usize>]) -> ValueInfoProto {
    let dim = shape
        .iter()
        .map(|d| Dimension {
            value: d.map(|v| dimension::Value::DimValue(v as i64)),
            ..Default::default()
        })
        .collect();
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: onnx_dtype(dtype),
                shape: Some(TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn tv_info(t: &Tv) -> ValueInfoProto {
    value_info(&t.name, t.dtype, &t.shape)
}

pub(crate) fn attr_int(name: &str, i: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        i,
        r#type: AttributeType::Int as i32,
        ..Default::default()
    }
}

pub(crate) fn attr_ints(name: &str, ints: &[i64]) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        ints: ints.to_vec(),
        r#type: AttributeType::Ints as i32,
        ..Default::default()
    }
}

pub(crate) fn attr_tensor(name: &str, t: TensorProto) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        t: Some(t),
        r#type: AttributeType::Tensor as i32,
        ..Default::default()
    }
}

fn attr_graph(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        g: Some(g),
        r#type: AttributeType::Graph as i32,
        ..Default::default()
    }
}

/// A tensor's elements as ONNX's little-endian raw data.
pub(crate) fn tensor_proto(name: &str, t: &Tensor, span: Span) -> Result<TensorProto> {
    let scalars = t.to_scalars();
    let mut raw = Vec::new();
    match t.dtype() {
        DType::Bool => raw.extend(scalars.iter().map(|s| u8::from(s.as_f64() != 0.0))),
        DType::I32 => {
            for s in &scalars {
                raw.extend_from_slice(&(scalar_i64(*s) as i32).to_le_bytes());
            }
        }
        DType::I64 => {
            for s in &scalars {
                raw.extend_from_slice(&scalar_i64(*s).to_le_bytes());
            }
        }
        DType::F32 => {
            for s in &scalars {
                raw.extend_from_slice(&(s.as_f64() as f32).to_le_bytes());
            }
        }
        DType::F64 => {
            for s in &scalars {
                raw.extend_from_slice(&s.as_f64().to_le_bytes());
            }
        }
        DType::I8 | DType::U8 => raw = t.to_le_bytes(),
        d @ (DType::F16 | DType::BF16) => {
            return Err(OnnxError::new(
                format!("{} constant", d.name()),
                format!(
                    "a {} tensor constant is not exported (convert it to float32)",
                    d.name()
                ),
                span,
            ));
        }
    }
    Ok(TensorProto {
        dims: t.shape().iter().map(|&d| d as i64).collect(),
        data_type: onnx_dtype(t.dtype()),
        name: name.into(),
        raw_data: raw,
        ..Default::default()
    })
}

fn scalar_i64(s: Scalar) -> i64 {
    match s {
        Scalar::Bool(b) => i64::from(b),
        Scalar::Int(i) => i,
        Scalar::Float(f) => f as i64,
    }
}

/// A 0-d tensor holding `s` as `dtype`.
pub(crate) fn scalar_tensor(s: Scalar, dtype: DType) -> Option<Tensor> {
    let s = match (s, dtype.is_float()) {
        (Scalar::Bool(b), _) if dtype != DType::Bool => Scalar::Int(i64::from(b)),
        (s, _) => s,
    };
    Tensor::scalar(s, dtype).ok()
}

fn describe(a: &Abs) -> String {
    match a {
        Abs::Func(_) => "a function value".into(),
        Abs::Str(_) => "a str".into(),
        Abs::List(_) => "a list".into(),
        Abs::Ref(_) => "a Parameter reference".into(),
        Abs::Range(_) => "a range".into(),
        Abs::Slice(_) => "a slice".into(),
        Abs::DType(_) => "a dtype".into(),
        Abs::Any => "a value of unknown type".into(),
        other => format!("{other:?}"),
    }
}

// ---- the exporter ----------------------------------------------------------------------------

pub(crate) struct Exporter<'a> {
    pub m: &'a Module,
    pub abs: &'a HashMap<NodeId, Abs>,
    pub opset: i64,
    counter: usize,
    initializers: Vec<TensorProto>,
    /// Constants already written, by their description.
    consts: HashMap<String, Tv>,
    /// Parameters already written, by ref key.
    params: HashMap<u64, Tv>,
    /// The node lists of the graphs being built, innermost last.
    bufs: Vec<Vec<NodeProto>>,
    scopes: Vec<HashMap<NodeId, Val>>,
    /// Graphs being expanded (recursion check).
    active: Vec<GraphId>,
    used_names: std::collections::HashSet<String>,
    /// The abstract of the primitive call being translated.
    pub current_result: Option<Abs>,
}

impl<'a> Exporter<'a> {
    fn new(m: &'a Module, abs: &'a HashMap<NodeId, Abs>, opset: i64) -> Exporter<'a> {
        Exporter {
            m,
            abs,
            opset,
            counter: 0,
            initializers: Vec::new(),
            consts: HashMap::new(),
            params: HashMap::new(),
            bufs: vec![Vec::new()],
            scopes: Vec::new(),
            active: Vec::new(),
            used_names: Default::default(),
            current_result: None,
        }
    }

    pub fn fresh(&mut self, hint: &str) -> String {
        loop {
            self.counter += 1;
            let name = format!("{hint}_{}", self.counter);
            if self.used_names.insert(name.clone()) {
                return name;
            }
        }
    }

    fn reserve(&mut self, name: &str) -> String {
        if self.used_names.insert(name.to_string()) {
            name.to_string()
        } else {
            self.fresh(name)
        }
    }

    pub fn span(&self, n: NodeId) -> Span {
        self.m.node(n).span
    }

    pub fn abs_of(&self, n: NodeId) -> &Abs {
        self.abs.get(&n).unwrap_or(&Abs::Any)
    }

    /// Appends a node with one output of the given type.
    pub fn emit(
        &mut self,
        op: &str,
        inputs: Vec<String>,
        attrs: Vec<AttributeProto>,
        dtype: DType,
        shape: Vec<Option<usize>>,
        weak: bool,
    ) -> Tv {
        let name = self.fresh(&op.to_lowercase());
        self.emit_node(op, inputs, vec![name.clone()], attrs);
        Tv {
            name,
            dtype,
            shape,
            weak,
        }
    }

    pub fn emit_node(
        &mut self,
        op: &str,
        inputs: Vec<String>,
        outputs: Vec<String>,
        attrs: Vec<AttributeProto>,
    ) {
        let name = format!("n{}_{op}", self.counter);
        self.counter += 1;
        self.bufs
            .last_mut()
            .expect("a graph is open")
            .push(NodeProto {
                input: inputs,
                output: outputs,
                name,
                op_type: op.into(),
                attribute: attrs,
                ..Default::default()
            });
    }

    /// A tensor constant as an initializer of the main graph (visible in every subgraph).
    pub fn constant(&mut self, t: &Tensor, weak: bool, span: Span) -> Result<Tv> {
        // Small constants are written once, keyed by their exact elements.
        let key = (t.numel() <= 64).then(|| {
            let bits: Vec<u64> = t
                .to_scalars()
                .iter()
                .map(|s| match *s {
                    Scalar::Bool(b) => u64::from(b),
                    Scalar::Int(i) => i as u64,
                    Scalar::Float(f) => f.to_bits(),
                })
                .collect();
            format!("{:?}|{:?}|{bits:?}", t.dtype(), t.shape())
        });
        if let Some(tv) = key.as_ref().and_then(|k| self.consts.get(k)) {
            let mut tv = tv.clone();
            tv.weak = weak;
            return Ok(tv);
        }
        let name = self.fresh("const");
        self.initializers.push(tensor_proto(&name, t, span)?);
        let tv = Tv {
            name,
            dtype: t.dtype(),
            shape: t.shape().iter().map(|&d| Some(d)).collect(),
            weak,
        };
        if let Some(key) = key {
            self.consts.insert(key, tv.clone());
        }
        Ok(tv)
    }

    /// A 1-d int64 constant.
    pub fn ints(&mut self, v: &[i64], span: Span) -> Result<String> {
        let t = Tensor::from_i64(v.to_vec(), &[v.len()]).expect("a vector");
        Ok(self.constant(&t, false, span)?.name)
    }

    /// A Python scalar constant as a 0-d tensor of `dtype`.
    pub fn scalar(&mut self, s: Scalar, dtype: DType, weak: bool, span: Span) -> Result<Tv> {
        let t = scalar_tensor(s, dtype).ok_or_else(|| {
            OnnxError::new(
                "constant",
                format!("{s:?} cannot be a {}", dtype.name()),
                span,
            )
        })?;
        self.constant(&t, weak, span)
    }

    fn param(&mut self, p: &anfora_ir::ParamRef, span: Span) -> Result<Tv> {
        if let Some(tv) = self.params.get(&p.key()) {
            return Ok(tv.clone());
        }
        let name = self.reserve(&p.name());
        let t = p.get();
        self.initializers.push(tensor_proto(&name, &t, span)?);
        let tv = Tv {
            name,
            dtype: t.dtype(),
            shape: t.shape().iter().map(|&d| Some(d)).collect(),
            weak: false,
        };
        self.params.insert(p.key(), tv.clone());
        Ok(tv)
    }

    /// The tensor a value stands for, in its own dtype (constants: Python's int64, double or
    /// bool, weak).
    pub fn tensor(&mut self, v: &Val, span: Span) -> Result<Tv> {
        match v {
            Val::T(t) => Ok(t.clone()),
            Val::Const(c) => match c {
                Const::Bool(b) => self.scalar(Scalar::Bool(*b), DType::Bool, true, span),
                Const::Int(i) => self.scalar(Scalar::Int(*i), DType::I64, true, span),
                Const::Float(f) => self.scalar(Scalar::Float(*f), DType::F64, true, span),
                Const::Tensor(t) => self.constant(t, false, span),
                Const::Ref(p) => self.param(p, span),
                other => Err(OnnxError::new(
                    "constant",
                    format!("the constant {other:?} is not a tensor"),
                    span,
                )),
            },
            Val::Tuple(_) => Err(OnnxError::new(
                "tuple",
                "a tuple where a tensor is expected",
                span,
            )),
            Val::Monad => Err(OnnxError::new(
                "state",
                "an effect state where a tensor is expected",
                span,
            )),
            Val::Slice { .. } => Err(OnnxError::new(
                "slice",
                "a slice used as a value (only as an index)",
                span,
            )),
            Val::Range { .. } => Err(OnnxError::new(
                "range",
                "a range used as a value (only its length and items are exported)",
                span,
            )),
            Val::Graph(_) | Val::Switch { .. } => Err(OnnxError::new(
                "a function value",
                "a function value (closure) used as data: ONNX values are tensors",
                span,
            )),
        }
    }

    /// The value as a tensor of `dtype` (cast when it differs; constants written as `dtype`).
    pub fn operand(&mut self, v: &Val, dtype: DType, span: Span) -> Result<Tv> {
        if let Val::Const(c @ (Const::Bool(_) | Const::Int(_) | Const::Float(_))) = v {
            let s = match c {
                Const::Bool(b) => Scalar::Bool(*b),
                Const::Int(i) => Scalar::Int(*i),
                Const::Float(f) => Scalar::Float(*f),
                _ => unreachable!(),
            };
            return self.scalar(s, dtype, true, span);
        }
        let t = self.tensor(v, span)?;
        Ok(self.cast(t, dtype))
    }

    pub fn cast(&mut self, t: Tv, dtype: DType) -> Tv {
        if t.dtype == dtype {
            return t;
        }
        self.emit(
            "Cast",
            vec![t.name],
            vec![attr_int("to", i64::from(onnx_dtype(dtype)))],
            dtype,
            t.shape,
            t.weak,
        )
    }

    fn lookup(&self, n: NodeId) -> Result<Val> {
        match &self.m.node(n).kind {
            NodeKind::Value(c) => Ok(match c {
                Const::Graph(g) => Val::Graph(*g),
                Const::Monad(_) => Val::Monad,
                c => Val::Const(c.clone()),
            }),
            _ => {
                for scope in self.scopes.iter().rev() {
                    if let Some(v) = scope.get(&n) {
                        return Ok(v.clone());
                    }
                }
                Err(OnnxError::new(
                    "free variable",
                    "a value of an enclosing function that is not available here (a closure \
                     called outside the function that made it)",
                    self.span(n),
                ))
            }
        }
    }

    fn bind(&mut self, n: NodeId, v: Val) {
        self.scopes
            .last_mut()
            .expect("a scope is open")
            .insert(n, v);
    }

    // ---- flattening by abstract ---------------------------------------------------------------

    /// The tensors a value of abstract `a` is made of, in order.
    fn flatten(&mut self, v: &Val, a: &Abs, span: Span, out: &mut Vec<Tv>) -> Result<()> {
        if let Val::Graph(_) | Val::Switch { .. } = v {
            return Err(OnnxError::new(
                "a function value",
                "a function value (a closure or a function) used as data: ONNX values are \
                 tensors",
                span,
            ));
        }
        match a {
            Abs::Any if matches!(v, Val::T(_)) => {
                let Val::T(t) = v else { unreachable!() };
                out.push(t.clone());
                Ok(())
            }
            Abs::None | Abs::Monad(_) => Ok(()),
            Abs::Tensor(ta) => {
                let t = self.operand(v, ta.dtype, span)?;
                out.push(t);
                Ok(())
            }
            Abs::Int(_) | Abs::Float(_) | Abs::Bool(_) => {
                let d = match a {
                    Abs::Int(_) => DType::I64,
                    Abs::Float(_) => DType::F64,
                    _ => DType::Bool,
                };
                let t = self.operand(v, d, span)?;
                out.push(t);
                Ok(())
            }
            Abs::Tuple(items) => {
                let vals: Vec<Val> = match v {
                    Val::Tuple(vs) => vs.clone(),
                    Val::Const(Const::Tuple(cs)) => cs.iter().cloned().map(Val::Const).collect(),
                    _ => {
                        return Err(OnnxError::new(
                            "tuple",
                            "a tuple whose items are not known",
                            span,
                        ));
                    }
                };
                if vals.len() != items.len() {
                    return Err(OnnxError::new("tuple", "a tuple of unknown length", span));
                }
                for (v, a) in vals.iter().zip(items.iter()) {
                    self.flatten(v, a, span, out)?;
                }
                Ok(())
            }
            other => Err(OnnxError::new(
                describe(other),
                format!(
                    "{} cannot be an ONNX value (only tensors, numbers and tuples of them)",
                    describe(other)
                ),
                span,
            )),
        }
    }

    /// The value of abstract `a` made of the tensors `names` (in `flatten`'s order).
    fn unflatten(&self, a: &Abs, names: &mut std::slice::Iter<'_, Tv>) -> Val {
        match a {
            Abs::None => Val::Const(Const::None),
            Abs::Monad(_) => Val::Monad,
            Abs::Tuple(items) => {
                Val::Tuple(items.iter().map(|a| self.unflatten(a, names)).collect())
            }
            _ => Val::T(
                names
                    .next()
                    .expect("as many tensors as flatten gave")
                    .clone(),
            ),
        }
    }

    /// Fresh names typed like the flattened abstract `a` (a subgraph's inputs or a node's
    /// outputs).
    fn typed_names(&mut self, a: &Abs, hint: &str, span: Span, out: &mut Vec<Tv>) -> Result<()> {
        match a {
            Abs::None | Abs::Monad(_) => Ok(()),
            Abs::Tensor(ta) => {
                let name = self.fresh(hint);
                out.push(Tv {
                    name,
                    dtype: ta.dtype,
                    shape: ta.shape.clone(),
                    weak: false,
                });
                Ok(())
            }
            Abs::Int(_) | Abs::Float(_) | Abs::Bool(_) => {
                let dtype = match a {
                    Abs::Int(_) => DType::I64,
                    Abs::Float(_) => DType::F64,
                    _ => DType::Bool,
                };
                let name = self.fresh(hint);
                out.push(Tv {
                    name,
                    dtype,
                    shape: vec![],
                    weak: true,
                });
                Ok(())
            }
            Abs::Tuple(items) => {
                for a in items.iter() {
                    self.typed_names(a, hint, span, out)?;
                }
                Ok(())
            }
            other => Err(OnnxError::new(
                describe(other),
                format!("{} cannot be an ONNX value", describe(other)),
                span,
            )),
        }
    }

    // ---- graphs ---------------------------------------------------------------------------

    fn entry_graph(
        &mut self,
        entry: GraphId,
        options: &OnnxOptions,
        span: Span,
    ) -> Result<GraphProto> {
        let g = self.m.graph(entry);
        let mut inputs = Vec::new();
        let mut args = Vec::new();
        let mut names = options.input_names.iter();
        for &p in &g.params {
            let a = self.abs_of(p).clone();
            let pname = self
                .m
                .node(p)
                .name
                .as_deref()
                .unwrap_or("input")
                .to_string();
            let known = match &a {
                Abs::Int(Some(i)) => Some(Const::Int(*i)),
                Abs::Float(Some(f)) => Some(Const::Float(*f)),
                Abs::Bool(Some(b)) => Some(Const::Bool(*b)),
                Abs::None => Some(Const::None),
                Abs::Str(Some(s)) => Some(Const::Str(s.clone())),
                Abs::Ref(r) => r.param.clone().map(Const::Ref),
                _ => None,
            };
            if let Some(c) = known {
                args.push(Val::Const(c));
                continue;
            }
            let mut tvs = Vec::new();
            self.typed_names(&a, &pname, self.span(p), &mut tvs)?;
            let several = tvs.len() > 1;
            for (i, tv) in tvs.iter_mut().enumerate() {
                let wanted = match names.next() {
                    Some(n) => n.clone(),
                    None if several => format!("{pname}_{i}"),
                    None => pname.clone(),
                };
                self.used_names.remove(&tv.name);
                tv.name = self.reserve(&wanted);
                inputs.push(tv_info(tv));
            }
            args.push(self.unflatten(&a, &mut tvs.iter()));
        }
        let out = match self.call_graph(entry, args, Mode::Normal, span)? {
            Outcome::Value(v) => v,
            Outcome::Continue(_) => unreachable!("no loop is open"),
        };
        let out_abs = g
            .output
            .map(|o| self.abs_of(o).clone())
            .unwrap_or(Abs::None);
        let mut tvs = Vec::new();
        let out_span = g
            .output
            .map(|o| self.span(o))
            .filter(|s| !s.is_none())
            .unwrap_or(span);
        self.flatten(&out, &out_abs, out_span, &mut tvs)?;
        if tvs.is_empty() {
            return Err(OnnxError::new(
                "no output",
                "the function returns no tensor (an ONNX model needs an output)",
                out_span,
            ));
        }
        let mut outputs = Vec::new();
        let several = tvs.len() > 1;
        for (i, tv) in tvs.iter().enumerate() {
            let wanted = match options.output_names.get(i) {
                Some(n) => n.clone(),
                None if several => format!("output_{i}"),
                None => "output".into(),
            };
            let name = self.reserve(&wanted);
            self.emit_node(
                "Identity",
                vec![tv.name.clone()],
                vec![name.clone()],
                vec![],
            );
            outputs.push(value_info(&name, tv.dtype, &tv.shape));
        }
        let nodes = self.bufs.pop().expect("the main graph");
        Ok(GraphProto {
            node: nodes,
            name: options
                .graph_name
                .clone()
                .unwrap_or_else(|| sanitize(&g.name)),
            initializer: std::mem::take(&mut self.initializers),
            input: inputs,
            output: outputs,
            ..Default::default()
        })
    }

    /// Runs graph `g` on `args` in place: its nodes into the current ONNX graph, its tail call
    /// followed in `mode`.
    fn call_graph(
        &mut self,
        g: GraphId,
        args: Vec<Val>,
        mode: Mode,
        span: Span,
    ) -> Result<Outcome> {
        let graph = self.m.graph(g);
        if self.active.contains(&g) {
            return Err(OnnxError::new(
                "recursion",
                format!(
                    "`{}` calls itself (recursion): ONNX has no recursion; write the repetition \
                     as a `while` or `for` loop",
                    graph.function
                ),
                span,
            ));
        }
        if graph.params.len() != args.len() {
            return Err(OnnxError::new(
                "call",
                format!(
                    "`{}` called with {} arguments for {} parameters",
                    graph.name,
                    args.len(),
                    graph.params.len()
                ),
                span,
            ));
        }
        self.active.push(g);
        self.scopes.push(HashMap::new());
        for (&p, v) in graph.params.iter().zip(args) {
            self.bind(p, v);
        }
        let result = self.run_graph_body(g, mode);
        self.scopes.pop();
        self.active.pop();
        result
    }

    /// The nodes of `g` (bound in the current scope) and its output.
    fn run_graph_body(&mut self, g: GraphId, mode: Mode) -> Result<Outcome> {
        let tail = self.tail_call(g);
        let output = self
            .m
            .graph(g)
            .output
            .expect("verified graphs have outputs");
        for n in self.m.graph_nodes(g) {
            if Some(n) == tail {
                continue;
            }
            let v = self.apply(n)?;
            self.bind(n, v);
        }
        match tail {
            Some(t) => self.call_in_mode(t, mode),
            None => Ok(Outcome::Value(self.lookup(output)?)),
        }
    }

    /// The output of `g` when it calls a graph or a `Switch`'s choice (followed in the
    /// caller's mode rather than as a value).
    fn tail_call(&self, g: GraphId) -> Option<NodeId> {
        let out = self.m.tail_call(g)?;
        let callee = self.m.inputs(out)[0];
        let calls_graph = self.m.constant(callee).and_then(Const::as_graph).is_some();
        let calls_switch = self.m.callee_prim(callee) == Some(Prim::Switch);
        (calls_graph || calls_switch).then_some(out)
    }

    /// A call node whose callee is a graph or a `Switch` result.
    fn call_in_mode(&mut self, n: NodeId, mode: Mode) -> Result<Outcome> {
        let inputs = self.m.inputs(n).to_vec();
        let span = self.span(n);
        let callee = self.lookup(inputs[0])?;
        let mut args = Vec::new();
        for &a in &inputs[1..] {
            args.push(self.lookup(a)?);
        }
        match callee {
            Val::Graph(g) => {
                if mode == Mode::Body(g) {
                    return Ok(Outcome::Continue(args));
                }
                if self.m.graph(g).kind == GraphKind::LoopHeader {
                    return self.emit_loop(g, args, mode, span);
                }
                self.call_graph(g, args, mode, span)
            }
            Val::Switch { cond, t, f } => self.emit_if(n, cond, t, f, args, mode),
            _ => Err(OnnxError::new(
                "dynamic call",
                "a call of a function known only at run time",
                span,
            )),
        }
    }

    fn apply(&mut self, n: NodeId) -> Result<Val> {
        let inputs = self.m.inputs(n).to_vec();
        let span = self.span(n);
        if let Some(p) = self.m.callee_prim(n) {
            let mut args = Vec::with_capacity(inputs.len() - 1);
            for &a in &inputs[1..] {
                args.push(self.lookup(a)?);
            }
            return self.prim(n, p, &args);
        }
        let callee = self.lookup(inputs[0])?;
        match callee {
            Val::Graph(_) | Val::Switch { .. } => match self.call_in_mode(n, Mode::Normal)? {
                Outcome::Value(v) => Ok(v),
                Outcome::Continue(_) => unreachable!("normal mode never continues"),
            },
            _ => Err(OnnxError::new(
                "dynamic call",
                "a call of a value that is not a function known at compile time",
                span,
            )),
        }
    }

    /// `Switch(cond, @t, @f)(args)` as `If`.
    fn emit_if(
        &mut self,
        n: NodeId,
        cond: Tv,
        t: GraphId,
        f: GraphId,
        args: Vec<Val>,
        mode: Mode,
    ) -> Result<Outcome> {
        let span = self.span(n);
        let result_abs = self.abs_of(n).clone();
        let mut branches = Vec::new();
        let mut kinds = Vec::new();
        let mut all_outputs = Vec::new();
        for g in [t, f] {
            self.bufs.push(Vec::new());
            let outcome = self.call_graph(g, args.clone(), mode, span);
            let outcome = match outcome {
                Ok(o) => o,
                Err(e) => {
                    self.bufs.pop();
                    return Err(e);
                }
            };
            let mut tvs = Vec::new();
            let flattened = match &outcome {
                Outcome::Value(v) => {
                    kinds.push(false);
                    self.flatten(v, &result_abs, span, &mut tvs)
                }
                Outcome::Continue(vs) => {
                    kinds.push(true);
                    let Mode::Body(h) = mode else { unreachable!() };
                    let pabs = self.header_abs(h);
                    vs.iter()
                        .zip(pabs.iter())
                        .try_for_each(|(v, a)| self.flatten(v, a, span, &mut tvs))
                }
            };
            if let Err(e) = flattened {
                self.bufs.pop();
                return Err(e);
            }
            // The outputs are declared with the types the abstract gives both branches.
            let mut declared = Vec::new();
            let typed = match &outcome {
                Outcome::Value(_) => self.typed_names(&result_abs, "if_out", span, &mut declared),
                Outcome::Continue(_) => {
                    let Mode::Body(h) = mode else { unreachable!() };
                    let pabs = self.header_abs(h);
                    pabs.iter()
                        .try_for_each(|a| self.typed_names(a, "if_out", span, &mut declared))
                }
            };
            if typed.is_err() || declared.len() != tvs.len() {
                declared = tvs.clone();
            }
            let mut outputs = Vec::new();
            for (tv, decl) in tvs.iter().zip(&declared) {
                let name = self.fresh("branch_out");
                self.emit_node(
                    "Identity",
                    vec![tv.name.clone()],
                    vec![name.clone()],
                    vec![],
                );
                outputs.push(value_info(&name, decl.dtype, &decl.shape));
            }
            let tvs = declared;
            let nodes = self.bufs.pop().expect("the branch's graph");
            let gname = self.fresh(&sanitize(&self.m.graph(g).name));
            branches.push(GraphProto {
                node: nodes,
                name: gname,
                output: outputs,
                ..Default::default()
            });
            all_outputs.push(tvs);
        }
        if kinds[0] != kinds[1] {
            return Err(OnnxError::new(
                "break or return in a loop",
                "a loop left from inside its body (`break` or `return`): ONNX's Loop only stops \
                 at its condition",
                span,
            ));
        }
        let tvs = &all_outputs[0];
        if tvs.is_empty() {
            return Err(OnnxError::new(
                "if without a value",
                "an `if` whose branches give no tensor (effects only)",
                span,
            ));
        }
        let outs: Vec<Tv> = tvs
            .iter()
            .map(|tv| Tv {
                name: self.fresh("if_out"),
                ..tv.clone()
            })
            .collect();
        let else_branch = branches.pop().expect("two branches");
        let then_branch = branches.pop().expect("two branches");
        self.emit_node(
            "If",
            vec![cond.name],
            outs.iter().map(|t| t.name.clone()).collect(),
            vec![
                attr_graph("then_branch", then_branch),
                attr_graph("else_branch", else_branch),
            ],
        );
        Ok(if kinds[0] {
            let Mode::Body(h) = mode else { unreachable!() };
            let pabs = self.header_abs(h);
            let mut it = outs.iter();
            Outcome::Continue(pabs.iter().map(|a| self.unflatten(a, &mut it)).collect())
        } else {
            Outcome::Value(self.unflatten(&result_abs, &mut outs.iter()))
        })
    }

    fn header_abs(&self, h: GraphId) -> Vec<Abs> {
        self.m
            .graph(h)
            .params
            .iter()
            .map(|p| self.abs_of(*p).clone())
            .collect()
    }

    /// Whether `g`, following tail calls through blocks, comes back to `header`.
    fn reaches(&self, g: GraphId, header: GraphId, seen: &mut Vec<GraphId>) -> bool {
        if g == header {
            return true;
        }
        if seen.contains(&g) {
            return false;
        }
        seen.push(g);
        let Some(t) = self.m.tail_call(g) else {
            return false;
        };
        let callee = self.m.inputs(t)[0];
        if let Some(c) = self.m.constant(callee).and_then(Const::as_graph) {
            if c != header && self.m.graph(c).kind == GraphKind::LoopHeader {
                // Another loop: the path goes on from its exit.
                let Some((a, b)) = self.header_branches(c) else {
                    return false;
                };
                let exit = if self.reaches(a, c, &mut Vec::new()) {
                    b
                } else {
                    a
                };
                return self.reaches(exit, header, seen);
            }
            return self.reaches(c, header, seen);
        }
        if self.m.callee_prim(callee) == Some(Prim::Switch) {
            let ins = self.m.inputs(callee).to_vec();
            return ins[2..]
                .iter()
                .filter_map(|&b| self.m.constant(b).and_then(Const::as_graph))
                .any(|b| self.reaches(b, header, seen));
        }
        false
    }

    /// Header `h` entered with `init`: an ONNX `Loop`, then the exit block in `mode`.
    fn emit_loop(&mut self, h: GraphId, init: Vec<Val>, mode: Mode, span: Span) -> Result<Outcome> {
        if self.active.contains(&h) {
            return Err(OnnxError::new(
                "recursion",
                "a loop entered again from inside itself",
                span,
            ));
        }
        let header = self.m.graph(h);
        let hspan = header.span;
        let not_a_loop = || {
            OnnxError::new(
                "loop",
                "a loop whose header does not end in a choice between its body and its exit",
                hspan,
            )
        };
        let (a, b) = self.header_branches(h).ok_or_else(not_a_loop)?;
        let out = self.m.tail_call(h).expect("header_branches found it");
        let switch = self.m.inputs(out)[0];
        let (body, exit, negate) = match (self.loops_back(a, h), self.loops_back(b, h)) {
            (true, false) => (a, b, false),
            (false, true) => (b, a, true),
            _ => return Err(not_a_loop()),
        };
        let pabs = self.header_abs(h);
        let params = header.params.clone();
        if params.len() != init.len() {
            return Err(not_a_loop());
        }
        let mut init_tvs = Vec::new();
        for (v, a) in init.iter().zip(pabs.iter()) {
            self.flatten(v, a, span, &mut init_tvs)?;
        }
        // The condition before the first iteration.
        let cond0 = self.header_condition(h, &params, init, switch, out, negate)?;
        // The body: (iteration, condition, carried...) -> (condition, carried...).
        self.bufs.push(Vec::new());
        let iter_name = self.fresh("iteration");
        let cond_in = self.fresh("cond_in");
        let mut carried = Vec::new();
        for a in &pabs {
            self.typed_names(a, "carried", span, &mut carried)?;
        }
        let mut it = carried.iter();
        let carried_vals: Vec<Val> = pabs.iter().map(|a| self.unflatten(a, &mut it)).collect();
        let body_result = self.loop_body(
            h,
            &params,
            carried_vals,
            switch,
            out,
            body,
            negate,
            &pabs,
            span,
        );
        let (cond_out, next_tvs) = match body_result {
            Ok(r) => r,
            Err(e) => {
                self.bufs.pop();
                return Err(e);
            }
        };
        let mut body_outputs = vec![value_info(&cond_out.name, DType::Bool, &[])];
        let mut outs = Vec::new();
        for tv in &next_tvs {
            let name = self.fresh("carried_out");
            self.emit_node(
                "Identity",
                vec![tv.name.clone()],
                vec![name.clone()],
                vec![],
            );
            body_outputs.push(value_info(&name, tv.dtype, &tv.shape));
            outs.push(name);
        }
        let nodes = self.bufs.pop().expect("the loop body");
        let mut body_inputs = vec![
            value_info(&iter_name, DType::I64, &[]),
            value_info(&cond_in, DType::Bool, &[]),
        ];
        body_inputs.extend(carried.iter().map(tv_info));
        let body_graph = GraphProto {
            node: nodes,
            name: self.fresh(&sanitize(&self.m.graph(body).name)),
            input: body_inputs,
            output: body_outputs,
            ..Default::default()
        };
        let finals: Vec<Tv> = carried
            .iter()
            .map(|t| Tv {
                name: self.fresh("loop_out"),
                ..t.clone()
            })
            .collect();
        let mut loop_inputs = vec![String::new(), cond0.name];
        loop_inputs.extend(init_tvs.iter().map(|t| t.name.clone()));
        self.emit_node(
            "Loop",
            loop_inputs,
            finals.iter().map(|t| t.name.clone()).collect(),
            vec![attr_graph("body", body_graph)],
        );
        // After the loop: the header's nodes on the final values, then the exit block.
        let mut it = finals.iter();
        let final_vals: Vec<Val> = pabs.iter().map(|a| self.unflatten(a, &mut it)).collect();
        self.active.push(h);
        self.scopes.push(HashMap::new());
        let result = self
            .header_nodes(h, &params, final_vals, switch, out)
            .and_then(|_| self.branch_args(out))
            .and_then(|args| self.call_graph(exit, args, mode, span));
        self.scopes.pop();
        self.active.pop();
        result
    }

    /// The two graphs loop header `h`'s `Switch` chooses between.
    fn header_branches(&self, h: GraphId) -> Option<(GraphId, GraphId)> {
        let out = self.m.tail_call(h)?;
        let switch = self.m.inputs(out)[0];
        if self.m.callee_prim(switch) != Some(Prim::Switch) {
            return None;
        }
        let sw = self.m.inputs(switch);
        Some((
            self.m.constant(sw[2]).and_then(Const::as_graph)?,
            self.m.constant(sw[3]).and_then(Const::as_graph)?,
        ))
    }

    /// Whether branch `g` of header `h`'s switch is the loop's body (it comes back to `h`).
    fn loops_back(&self, g: GraphId, h: GraphId) -> bool {
        g != h && self.reaches(g, h, &mut vec![])
    }

    /// The header's nodes other than its switch and tail call, with its parameters bound to
    /// `vals` in the current scope.
    fn header_nodes(
        &mut self,
        h: GraphId,
        params: &[NodeId],
        vals: Vec<Val>,
        switch: NodeId,
        out: NodeId,
    ) -> Result<()> {
        for (&p, v) in params.iter().zip(vals) {
            self.bind(p, v);
        }
        for n in self.m.graph_nodes(h) {
            if n == switch || n == out {
                continue;
            }
            let v = self.apply(n)?;
            self.bind(n, v);
        }
        Ok(())
    }

    /// The arguments the header's tail call passes to the branch its `Switch` chose (the
    /// states, when the loop reads Parameters).
    fn branch_args(&self, out: NodeId) -> Result<Vec<Val>> {
        self.m.inputs(out)[1..]
            .iter()
            .map(|&a| self.lookup(a))
            .collect()
    }

    /// Whether the loop runs (again) for header parameters `vals`: a 0-d bool.
    fn header_condition(
        &mut self,
        h: GraphId,
        params: &[NodeId],
        vals: Vec<Val>,
        switch: NodeId,
        out: NodeId,
        negate: bool,
    ) -> Result<Tv> {
        self.active.push(h);
        self.scopes.push(HashMap::new());
        let r = self
            .header_nodes(h, params, vals, switch, out)
            .and_then(|_| {
                let c = self.m.inputs(switch)[1];
                let v = self.lookup(c)?;
                self.truth(&v, self.span(c))
            });
        self.scopes.pop();
        self.active.pop();
        let c = r?;
        Ok(if negate {
            self.emit("Not", vec![c.name], vec![], DType::Bool, vec![], false)
        } else {
            c
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn loop_body(
        &mut self,
        h: GraphId,
        params: &[NodeId],
        carried: Vec<Val>,
        switch: NodeId,
        out: NodeId,
        body: GraphId,
        negate: bool,
        pabs: &[Abs],
        span: Span,
    ) -> Result<(Tv, Vec<Tv>)> {
        self.active.push(h);
        self.scopes.push(HashMap::new());
        let r = self
            .header_nodes(h, params, carried, switch, out)
            .and_then(|_| self.branch_args(out))
            .and_then(|args| self.call_graph(body, args, Mode::Body(h), span));
        self.scopes.pop();
        self.active.pop();
        let next = match r? {
            Outcome::Continue(vs) => vs,
            Outcome::Value(_) => {
                return Err(OnnxError::new(
                    "break or return in a loop",
                    "a loop body that does not go back to its condition (`break` or `return` \
                     inside the loop)",
                    self.m.graph(body).span,
                ));
            }
        };
        let mut next_tvs = Vec::new();
        for (v, a) in next.iter().zip(pabs.iter()) {
            self.flatten(v, a, span, &mut next_tvs)?;
        }
        let cond = self.header_condition(h, params, next, switch, out, negate)?;
        Ok((cond, next_tvs))
    }

    /// Python's truth of a value, as a 0-d bool tensor.
    pub fn truth(&mut self, v: &Val, span: Span) -> Result<Tv> {
        if let Val::Const(c) = v {
            let b = match c {
                Const::Bool(b) => *b,
                Const::Int(i) => *i != 0,
                Const::Float(f) => *f != 0.0,
                Const::None => false,
                _ => {
                    return Err(OnnxError::new(
                        "truth",
                        "the truth of a constant that is not a number",
                        span,
                    ));
                }
            };
            return self.scalar(Scalar::Bool(b), DType::Bool, false, span);
        }
        let t = self.tensor(v, span)?;
        if t.shape.iter().any(|d| *d != Some(1)) {
            return Err(OnnxError::new(
                "truth of a tensor",
                "the truth of a tensor that is not known to hold one element",
                span,
            ));
        }
        let t = if t.shape.is_empty() {
            t
        } else {
            let shape = self.ints(&[], span)?;
            self.emit(
                "Reshape",
                vec![t.name, shape],
                vec![],
                t.dtype,
                vec![],
                t.weak,
            )
        };
        Ok(self.cast(t, DType::Bool))
    }
}

/// A graph name usable as an ONNX name (ASCII letters, digits and `_`).
fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| match c {
            '↵' => 'H',
            '↻' => 'B',
            '↓' => 'J',
            '✓' => 'T',
            '✗' => 'F',
            c if c.is_ascii_alphanumeric() => c,
            _ => '_',
        })
        .collect();
    if s.is_empty() { "graph".into() } else { s }
}

//! Writing a model file from the compiler's module: the entry graph and every graph it
//! reaches, their nodes with the tensor types inference gave them, and the Parameters.

use std::collections::HashMap;

use anfora_ir::analysis::analyze;
use anfora_ir::{Const, GraphId, Module, NodeId, NodeKind, Span};
use anfora_ops::Signature;
use anfora_ops::abs::to_value;
use anfora_ops::value::to_const;
use anfora_ops::{Abs, ParamRef};
use anfora_tensor::Tensor;
use prost::Message;

use crate::container::{BlobWriter, assemble};
use crate::schema;
use crate::types::{ScalarKind, dtype_code, kind_code};

/// What cannot go into a model file, and where the program has it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ExportError {
    pub message: String,
    pub span: Span,
}

fn refuse<T>(message: impl Into<String>, span: Span) -> Result<T, ExportError> {
    Err(ExportError {
        message: message.into(),
        span,
    })
}

/// The model file of `entry` (an optimized, specialized graph of `module`) with the node
/// types in `abstracts`. `producer` names the writer (e.g. `anfora 0.1.0`); `names` gives
/// Parameters their names in the file by ref key (a Cell's attribute paths), others keep
/// their own; a name used twice gets a suffix (`weight`, `weight_1`), so names are unique.
pub fn write_model(
    module: &Module,
    entry: GraphId,
    abstracts: &HashMap<NodeId, Abs>,
    producer: &str,
    names: &HashMap<u64, String>,
) -> Result<Vec<u8>, ExportError> {
    let mut w = Writer {
        m: module,
        abstracts,
        strings: Vec::new(),
        string_ix: HashMap::new(),
        graph_ix: HashMap::new(),
        node_ix: HashMap::new(),
        nodes: Vec::new(),
        params: Vec::new(),
        param_ix: HashMap::new(),
        blobs: BlobWriter::default(),
        blob_table: Vec::new(),
        files: HashMap::new(),
        sources: Vec::new(),
    };
    let graphs = analyze(module, &[entry]).graphs;
    for (i, &g) in graphs.iter().enumerate() {
        w.graph_ix.insert(g, i as u32);
    }
    let mut graph_protos = Vec::with_capacity(graphs.len());
    for &g in &graphs {
        w.number_nodes(g);
    }
    for &g in &graphs {
        graph_protos.push(w.graph(g)?);
    }
    let mut node_protos = Vec::with_capacity(w.nodes.len());
    for i in 0..w.nodes.len() {
        node_protos.push(w.node(w.nodes[i])?);
    }
    let inputs = w.inputs(entry)?;
    let mut outputs = Vec::new();
    let out_node = module
        .graph(entry)
        .output
        .expect("a compiled entry has an output");
    let out_abs = w.abstract_of(out_node)?;
    let result = w.result(out_abs, module.node(out_node).span, &mut outputs)?;
    let writes_parameters = w.nodes.iter().any(|&n| match &module.node(n).kind {
        NodeKind::Apply(inputs) => {
            matches!(module.constant(inputs[0]), Some(Const::Prim(p)) if p.effects().mem)
        }
        _ => false,
    });
    let mut taken = std::collections::HashSet::new();
    let parameters = std::mem::take(&mut w.params)
        .iter()
        .map(|p| schema::Parameter {
            name: unique_name(
                names.get(&p.key()).map_or(&*p.name(), String::as_str),
                &mut taken,
            ),
            value: Some(w.tensor(&p.get())),
            requires_grad: p.requires_grad(),
        })
        .collect();
    let message = schema::Model {
        schema_version: crate::SCHEMA_VERSION,
        producer: producer.to_string(),
        strings: std::mem::take(&mut w.strings),
        graphs: graph_protos,
        nodes: node_protos,
        entry: 0,
        inputs,
        outputs,
        parameters,
        blobs: std::mem::take(&mut w.blob_table),
        sources: std::mem::take(&mut w.sources),
        writes_parameters,
        result: Some(result),
    };
    Ok(assemble(&message.encode_to_vec(), &w.blobs.bytes))
}

/// `name`, or `name_1`, `name_2`, ... when taken.
fn unique_name(name: &str, taken: &mut std::collections::HashSet<String>) -> String {
    let mut candidate = name.to_string();
    let mut n = 0;
    while !taken.insert(candidate.clone()) {
        n += 1;
        candidate = format!("{name}_{n}");
    }
    candidate
}

struct Writer<'a> {
    m: &'a Module,
    abstracts: &'a HashMap<NodeId, Abs>,
    strings: Vec<String>,
    string_ix: HashMap<String, u32>,
    graph_ix: HashMap<GraphId, u32>,
    node_ix: HashMap<NodeId, u32>,
    nodes: Vec<NodeId>,
    params: Vec<ParamRef>,
    param_ix: HashMap<u64, u32>,
    blobs: BlobWriter,
    blob_table: Vec<schema::Blob>,
    /// File id → index in `sources` plus one.
    files: HashMap<u32, u32>,
    sources: Vec<schema::SourceFile>,
}

impl<'a> Writer<'a> {
    fn string(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.string_ix.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.string_ix.insert(s.to_string(), i);
        i
    }

    fn number(&mut self, n: NodeId) {
        if !self.node_ix.contains_key(&n) {
            self.node_ix.insert(n, self.nodes.len() as u32);
            self.nodes.push(n);
        }
    }

    /// Numbers a graph's parameters and Apply nodes, then what they use.
    fn number_nodes(&mut self, g: GraphId) {
        let graph = self.m.graph(g);
        for &p in &graph.params {
            self.number(p);
        }
        let applies = self.m.graph_nodes(g);
        for &n in &applies {
            self.number(n);
        }
        for &n in &applies {
            for &input in self.m.inputs(n) {
                self.number(input);
            }
        }
        if let Some(out) = graph.output {
            self.number(out);
        }
    }

    fn span(&mut self, span: Span) -> Option<schema::Span> {
        if span.is_none() {
            return None;
        }
        let file = match self.files.get(&span.file.0) {
            Some(&f) => f,
            None => {
                let src = self.m.sources.get(span.file)?;
                self.sources.push(schema::SourceFile {
                    name: src.name.clone(),
                    text: src.text.to_string(),
                    line_offset: src.line_offset,
                });
                let f = self.sources.len() as u32;
                self.files.insert(span.file.0, f);
                f
            }
        };
        Some(schema::Span {
            file,
            start: span.start,
            end: span.end,
        })
    }

    fn graph(&mut self, g: GraphId) -> Result<schema::Graph, ExportError> {
        let graph = self.m.graph(g);
        Ok(schema::Graph {
            name: self.string(&graph.name),
            function: self.string(&graph.function),
            kind: kind_code(graph.kind),
            params: graph.params.iter().map(|p| self.node_ix[p]).collect(),
            output: graph.output.map_or(0, |o| self.node_ix[&o] + 1),
            order: graph.order.iter().map(|n| self.node_ix[n]).collect(),
            span: self.span(graph.span),
            signature: match &graph.signature {
                Some(s) => Some(self.signature(s, graph.span)?),
                None => None,
            },
        })
    }

    fn signature(&mut self, s: &Signature, at: Span) -> Result<schema::Signature, ExportError> {
        let mut param = |p: &anfora_ops::Param| -> Result<_, ExportError> {
            Ok(schema::SignatureParam {
                name: p.name.to_string(),
                default: match &p.default {
                    Some(c) => Some(self.constant(c, at)?),
                    None => None,
                },
            })
        };
        let params = s.params.iter().map(&mut param).collect::<Result<_, _>>()?;
        let kwonly = s.kwonly.iter().map(&mut param).collect::<Result<_, _>>()?;
        Ok(schema::Signature {
            name: s.name.to_string(),
            params,
            posonly: s.posonly as u32,
            varargs: s.varargs,
            packs: s.packs,
            kwonly,
            packs_keywords: s.packs_keywords,
        })
    }

    fn node(&mut self, n: NodeId) -> Result<schema::Node, ExportError> {
        let node = self.m.node(n);
        let kind = match &node.kind {
            NodeKind::Parameter => schema::node::Kind::Parameter(true),
            NodeKind::Value(c) => schema::node::Kind::Value(self.constant(c, node.span)?),
            NodeKind::Apply(inputs) => schema::node::Kind::Apply(schema::Apply {
                inputs: inputs.iter().map(|i| self.node_ix[i]).collect(),
            }),
        };
        let inlined = node.inlined.clone().map(|inl| schema::Inlined {
            function: self.string(&inl.function),
            calls: inl
                .calls
                .to_vec()
                .into_iter()
                .map(|(f, span)| schema::InlinedCall {
                    function: self.string(&f),
                    span: self.span(span),
                })
                .collect(),
        });
        Ok(schema::Node {
            owner: node.owner.map_or(0, |g| self.graph_ix[&g] + 1),
            name: node.name.clone().map_or(0, |s| self.string(&s) + 1),
            span: self.span(node.span),
            kind: Some(kind),
            r#type: self.node_type(n),
            inlined,
        })
    }

    fn node_type(&mut self, n: NodeId) -> Option<schema::NodeType> {
        let kind = match self.abstracts.get(&n)? {
            Abs::Tensor(t) => schema::node_type::Kind::Tensor(schema::TensorType {
                dtype: dtype_code(t.dtype),
                shape: t.shape.iter().map(|d| d.map_or(-1, |d| d as i64)).collect(),
            }),
            Abs::Ref(r) => schema::node_type::Kind::Ref(schema::RefType {
                parameter: r.param.as_ref().map_or(0, |p| self.parameter(p) + 1),
                tensor: Some(schema::TensorType {
                    dtype: dtype_code(r.dtype),
                    shape: r.shape.iter().map(|&d| d as i64).collect(),
                }),
            }),
            _ => return None,
        };
        Some(schema::NodeType { kind: Some(kind) })
    }

    fn parameter(&mut self, p: &ParamRef) -> u32 {
        if let Some(&i) = self.param_ix.get(&p.key()) {
            return i;
        }
        let i = self.params.len() as u32;
        self.params.push(p.clone());
        self.param_ix.insert(p.key(), i);
        i
    }

    fn tensor(&mut self, t: &Tensor) -> schema::TensorData {
        let (offset, length) = self.blobs.push(&t.to_le_bytes());
        let blob = self.blob_table_push(offset, length);
        schema::TensorData {
            dtype: dtype_code(t.dtype()),
            shape: t.shape().iter().map(|&d| d as u64).collect(),
            blob,
        }
    }

    fn blob_table_push(&mut self, offset: u64, length: u64) -> u32 {
        self.blob_table.push(schema::Blob { offset, length });
        self.blob_table.len() as u32 - 1
    }

    fn constant(&mut self, c: &Const, at: Span) -> Result<schema::Const, ExportError> {
        use schema::r#const::Kind;
        let list = |w: &mut Self, items: &[Const]| -> Result<schema::ConstList, ExportError> {
            let items = items.iter().map(|c| w.constant(c, at));
            Ok(schema::ConstList {
                items: items.collect::<Result<_, _>>()?,
            })
        };
        let kind = match c {
            Const::None => Kind::None(true),
            Const::Bool(b) => Kind::Bool(*b),
            Const::Int(i) => Kind::Int(*i),
            Const::Float(f) => Kind::FloatBits(f.to_bits()),
            Const::Str(s) => Kind::Str(s.to_string()),
            Const::Tuple(items) => Kind::Tuple(list(self, items)?),
            Const::List(items) => Kind::List(list(self, items)?),
            Const::Tensor(t) => Kind::Tensor(self.tensor(t)),
            Const::DType(d) => Kind::Dtype(dtype_code(*d)),
            Const::Prim(p) => Kind::Prim(p.name().to_string()),
            Const::Graph(g) => match self.graph_ix.get(g) {
                Some(&i) => Kind::Graph(i),
                None => return refuse("a function the model refers to was not compiled", at),
            },
            Const::Ellipsis => Kind::Ellipsis(true),
            Const::Ref(p) => Kind::Parameter(self.parameter(p)),
            Const::Monad(m) => Kind::Monad(match m {
                anfora_ops::Monad::U => schema::Monad::U as i32,
                anfora_ops::Monad::IO => schema::Monad::Io as i32,
                anfora_ops::Monad::Comm => schema::Monad::Comm as i32,
            }),
            Const::Symbol { .. } | Const::Namespace(_) | Const::HostObject(_) | Const::Unbound => {
                return refuse(
                    format!(
                        "the compiled program still holds {c}, which a model file cannot: an anfora bug"
                    ),
                    at,
                );
            }
        };
        Ok(schema::Const { kind: Some(kind) })
    }

    fn abstract_of(&self, n: NodeId) -> Result<&'a Abs, ExportError> {
        match self.abstracts.get(&n) {
            Some(a) => Ok(a),
            None => refuse("inference gave no type for the result", self.m.node(n).span),
        }
    }

    fn inputs(&mut self, entry: GraphId) -> Result<Vec<schema::Input>, ExportError> {
        use schema::input::Kind;
        let params = self.m.graph(entry).params.clone();
        let mut out = Vec::with_capacity(params.len());
        for (i, p) in params.into_iter().enumerate() {
            let node = self.m.node(p);
            let name = node
                .name
                .as_deref()
                .map_or(format!("arg{i}"), str::to_string);
            let a = self.abstract_of(p)?;
            let kind = match a {
                Abs::Tensor(t) => Kind::Tensor(schema::TensorType {
                    dtype: dtype_code(t.dtype),
                    shape: t.shape.iter().map(|d| d.map_or(-1, |d| d as i64)).collect(),
                }),
                Abs::Ref(r) if r.param.is_some() => {
                    let c = Const::Ref(r.param.clone().expect("checked"));
                    Kind::Fixed(self.constant(&c, node.span)?)
                }
                _ => match to_value(a).as_ref().and_then(to_const) {
                    Some(c) => Kind::Fixed(self.constant(&c, node.span)?),
                    None => {
                        return refuse(
                            format!(
                                "argument '{name}' is {}: a model's inputs are tensors, or Python values fixed when it is compiled",
                                a
                            ),
                            node.span,
                        );
                    }
                },
            };
            out.push(schema::Input {
                name,
                kind: Some(kind),
            });
        }
        Ok(out)
    }

    /// The result tree of an abstract, its leaves pushed onto `outputs`.
    fn result(
        &mut self,
        a: &Abs,
        at: Span,
        outputs: &mut Vec<schema::ValueInfo>,
    ) -> Result<schema::ResultShape, ExportError> {
        use schema::result_shape::Kind;
        let scalar = |k: ScalarKind| schema::value_info::Kind::Scalar(k.name().to_string());
        let leaf = |outputs: &mut Vec<schema::ValueInfo>, kind| {
            let i = outputs.len() as u32;
            outputs.push(schema::ValueInfo {
                name: format!("output{i}"),
                kind: Some(kind),
            });
            Kind::Leaf(i)
        };
        let kind = match a {
            Abs::Tensor(t) => leaf(
                outputs,
                schema::value_info::Kind::Tensor(schema::TensorType {
                    dtype: dtype_code(t.dtype),
                    shape: t.shape.iter().map(|d| d.map_or(-1, |d| d as i64)).collect(),
                }),
            ),
            Abs::Bool(_) => leaf(outputs, scalar(ScalarKind::Bool)),
            Abs::Int(_) => leaf(outputs, scalar(ScalarKind::Int)),
            Abs::Float(_) => leaf(outputs, scalar(ScalarKind::Float)),
            Abs::None => Kind::None(true),
            Abs::Tuple(items) | Abs::List(items) => {
                let items = items
                    .iter()
                    .map(|i| self.result(i, at, outputs))
                    .collect::<Result<_, _>>()?;
                let list = schema::ResultList { items };
                if matches!(a, Abs::Tuple(_)) {
                    Kind::Tuple(list)
                } else {
                    Kind::List(list)
                }
            }
            other => {
                return refuse(
                    format!(
                        "the result holds {}: a model returns tensors, Python numbers, and tuples, lists or None of them",
                        other
                    ),
                    at,
                );
            }
        };
        Ok(schema::ResultShape { kind: Some(kind) })
    }
}

/// The model file of a loaded `message` with new Parameter `values` (in the message's
/// order, each of its Parameter's dtype and shape); `constant_blobs` are the bytes of every
/// other blob, by index, as [`crate::Loaded`] keeps them.
pub fn rewrite_parameters(
    message: &schema::Model,
    constant_blobs: &HashMap<u32, Vec<u8>>,
    values: &[Tensor],
) -> Vec<u8> {
    let mut message = message.clone();
    let mut blobs = BlobWriter::default();
    let mut table = Vec::with_capacity(message.blobs.len());
    let mut by_blob: HashMap<u32, &Tensor> = HashMap::new();
    for (p, v) in message.parameters.iter().zip(values) {
        if let Some(t) = &p.value {
            by_blob.insert(t.blob, v);
        }
    }
    for i in 0..message.blobs.len() as u32 {
        let bytes = match by_blob.get(&i) {
            Some(t) => t.to_le_bytes(),
            None => constant_blobs.get(&i).cloned().unwrap_or_default(),
        };
        let (offset, length) = blobs.push(&bytes);
        table.push(schema::Blob { offset, length });
    }
    message.blobs = table;
    assemble(&message.encode_to_vec(), &blobs.bytes)
}

//! Reading a model file. The file is untrusted: everything is checked before a graph is
//! built (the header's offsets, the message, every index, dtype and shape, each tensor's
//! bytes), allocation is bounded by the file's size and [`Limits::max_bytes`], and the
//! rebuilt module passes the IR verifier. A failure is a [`ModelError`] naming the byte
//! offset, graph or node; nothing here panics on any input (the mutation test and the fuzz
//! target hold it to that).

use std::collections::HashMap;
use std::sync::Arc;

use anfora_ir::{
    CallChain, Const, FileId, Graph, GraphId, Inlined, Module, Node, NodeId, NodeKind, Prim,
    SourceFile, Span,
};
use anfora_ops::{Abs, Monad, Param, ParamRef, RefAbs, Signature, TensorAbs};
use anfora_tensor::Tensor;
use cranelift_entity::EntityRef;
use prost::Message;

use crate::container::split;
use crate::schema;
use crate::types::{
    InputKind, InputSpec, OutputKind, OutputSpec, ResultTree, ScalarKind, TensorSpec, dtype_of,
    kind_of,
};
use crate::{ModelError, SCHEMA_VERSION};

/// Bounds on what a file may make the reader allocate or walk.
#[derive(Clone, Debug)]
pub struct Limits {
    /// The most bytes of tensors and graphs a file may hold.
    pub max_bytes: u64,
    /// The deepest nesting of constants and of the result's structure.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bytes: 4 << 30,
            max_depth: 64,
        }
    }
}

/// A validated model: its graphs as a module ready to plan, and what callers see.
pub struct Loaded {
    pub module: Module,
    pub entry: GraphId,
    /// The tensor types of nodes, as inference gave them (what the lower stage reads).
    pub abstracts: HashMap<NodeId, Abs>,
    pub inputs: Vec<InputSpec>,
    pub outputs: Vec<OutputSpec>,
    pub result: ResultTree,
    /// The model's own Parameters, fresh ones holding the file's values.
    pub parameters: Vec<ParamRef>,
    pub writes_parameters: bool,
    pub producer: String,
    /// The graph message, kept to write the model back with new Parameter values.
    pub message: schema::Model,
    /// The bytes of every blob that is not a Parameter's, by index, for the same purpose.
    pub constant_blobs: HashMap<u32, Vec<u8>>,
}

/// Reads and validates a model file.
pub fn read_model(bytes: &[u8], limits: &Limits) -> Result<Loaded, ModelError> {
    if bytes.len() as u64 > limits.max_bytes {
        return Err(ModelError::TooLarge {
            needed: bytes.len() as u64,
            cap: limits.max_bytes,
        });
    }
    let parts = split(bytes)?;
    let message = schema::Model::decode(parts.message).map_err(|e| ModelError::Malformed {
        offset: crate::container::HEADER_LEN as u64,
        message: format!("the graph message does not decode: {e}"),
    })?;
    if message.schema_version != SCHEMA_VERSION {
        return Err(ModelError::Version {
            found: message.schema_version,
            supported: SCHEMA_VERSION,
        });
    }
    let mut r = Reader {
        msg: &message,
        blobs: parts.blobs,
        blobs_offset: parts.blobs_offset,
        limits,
        parameters: Vec::new(),
        module: Module::new(),
        files: Vec::new(),
    };
    r.sources();
    r.parameters()?;
    let (entry, abstracts) = r.graphs()?;
    let inputs = r.inputs(entry, &abstracts)?;
    let outputs = r.outputs()?;
    let result = r.result(message.result.as_ref(), outputs.len(), 0)?;
    let mut leaves = vec![false; outputs.len()];
    leaf_uses(&result, &mut leaves);
    if leaves.iter().any(|&used| !used) {
        return Err(ModelError::invalid("an output is not a leaf of the result"));
    }
    if let Err(errors) = anfora_ir::verify::verify(&r.module, &[entry]) {
        let first = errors.first().map(|e| e.to_string()).unwrap_or_default();
        return Err(ModelError::invalid(format!(
            "the graphs are not well formed ({} errors), first: {first}",
            errors.len()
        )));
    }
    let constant_blobs = r.constant_blobs();
    let Reader {
        module, parameters, ..
    } = r;
    Ok(Loaded {
        module,
        entry,
        abstracts,
        inputs,
        outputs,
        result,
        parameters,
        writes_parameters: message.writes_parameters,
        producer: message.producer.clone(),
        message,
        constant_blobs,
    })
}

fn leaf_uses(t: &ResultTree, used: &mut [bool]) {
    match t {
        ResultTree::Leaf(i) => used[*i] = true,
        ResultTree::Tuple(items) | ResultTree::List(items) => {
            items.iter().for_each(|i| leaf_uses(i, used))
        }
        ResultTree::None => {}
    }
}

struct Reader<'a> {
    msg: &'a schema::Model,
    blobs: &'a [u8],
    blobs_offset: u64,
    limits: &'a Limits,
    parameters: Vec<ParamRef>,
    module: Module,
    files: Vec<FileId>,
}

/// Every primitive by its IR name.
fn prim_named(name: &str) -> Option<Prim> {
    static TABLE: std::sync::OnceLock<HashMap<&'static str, Prim>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| Prim::all().iter().map(|&p| (p.name(), p)).collect());
    table
        .get(name)
        .copied()
        .or_else(|| anfora_ops::custom::lookup(name))
}

impl Reader<'_> {
    fn string(&self, i: u32, what: &str) -> Result<&str, ModelError> {
        self.msg
            .strings
            .get(i as usize)
            .map(String::as_str)
            .ok_or_else(|| {
                ModelError::invalid(format!("{what} names string {i}, which does not exist"))
            })
    }

    /// Blobs the Parameters do not own (they were bounds-checked with their tensors).
    fn constant_blobs(&self) -> HashMap<u32, Vec<u8>> {
        let owned: std::collections::HashSet<u32> = (self.msg.parameters.iter())
            .filter_map(|p| p.value.as_ref().map(|v| v.blob))
            .collect();
        (self.msg.blobs.iter().enumerate())
            .filter(|(i, _)| !owned.contains(&(*i as u32)))
            .filter_map(|(i, b)| {
                let end = b.offset.checked_add(b.length)?;
                let bytes = self.blobs.get(b.offset as usize..end as usize)?;
                Some((i as u32, bytes.to_vec()))
            })
            .collect()
    }

    fn sources(&mut self) {
        for s in &self.msg.sources {
            let file = SourceFile::new(s.name.clone(), s.text.as_str(), s.line_offset);
            self.files.push(self.module.sources.add(file));
        }
    }

    fn span(&self, s: Option<&schema::Span>) -> Result<Span, ModelError> {
        let Some(s) = s.filter(|s| s.file != 0) else {
            return Ok(Span::NONE);
        };
        let file = self.files.get(s.file as usize - 1).ok_or_else(|| {
            ModelError::invalid(format!(
                "a span names source file {}, which does not exist",
                s.file
            ))
        })?;
        let len = self.module.sources.file(*file).text.len() as u64;
        if s.start > s.end || u64::from(s.end) > len {
            return Err(ModelError::invalid(format!(
                "a span {}..{} lies outside its source file ({len} bytes)",
                s.start, s.end
            )));
        }
        Ok(Span::new(*file, s.start, s.end))
    }

    /// The tensor a `TensorData` describes, its bytes checked against its dtype and shape.
    fn tensor(
        &self,
        t: &schema::TensorData,
        what: &dyn Fn() -> String,
    ) -> Result<Tensor, ModelError> {
        let dtype = dtype_of(t.dtype).ok_or_else(|| {
            ModelError::invalid(format!("{}: unknown dtype code {}", what(), t.dtype))
        })?;
        let blob = self.msg.blobs.get(t.blob as usize).ok_or_else(|| {
            ModelError::invalid(format!("{}: blob {} does not exist", what(), t.blob))
        })?;
        let end = blob
            .offset
            .checked_add(blob.length)
            .filter(|&e| e <= self.blobs.len() as u64);
        let Some(end) = end else {
            return Err(ModelError::Malformed {
                offset: self.blobs_offset.saturating_add(blob.offset),
                message: format!(
                    "{}: its blob ({} bytes at {}) runs past the blob section ({} bytes)",
                    what(),
                    blob.length,
                    blob.offset,
                    self.blobs.len()
                ),
            });
        };
        let shape: Vec<usize> = t
            .shape
            .iter()
            .map(|&d| usize::try_from(d).ok())
            .collect::<Option<_>>()
            .ok_or_else(|| ModelError::invalid(format!("{}: a dimension is too large", what())))?;
        let data = &self.blobs[blob.offset as usize..end as usize];
        Tensor::from_le_bytes(dtype, &shape, data).map_err(|e| ModelError::Malformed {
            offset: self.blobs_offset + blob.offset,
            message: format!("{}: {}", what(), e.message),
        })
    }

    fn parameters(&mut self) -> Result<(), ModelError> {
        for (i, p) in self.msg.parameters.iter().enumerate() {
            let what = || format!("Parameter {i} ('{}')", p.name);
            let value = p
                .value
                .as_ref()
                .ok_or_else(|| ModelError::invalid(format!("{} has no value", what())))?;
            let t = self.tensor(value, &what)?;
            self.parameters
                .push(ParamRef::new(Some(&p.name), t, p.requires_grad));
        }
        Ok(())
    }

    fn tensor_type(
        &self,
        t: Option<&schema::TensorType>,
        at: &dyn Fn() -> String,
    ) -> Result<TensorSpec, ModelError> {
        let t = t.ok_or_else(|| ModelError::invalid(format!("{}: no tensor type", at())))?;
        let dtype = dtype_of(t.dtype).ok_or_else(|| {
            ModelError::invalid(format!("{}: unknown dtype code {}", at(), t.dtype))
        })?;
        let shape = t
            .shape
            .iter()
            .map(|&d| match d {
                -1 => Ok(None),
                d if d >= 0 && (d as u64) <= self.limits.max_bytes => Ok(Some(d as usize)),
                d => Err(ModelError::invalid(format!("{}: dimension {d}", at()))),
            })
            .collect::<Result<_, _>>()?;
        Ok(TensorSpec { dtype, shape })
    }

    fn constant(&self, c: &schema::Const, node: u32, depth: usize) -> Result<Const, ModelError> {
        use schema::r#const::Kind;
        if depth > self.limits.max_depth {
            return Err(ModelError::node(node, "constants nest too deeply"));
        }
        let list = |l: &schema::ConstList| -> Result<Arc<[Const]>, ModelError> {
            l.items
                .iter()
                .map(|c| self.constant(c, node, depth + 1))
                .collect()
        };
        Ok(match c.kind.as_ref() {
            None => return Err(ModelError::node(node, "a constant without a value")),
            Some(Kind::None(_)) => Const::None,
            Some(Kind::Bool(b)) => Const::Bool(*b),
            Some(Kind::Int(i)) => Const::Int(*i),
            Some(Kind::FloatBits(b)) => Const::Float(f64::from_bits(*b)),
            Some(Kind::Str(s)) => Const::str(s),
            Some(Kind::Tuple(l)) => Const::Tuple(list(l)?),
            Some(Kind::List(l)) => Const::List(list(l)?),
            Some(Kind::Tensor(t)) => Const::Tensor(self.tensor(t, &|| format!("node {node}"))?),
            Some(Kind::Dtype(d)) => Const::DType(
                dtype_of(*d).ok_or_else(|| ModelError::node(node, format!("unknown dtype code {d}")))?,
            ),
            Some(Kind::Prim(name)) => Const::Prim(prim_named(name).ok_or_else(|| {
                ModelError::node(
                    node,
                    format!("unknown primitive '{name}' (a custom primitive must be registered by the program loading the model)"),
                )
            })?),
            Some(Kind::Graph(g)) => {
                if *g as usize >= self.msg.graphs.len() {
                    return Err(ModelError::node(node, format!("graph {g} does not exist")));
                }
                Const::Graph(GraphId::new(*g as usize))
            }
            Some(Kind::Ellipsis(_)) => Const::Ellipsis,
            Some(Kind::Parameter(p)) => Const::Ref(
                self.parameters
                    .get(*p as usize)
                    .cloned()
                    .ok_or_else(|| ModelError::node(node, format!("Parameter {p} does not exist")))?,
            ),
            Some(Kind::Monad(m)) => Const::Monad(match schema::Monad::try_from(*m) {
                Ok(schema::Monad::U) => Monad::U,
                Ok(schema::Monad::Io) => Monad::IO,
                Ok(schema::Monad::Comm) => Monad::Comm,
                Err(_) => return Err(ModelError::node(node, format!("unknown monad {m}"))),
            }),
        })
    }

    fn signature(&self, s: &schema::Signature, node: u32) -> Result<Signature, ModelError> {
        let param = |p: &schema::SignatureParam| -> Result<Param, ModelError> {
            Ok(Param {
                name: Arc::from(p.name.as_str()),
                default: match &p.default {
                    Some(c) => Some(self.constant(c, node, 0)?),
                    None => None,
                },
            })
        };
        let params: Vec<Param> = s.params.iter().map(param).collect::<Result<_, _>>()?;
        if s.posonly as usize > params.len() {
            return Err(ModelError::invalid(format!(
                "signature of {}: {} positional-only parameters of {}",
                s.name,
                s.posonly,
                params.len()
            )));
        }
        Ok(Signature {
            name: Arc::from(s.name.as_str()),
            params,
            posonly: s.posonly as usize,
            varargs: s.varargs,
            packs: s.packs,
            kwonly: s.kwonly.iter().map(param).collect::<Result<_, _>>()?,
            packs_keywords: s.packs_keywords,
        })
    }

    fn node_index(&self, i: u32, what: &dyn Fn() -> String) -> Result<NodeId, ModelError> {
        if (i as usize) < self.msg.nodes.len() {
            Ok(NodeId::new(i as usize))
        } else {
            Err(ModelError::invalid(format!(
                "{}: node {i} does not exist",
                what()
            )))
        }
    }

    /// Rebuilds graphs and nodes (ids equal the file's indices), checking every reference,
    /// each node's owner, and that Apply inputs form no cycle.
    fn graphs(&mut self) -> Result<(GraphId, HashMap<NodeId, Abs>), ModelError> {
        let msg = self.msg;
        if msg.graphs.is_empty() {
            return Err(ModelError::invalid("the model has no graphs"));
        }
        if msg.entry as usize >= msg.graphs.len() {
            return Err(ModelError::invalid(format!(
                "the entry graph {} does not exist",
                msg.entry
            )));
        }
        let mut abstracts = HashMap::new();
        for (i, n) in msg.nodes.iter().enumerate() {
            let id = i as u32;
            let owner = match n.owner {
                0 => None,
                g if (g as usize) <= msg.graphs.len() => Some(GraphId::new(g as usize - 1)),
                g => {
                    return Err(ModelError::node(
                        id,
                        format!("owner graph {} does not exist", g - 1),
                    ));
                }
            };
            let name = match n.name {
                0 => None,
                s => Some(Arc::from(self.string(s - 1, &format!("node {id}"))?)),
            };
            let kind = match n.kind.as_ref() {
                None => return Err(ModelError::node(id, "a node without a kind")),
                Some(schema::node::Kind::Parameter(_)) => NodeKind::Parameter,
                Some(schema::node::Kind::Value(c)) => NodeKind::Value(self.constant(c, id, 0)?),
                Some(schema::node::Kind::Apply(a)) => {
                    if a.inputs.is_empty() {
                        return Err(ModelError::node(id, "a call without a callee"));
                    }
                    let inputs = a
                        .inputs
                        .iter()
                        .map(|&x| self.node_index(x, &|| format!("an input of node {id}")))
                        .collect::<Result<_, _>>()?;
                    NodeKind::Apply(inputs)
                }
            };
            if matches!(kind, NodeKind::Value(_)) != owner.is_none() {
                return Err(ModelError::node(
                    id,
                    "a constant has an owner graph, or another node has none",
                ));
            }
            let inlined = match &n.inlined {
                None => None,
                Some(inl) => Some(Arc::new(self.inlined(inl, id)?)),
            };
            if let Some(t) = &n.r#type {
                abstracts.insert(NodeId::new(i), self.node_type(t, id)?);
            }
            self.module.nodes.push(Node {
                kind,
                owner,
                name,
                span: self.span(n.span.as_ref())?,
                inlined,
            });
        }
        for (i, g) in msg.graphs.iter().enumerate() {
            let graph = self.graph(g, i)?;
            self.module.graphs.push(graph);
        }
        self.check_parameters()?;
        self.check_acyclic()?;
        self.check_primitive_calls()?;
        Ok((GraphId::new(msg.entry as usize), abstracts))
    }

    fn inlined(&self, inl: &schema::Inlined, id: u32) -> Result<Inlined, ModelError> {
        let at = format!("node {id}");
        let mut calls = CallChain::default();
        for c in &inl.calls {
            let f = Arc::from(self.string(c.function, &at)?);
            calls = calls.then(&CallChain::call(f, self.span(c.span.as_ref())?));
        }
        Ok(Inlined {
            function: Arc::from(self.string(inl.function, &at)?),
            calls,
        })
    }

    fn node_type(&self, t: &schema::NodeType, id: u32) -> Result<Abs, ModelError> {
        let at = || format!("the type of node {id}");
        match t.kind.as_ref() {
            Some(schema::node_type::Kind::Tensor(t)) => {
                let s = self.tensor_type(Some(t), &at)?;
                Ok(Abs::tensor(TensorAbs::new(s.dtype, s.shape)))
            }
            Some(schema::node_type::Kind::Ref(r)) => {
                let s = self.tensor_type(r.tensor.as_ref(), &at)?;
                let shape: Option<Vec<usize>> = s.shape.iter().copied().collect();
                let shape = shape.ok_or_else(|| {
                    ModelError::node(id, "a Parameter's shape is not fully known")
                })?;
                let param = match r.parameter {
                    0 => None,
                    p => {
                        let p = self
                            .parameters
                            .get(p as usize - 1)
                            .cloned()
                            .ok_or_else(|| {
                                ModelError::node(id, format!("Parameter {} does not exist", p - 1))
                            })?;
                        if p.dtype() != s.dtype || p.shape() != shape.as_slice() {
                            return Err(ModelError::node(
                                id,
                                format!(
                                    "its type {} is not that of Parameter '{}'",
                                    s.text(),
                                    p.name()
                                ),
                            ));
                        }
                        Some(p)
                    }
                };
                Ok(Abs::Ref(Arc::new(RefAbs {
                    param,
                    dtype: s.dtype,
                    shape,
                })))
            }
            None => Err(ModelError::node(id, "a type without a kind")),
        }
    }

    fn graph(&self, g: &schema::Graph, i: usize) -> Result<Graph, ModelError> {
        let name = self.string(g.name, &format!("graph {i}"))?.to_string();
        let bad = |message: String| ModelError::Graph {
            graph: format!("{i} (@{name})"),
            message,
        };
        let kind = kind_of(g.kind).ok_or_else(|| bad(format!("unknown graph kind {}", g.kind)))?;
        let id = GraphId::new(i);
        let owned_by =
            |n: u32, want: fn(&NodeKind) -> bool, what: &str| -> Result<NodeId, ModelError> {
                let node = ((n as usize) < self.module.nodes.len())
                    .then(|| &self.module.nodes[NodeId::new(n as usize)])
                    .ok_or_else(|| bad(format!("{what} {n} does not exist")))?;
                if node.owner != Some(id) || !want(&node.kind) {
                    return Err(bad(format!("{what} {n} is not one of its own")));
                }
                Ok(NodeId::new(n as usize))
            };
        let params = g
            .params
            .iter()
            .map(|&p| owned_by(p, |k| matches!(k, NodeKind::Parameter), "parameter"))
            .collect::<Result<Vec<_>, _>>()?;
        let order = g
            .order
            .iter()
            .map(|&n| owned_by(n, |k| matches!(k, NodeKind::Apply(_)), "ordered node"))
            .collect::<Result<Vec<_>, _>>()?;
        let mut seen = std::collections::HashSet::new();
        if !params.iter().chain(&order).all(|n| seen.insert(*n)) {
            return Err(bad("a node is listed twice".into()));
        }
        let output = match g.output {
            0 => None,
            o => Some(self.node_index(o - 1, &|| format!("the output of graph {i}"))?),
        };
        let signature = match &g.signature {
            Some(s) => Some(self.signature(s, 0)?),
            None => None,
        };
        Ok(Graph {
            name,
            function: Arc::from(self.string(g.function, &format!("graph {i}"))?),
            kind,
            params,
            output,
            order,
            span: self.span(g.span.as_ref())?,
            signature,
            iterates: Vec::new(),
        })
    }

    /// Every Parameter node is in its owner's parameter list.
    fn check_parameters(&self) -> Result<(), ModelError> {
        let mut listed = std::collections::HashSet::new();
        for g in self.module.graphs.values() {
            listed.extend(g.params.iter().copied());
        }
        for (id, n) in self.module.nodes.iter() {
            if matches!(n.kind, NodeKind::Parameter) && !listed.contains(&id) {
                return Err(ModelError::node(
                    id.index() as u32,
                    "a parameter in no graph's parameter list",
                ));
            }
        }
        Ok(())
    }

    /// Every call of a primitive has its arguments bound as the compiler binds them: one per
    /// parameter of its signature (more where it collects `*args`, and an effect state). The executor calls the
    /// primitive's implementation with them as they are.
    fn check_primitive_calls(&self) -> Result<(), ModelError> {
        for (id, n) in self.module.nodes.iter() {
            let NodeKind::Apply(inputs) = &n.kind else {
                continue;
            };
            let NodeKind::Value(Const::Prim(p)) = &self.module.nodes[inputs[0]].kind else {
                continue;
            };
            let sig = p.signature();
            let (given, want) = (inputs.len() - 1, sig.params.len());
            // The auto-monad stage passes an effectful primitive its state as one more argument.
            let e = p.effects();
            let state = usize::from(e.ordered());
            let fits = (want..=want + state).contains(&given) || (sig.varargs && given > want);
            if !fits {
                return Err(ModelError::node(
                    id.index() as u32,
                    format!(
                        "{} takes {want} arguments here, the call passes {given}",
                        p.name()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Apply inputs form a DAG (graph constants are not edges, so recursion is allowed).
    fn check_acyclic(&self) -> Result<(), ModelError> {
        let n = self.module.nodes.len();
        // 0: unvisited, 1: on the stack, 2: done.
        let mut state = vec![0u8; n];
        for root in 0..n {
            if state[root] != 0 {
                continue;
            }
            let mut stack = vec![(root, 0usize)];
            state[root] = 1;
            while let Some(&mut (v, ref mut next)) = stack.last_mut() {
                let inputs = match &self.module.nodes[NodeId::new(v)].kind {
                    NodeKind::Apply(inputs) => inputs.as_slice(),
                    _ => &[],
                };
                if let Some(&w) = inputs.get(*next) {
                    *next += 1;
                    let w = w.index();
                    match state[w] {
                        0 => {
                            state[w] = 1;
                            stack.push((w, 0));
                        }
                        1 => {
                            return Err(ModelError::node(
                                v as u32,
                                format!("its inputs reach it again through node {w}"),
                            ));
                        }
                        _ => {}
                    }
                } else {
                    state[v] = 2;
                    stack.pop();
                }
            }
        }
        Ok(())
    }

    fn inputs(
        &self,
        entry: GraphId,
        abstracts: &HashMap<NodeId, Abs>,
    ) -> Result<Vec<InputSpec>, ModelError> {
        let params = &self.module.graphs[entry].params;
        if params.len() != self.msg.inputs.len() {
            return Err(ModelError::invalid(format!(
                "the entry takes {} parameters but the model lists {} inputs",
                params.len(),
                self.msg.inputs.len()
            )));
        }
        let mut out = Vec::with_capacity(params.len());
        for (i, (input, &p)) in self.msg.inputs.iter().zip(params).enumerate() {
            let at = || format!("input {i} ('{}')", input.name);
            let kind = match input.kind.as_ref() {
                Some(schema::input::Kind::Tensor(t)) => {
                    let spec = self.tensor_type(Some(t), &at)?;
                    let declared = match abstracts.get(&p) {
                        Some(Abs::Tensor(t)) => t.dtype == spec.dtype && t.shape == spec.shape,
                        _ => false,
                    };
                    if !declared {
                        return Err(ModelError::invalid(format!(
                            "{}: its type {} is not the entry parameter's",
                            at(),
                            spec.text()
                        )));
                    }
                    InputKind::Tensor(spec)
                }
                Some(schema::input::Kind::Fixed(c)) => {
                    InputKind::Fixed(self.constant(c, p.index() as u32, 0)?)
                }
                None => return Err(ModelError::invalid(format!("{}: no kind", at()))),
            };
            out.push(InputSpec {
                name: input.name.clone(),
                kind,
            });
        }
        Ok(out)
    }

    fn outputs(&self) -> Result<Vec<OutputSpec>, ModelError> {
        let mut out = Vec::with_capacity(self.msg.outputs.len());
        for (i, o) in self.msg.outputs.iter().enumerate() {
            let at = || format!("output {i} ('{}')", o.name);
            let kind = match o.kind.as_ref() {
                Some(schema::value_info::Kind::Tensor(t)) => {
                    OutputKind::Tensor(self.tensor_type(Some(t), &at)?)
                }
                Some(schema::value_info::Kind::Scalar(s)) => {
                    OutputKind::Scalar(ScalarKind::from_name(s).ok_or_else(|| {
                        ModelError::invalid(format!("{}: unknown scalar kind '{s}'", at()))
                    })?)
                }
                None => return Err(ModelError::invalid(format!("{}: no kind", at()))),
            };
            out.push(OutputSpec {
                name: o.name.clone(),
                kind,
            });
        }
        Ok(out)
    }

    fn result(
        &self,
        r: Option<&schema::ResultShape>,
        leaves: usize,
        depth: usize,
    ) -> Result<ResultTree, ModelError> {
        use schema::result_shape::Kind;
        if depth > self.limits.max_depth {
            return Err(ModelError::invalid("the result nests too deeply"));
        }
        let items = |l: &schema::ResultList| -> Result<Vec<ResultTree>, ModelError> {
            l.items
                .iter()
                .map(|i| self.result(Some(i), leaves, depth + 1))
                .collect()
        };
        Ok(match r.and_then(|r| r.kind.as_ref()) {
            None => return Err(ModelError::invalid("the result's structure is missing")),
            Some(Kind::Leaf(i)) if (*i as usize) < leaves => ResultTree::Leaf(*i as usize),
            Some(Kind::Leaf(i)) => {
                return Err(ModelError::invalid(format!(
                    "the result names output {i}, which does not exist"
                )));
            }
            Some(Kind::Tuple(l)) => ResultTree::Tuple(items(l)?),
            Some(Kind::List(l)) => ResultTree::List(items(l)?),
            Some(Kind::None(_)) => ResultTree::None,
        })
    }
}

//! The module: typed arenas of graphs and nodes.
//!
//! Nodes are created through the module and never freed; a node is alive while something reaches
//! it. Parameters and Apply nodes (CNodes) are owned by one graph; Value nodes belong to no graph.
//! An edge from a node of graph `g` to a node owned by another graph is a free variable of `g`.

use std::collections::HashMap;
use std::sync::Arc;

use cranelift_entity::PrimaryMap;

use crate::{CallChain, Const, GraphId, NodeId, Prim, Signature, SourceMap, Span};

#[derive(Clone, Debug)]
pub enum NodeKind {
    /// A formal parameter of its owner graph.
    Parameter,
    /// A constant.
    Value(Const),
    /// A call (CNode): `inputs[0]` is the callee, the rest are arguments.
    Apply(Vec<NodeId>),
}

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: NodeKind,
    /// Owner graph; `None` for Value nodes.
    pub owner: Option<GraphId>,
    /// The Python variable the node is bound to (or the parameter name), for dumps.
    pub name: Option<Arc<str>>,
    pub span: Span,
    /// For a node the inliner copied into another function: where it came from, so that
    /// tracebacks still show the calls it was inlined through.
    pub inlined: Option<Arc<Inlined>>,
}

/// The origin of an inlined node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inlined {
    /// The Python function the node was written in.
    pub function: Arc<str>,
    /// The calls it was inlined through, outermost first: the function containing each call
    /// and the call's span.
    pub calls: CallChain,
}

/// What a graph stands for; block graphs are pieces of one Python function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphKind {
    /// A Python `def` (its entry block).
    Function,
    /// A `lambda`.
    Lambda,
    /// A module-level expression evaluated when the module loads.
    ModuleInit,
    /// `if` true branch (`✓`).
    TrueBranch,
    /// `if` false branch (`✗`).
    FalseBranch,
    /// Code after a branch or loop, where paths join (`↓`).
    Join,
    /// Loop header: tests the condition each iteration (`↵`).
    LoopHeader,
    /// Loop body (`↻`).
    LoopBody,
    /// A chain of elementwise tensor operations the optimizer fused: evaluated as one kernel
    /// in one pass over memory.
    Fused,
}

impl GraphKind {
    /// Name prefix in dumps, as MindSpore's parser writes it.
    pub fn marker(self) -> &'static str {
        match self {
            GraphKind::Function | GraphKind::Lambda | GraphKind::ModuleInit => "",
            GraphKind::TrueBranch => "✓",
            GraphKind::FalseBranch => "✗",
            GraphKind::Join => "↓",
            GraphKind::LoopHeader => "↵",
            GraphKind::LoopBody => "↻",
            GraphKind::Fused => "",
        }
    }

    pub fn is_block(self) -> bool {
        !matches!(
            self,
            GraphKind::Function | GraphKind::Lambda | GraphKind::ModuleInit | GraphKind::Fused
        )
    }
}

#[derive(Clone, Debug)]
pub struct Graph {
    /// Unique name in the module.
    pub name: String,
    /// The Python function this graph belongs to (for tracebacks), e.g. `fibonacci`.
    pub function: Arc<str>,
    pub kind: GraphKind,
    pub params: Vec<NodeId>,
    pub output: Option<NodeId>,
    /// Apply nodes in source evaluation order. The reference VM runs them in this order, so
    /// effects and errors happen where Python would have them.
    pub order: Vec<NodeId>,
    pub span: Span,
    /// Python-level signature of a function graph (names and defaults for keyword binding).
    pub signature: Option<Signature>,
    /// For the header of a `for` loop: the sequences it iterates (nodes of the enclosing
    /// graph). Inference unrolls a loop over a short tuple whose items differ in type.
    pub iterates: Vec<NodeId>,
}

/// Graphs, nodes and the sources they came from.
#[derive(Default)]
pub struct Module {
    pub graphs: PrimaryMap<GraphId, Graph>,
    pub nodes: PrimaryMap<NodeId, Node>,
    pub sources: SourceMap,
    /// Host objects used as values, by the graph that stands for each (see [`ObjectValue`]).
    pub objects: HashMap<GraphId, ObjectValue>,
    /// The grad stage's copies of those objects' graphs (lifted, J), with the object's graph: the value
    /// differentiated code holds for an object (its attributes are not read there).
    pub differentiated_objects: HashMap<GraphId, GraphId>,
    /// The source regions of `with placement(...)` blocks and their devices (see
    /// [`Module::device_of`]).
    pub placements: Vec<Placement>,
}

/// A `with anfora.placement(device):` block: the operations written in `region` (the block's
/// body) run on `device`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub region: Span,
    pub device: anfora_tensor::Device,
}

/// A host object (a Cell, a GradOperation) used as a value in compiled code: passed, stored in
/// a tuple, returned or chosen by a condition. Its value is a graph, the one its calls run
/// (its `__call__`, a Cell's `construct`, or one raising `TypeError` for an object that
/// cannot be called), so calls and `grad` treat it as any function;
/// inference reads its attributes here, where the resolve stage put every attribute name
/// compiled code reads through a value.
#[derive(Clone, Debug)]
pub struct ObjectValue {
    /// Its Python type's name, for messages.
    pub type_name: Arc<str>,
    /// Attributes by name: their constants, or why compiled code cannot use them. A name
    /// missing here is an attribute the object does not have.
    pub attrs: HashMap<Arc<str>, Result<Const, AttrRefusal>>,
}

/// Why an attribute of a host object cannot be used in compiled code.
#[derive(Clone, Debug)]
pub struct AttrRefusal {
    pub message: String,
    pub hint: String,
}

impl Module {
    pub fn new() -> Module {
        Module::default()
    }

    /// The device a placement block gives node `n`: that of the innermost block containing
    /// the node's source, or, for a node inlined from a function, the innermost block
    /// containing one of the calls it was inlined through (innermost call first). Nodes that
    /// transformations derive from one (its gradient, an optimized form) keep its span, so
    /// they run where it does.
    pub fn device_of(&self, n: NodeId) -> Option<anfora_tensor::Device> {
        if self.placements.is_empty() {
            return None;
        }
        let node = &self.nodes[n];
        let innermost = |span: Span| {
            self.placements
                .iter()
                .filter(|p| {
                    p.region.file == span.file
                        && p.region.start <= span.start
                        && span.end <= p.region.end
                })
                .min_by_key(|p| p.region.end - p.region.start)
                .map(|p| p.device)
        };
        if let Some(d) = innermost(node.span) {
            return Some(d);
        }
        let calls = node.inlined.as_ref()?.calls.to_vec();
        calls.iter().rev().find_map(|(_, span)| innermost(*span))
    }

    // ---- construction -------------------------------------------------------------------

    pub fn add_graph(
        &mut self,
        name: impl Into<String>,
        function: Arc<str>,
        kind: GraphKind,
        span: Span,
    ) -> GraphId {
        self.graphs.push(Graph {
            name: name.into(),
            function,
            kind,
            params: Vec::new(),
            output: None,
            order: Vec::new(),
            span,
            signature: None,
            iterates: Vec::new(),
        })
    }

    pub fn add_param(&mut self, graph: GraphId, name: &str, span: Span) -> NodeId {
        let id = self.nodes.push(Node {
            kind: NodeKind::Parameter,
            owner: Some(graph),
            name: Some(Arc::from(name)),
            span,
            inlined: None,
        });
        self.graphs[graph].params.push(id);
        id
    }

    /// A new Value node holding `c`.
    pub fn value(&mut self, c: Const) -> NodeId {
        self.value_at(c, Span::NONE)
    }

    pub fn value_at(&mut self, c: Const, span: Span) -> NodeId {
        self.nodes.push(Node {
            kind: NodeKind::Value(c),
            owner: None,
            name: None,
            span,
            inlined: None,
        })
    }

    /// A new Apply node owned by `graph`, appended to its evaluation order.
    pub fn apply(&mut self, graph: GraphId, inputs: Vec<NodeId>, span: Span) -> NodeId {
        let id = self.apply_unordered(graph, inputs, span);
        self.graphs[graph].order.push(id);
        id
    }

    /// A new Apply node that is not part of the graph's evaluation order (it runs when its
    /// value is needed, e.g. a tail call that is the graph's output).
    pub fn apply_unordered(&mut self, graph: GraphId, inputs: Vec<NodeId>, span: Span) -> NodeId {
        debug_assert!(!inputs.is_empty(), "an Apply node needs a callee");
        self.nodes.push(Node {
            kind: NodeKind::Apply(inputs),
            owner: Some(graph),
            name: None,
            span,
            inlined: None,
        })
    }

    /// Puts Apply node `new` of `graph` in its evaluation order right before `at` (at the end
    /// when `at` is not in the order: a tail call runs after it).
    pub fn insert_before(&mut self, graph: GraphId, new: NodeId, at: NodeId) {
        let order = &mut self.graphs[graph].order;
        let i = order.iter().position(|&x| x == at).unwrap_or(order.len());
        order.insert(i, new);
    }

    /// `prim(args...)` in `graph`, in evaluation order.
    pub fn apply_prim(
        &mut self,
        graph: GraphId,
        prim: Prim,
        args: &[NodeId],
        span: Span,
    ) -> NodeId {
        let callee = self.value(Const::Prim(prim));
        let mut inputs = Vec::with_capacity(args.len() + 1);
        inputs.push(callee);
        inputs.extend_from_slice(args);
        self.apply(graph, inputs, span)
    }

    pub fn set_output(&mut self, graph: GraphId, output: NodeId) {
        self.graphs[graph].output = Some(output);
    }

    pub fn set_name(&mut self, node: NodeId, name: &str) {
        self.nodes[node].name = Some(Arc::from(name));
    }

    // ---- access -------------------------------------------------------------------------

    /// The function a node was written in and the calls it was inlined through (empty if it
    /// was not inlined), outermost first.
    pub fn origin(&self, id: NodeId) -> (Arc<str>, CallChain) {
        let node = &self.nodes[id];
        match &node.inlined {
            Some(i) => (i.function.clone(), i.calls.clone()),
            None => (
                node.owner
                    .map(|g| self.graphs[g].function.clone())
                    .unwrap_or_else(|| Arc::from("<module>")),
                CallChain::default(),
            ),
        }
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    pub fn graph(&self, id: GraphId) -> &Graph {
        &self.graphs[id]
    }

    /// Inputs of an Apply node; empty for other nodes.
    pub fn inputs(&self, id: NodeId) -> &[NodeId] {
        match &self.nodes[id].kind {
            NodeKind::Apply(inputs) => inputs,
            _ => &[],
        }
    }

    pub fn inputs_mut(&mut self, id: NodeId) -> Option<&mut Vec<NodeId>> {
        match &mut self.nodes[id].kind {
            NodeKind::Apply(inputs) => Some(inputs),
            _ => None,
        }
    }

    pub fn constant(&self, id: NodeId) -> Option<&Const> {
        match &self.nodes[id].kind {
            NodeKind::Value(c) => Some(c),
            _ => None,
        }
    }

    pub fn is_apply(&self, id: NodeId) -> bool {
        matches!(self.nodes[id].kind, NodeKind::Apply(_))
    }

    pub fn is_param(&self, id: NodeId) -> bool {
        matches!(self.nodes[id].kind, NodeKind::Parameter)
    }

    /// The primitive an Apply node calls directly, if its callee is a primitive constant.
    pub fn callee_prim(&self, id: NodeId) -> Option<Prim> {
        let callee = *self.inputs(id).first()?;
        self.constant(callee)?.as_prim()
    }

    /// The graph an Apply node calls directly, if its callee is a graph constant.
    pub fn callee_graph(&self, id: NodeId) -> Option<GraphId> {
        let callee = *self.inputs(id).first()?;
        self.constant(callee)?.as_graph()
    }

    /// The output of `graph` when it is a tail call: an Apply node of `graph` after which
    /// nothing is evaluated (it is the last of the evaluation order, or not in it).
    pub fn tail_call(&self, graph: GraphId) -> Option<NodeId> {
        let g = &self.graphs[graph];
        let out = g.output?;
        (self.is_apply(out)
            && self.nodes[out].owner == Some(graph)
            && (g.order.last() == Some(&out) || !g.order.contains(&out)))
        .then_some(out)
    }

    /// Apply nodes owned by `graph` that its output or evaluation order reaches, in an order
    /// where every node comes after the nodes of the same graph it uses: first the evaluation
    /// order, then the rest (e.g. the output tail call) as needed.
    pub fn graph_nodes(&self, graph: GraphId) -> Vec<NodeId> {
        let g = &self.graphs[graph];
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        let roots = g.order.iter().copied().chain(g.output);
        for root in roots {
            self.post_order(graph, root, &mut seen, &mut out);
        }
        out
    }

    fn post_order(
        &self,
        graph: GraphId,
        root: NodeId,
        seen: &mut std::collections::HashSet<NodeId>,
        out: &mut Vec<NodeId>,
    ) {
        // Iterative DFS: graphs from long straight-line functions must not overflow the stack.
        let mut stack = vec![(root, 0usize)];
        while let Some((n, i)) = stack.pop() {
            if i == 0
                && (self.nodes[n].owner != Some(graph) || !self.is_apply(n) || !seen.insert(n))
            {
                continue;
            }
            let inputs = self.inputs(n);
            if i < inputs.len() {
                stack.push((n, i + 1));
                stack.push((inputs[i], 0));
            } else {
                out.push(n);
            }
        }
    }

    /// Replaces every use of `old` by `new` in the Apply nodes of `graphs` and in their outputs.
    pub fn replace_uses(&mut self, graphs: &[GraphId], old: NodeId, new: NodeId) {
        for &g in graphs {
            for n in self.graph_nodes(g) {
                if let Some(inputs) = self.inputs_mut(n) {
                    for i in inputs.iter_mut() {
                        if *i == old {
                            *i = new;
                        }
                    }
                }
            }
            if self.graphs[g].output == Some(old) {
                self.graphs[g].output = Some(new);
            }
        }
    }

    /// Replaces every use of each key of `repl` by its value (following chains, see
    /// [`replaced`]) in the Apply nodes and outputs of `graphs`, and drops the replaced nodes
    /// from their evaluation orders.
    pub fn apply_replacements(&mut self, graphs: &[GraphId], repl: &HashMap<NodeId, NodeId>) {
        for &g in graphs {
            for n in self.graph_nodes(g) {
                if let Some(inputs) = self.inputs_mut(n) {
                    for i in inputs.iter_mut() {
                        *i = replaced(repl, *i);
                    }
                }
            }
            let graph = &mut self.graphs[g];
            if let Some(o) = graph.output {
                graph.output = Some(replaced(repl, o));
            }
            graph.order.retain(|n| !repl.contains_key(n));
        }
    }
}

/// What `n` becomes under a batch of replacements, following chains (`a → b → c` gives `c`).
pub fn replaced(repl: &HashMap<NodeId, NodeId>, mut n: NodeId) -> NodeId {
    while let Some(&m) = repl.get(&n) {
        n = m;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_orders_nodes() {
        let mut m = Module::new();
        let g = m.add_graph("f", Arc::from("f"), GraphKind::Function, Span::NONE);
        let x = m.add_param(g, "x", Span::NONE);
        let one = m.value(Const::Int(1));
        let add = m.apply_prim(g, Prim::Add, &[x, one], Span::NONE);
        let neg_callee = m.value(Const::Prim(Prim::Neg));
        let out = m.apply_unordered(g, vec![neg_callee, add], Span::NONE);
        m.set_output(g, out);
        assert_eq!(m.graph_nodes(g), vec![add, out]);
        assert_eq!(m.callee_prim(add), Some(Prim::Add));
        assert_eq!(m.inputs(add), &[m.inputs(add)[0], x, one]);
        m.replace_uses(&[g], add, x);
        assert_eq!(m.inputs(out)[1], x);
    }
}

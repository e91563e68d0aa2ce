//! Editing a loaded model's entry graph: who uses a node, new primitive calls with their types,
//! and the cleanup that drops what a rewrite left unused (dead calls, and the Parameter loads
//! that only the state chain still threads).

use std::collections::HashMap;

use anfora_ir::{Const, GraphId, Module, NodeId, Prim, Span};
use anfora_ops::abs::from_value;
use anfora_ops::call::infer_prim;
use anfora_ops::value::from_const;
use anfora_ops::{Abs, Value};
use anfora_tensor::Tensor;

use crate::ConvertError;

/// A loaded model's graphs and node types, being rewritten.
pub struct Editor<'a> {
    pub module: &'a mut Module,
    pub entry: GraphId,
    pub abstracts: &'a mut HashMap<NodeId, Abs>,
}

impl Editor<'_> {
    /// The type of node `n`: its constant's, or the one inference or a rewrite gave it.
    pub fn abs(&self, n: NodeId) -> Abs {
        match self.module.constant(n) {
            Some(c) => from_value(&from_const(c, &mut |_| Value::None)),
            None => self.abstracts.get(&n).cloned().unwrap_or(Abs::Any),
        }
    }

    /// The users of every node of the entry graph (a node used twice by one user counts twice).
    pub fn users(&self) -> HashMap<NodeId, Vec<NodeId>> {
        let mut users: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
        for n in self.module.graph_nodes(self.entry) {
            for &i in self.module.inputs(n) {
                users.entry(i).or_default().push(n);
            }
        }
        users
    }

    /// A constant node.
    pub fn constant(&mut self, c: Const) -> NodeId {
        self.module.value(c)
    }

    pub fn tensor(&mut self, t: Tensor) -> NodeId {
        self.constant(Const::Tensor(t))
    }

    /// `prim(args...)` placed right before `at` in the entry graph's order, with the type its
    /// rule gives.
    pub fn call_before(
        &mut self,
        at: NodeId,
        prim: Prim,
        args: &[NodeId],
        span: Span,
    ) -> Result<NodeId, ConvertError> {
        let arg_abs: Vec<Abs> = args.iter().map(|&a| self.abs(a)).collect();
        let abs = infer_prim(prim, &arg_abs)
            .map_err(|e| ConvertError::Rewrite(format!("{}: {}", prim.name(), e.0)))?;
        let callee = self.module.value(Const::Prim(prim));
        let mut inputs = vec![callee];
        inputs.extend_from_slice(args);
        let n = self.module.apply_unordered(self.entry, inputs, span);
        self.module.insert_before(self.entry, n, at);
        self.abstracts.insert(n, abs);
        Ok(n)
    }

    /// The value `n` gives: through `Depend(value, state)` (which only orders effects; a
    /// converted inference model reads Parameters and writes nothing).
    pub fn value_of(&self, mut n: NodeId) -> NodeId {
        while self.module.callee_prim(n) == Some(Prim::Depend) {
            n = self.module.inputs(n)[1];
        }
        n
    }

    /// Puts the body of every call of a fused graph (the optimizer's elementwise chains) back
    /// into the entry graph, so the rewrites see its operations; the runtime's lowering fuses
    /// what remains of them again.
    pub fn inline_fused(&mut self) {
        for n in self.module.graph_nodes(self.entry) {
            let inputs = self.module.inputs(n).to_vec();
            let Some(&Const::Graph(g)) = self.module.constant(inputs[0]) else {
                continue;
            };
            if self.module.graph(g).kind != anfora_ir::GraphKind::Fused {
                continue;
            }
            let params = self.module.graph(g).params.clone();
            let mut map: HashMap<NodeId, NodeId> = params
                .into_iter()
                .zip(inputs[1..].iter().copied())
                .collect();
            for b in self.module.graph_nodes(g) {
                let body_inputs: Vec<NodeId> = (self.module.inputs(b).iter())
                    .map(|i| map.get(i).copied().unwrap_or(*i))
                    .collect();
                let span = self.module.node(b).span;
                let copy = self.module.apply_unordered(self.entry, body_inputs, span);
                self.module.insert_before(self.entry, copy, n);
                if let Some(a) = self.abstracts.get(&b).cloned() {
                    self.abstracts.insert(copy, a);
                }
                map.insert(b, copy);
            }
            let out = self
                .module
                .graph(g)
                .output
                .expect("a fused graph has an output");
            let value = map.get(&out).copied().unwrap_or(out);
            // The call's uses read the copy, and the call leaves the order.
            self.module
                .apply_replacements(&[self.entry], &HashMap::from([(n, value)]));
        }
    }

    /// The Parameter a `Load(ref, state)` node reads, when `n` is one.
    pub fn loaded_param(&self, n: NodeId) -> Option<anfora_ops::ParamRef> {
        if self.module.callee_prim(n) != Some(Prim::Load) {
            return None;
        }
        match self.module.constant(self.module.inputs(n)[1]) {
            Some(Const::Ref(p)) => Some(p.clone()),
            _ => None,
        }
    }

    /// The tensor node `n` holds when it is known before the model runs: a constant, or a
    /// Parameter's load.
    pub fn known_tensor(&self, n: NodeId) -> Option<Tensor> {
        match self.module.constant(n) {
            Some(Const::Tensor(t)) => Some(t.clone()),
            Some(_) => None,
            None => self.loaded_param(n).map(|p| p.get()),
        }
    }

    /// Drops what the rewrites left unused: Parameter loads whose only users are the state
    /// chain (`UpdateState(s, load)` becomes `s`), then calls nothing uses (the primitives
    /// here raise nothing a model relies on), until nothing changes.
    pub fn clean(&mut self) {
        loop {
            let users = self.users();
            let output = self.module.graph(self.entry).output;
            let mut repl = HashMap::new();
            for n in self.module.graph_nodes(self.entry) {
                let used = users.get(&n).map_or(0, Vec::len) > 0 || output == Some(n);
                if !used && removable(self.module.callee_prim(n)) {
                    repl.insert(n, n);
                    continue;
                }
                if self.loaded_param(n).is_none() {
                    continue;
                }
                let us = users.get(&n).map(Vec::as_slice).unwrap_or_default();
                let only_state = us.iter().all(|&u| {
                    self.module.callee_prim(u) == Some(Prim::UpdateState)
                        && self.module.inputs(u)[2] == n
                });
                if only_state && !us.is_empty() {
                    for &u in us {
                        repl.insert(u, self.module.inputs(u)[1]);
                    }
                }
            }
            if repl.is_empty() {
                return;
            }
            // A dead node maps to its callee's constant, which nothing replaces: nothing uses
            // the node, so only its place in the order goes.
            for (k, v) in repl.iter_mut() {
                if k == v {
                    *v = self.module.inputs(*k)[0];
                }
            }
            self.module.apply_replacements(&[self.entry], &repl);
        }
    }
}

/// Calls a cleanup may drop when unused: pure ones, and the reads and state threading of
/// Parameters (a converted inference model writes none).
fn removable(p: Option<Prim>) -> bool {
    p.is_some_and(|p| p.is_pure() || matches!(p, Prim::Load | Prim::UpdateState | Prim::Depend))
}

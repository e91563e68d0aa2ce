//! Loops (and tail recursion) differentiated in constant depth.
//!
//! A loop is a cycle of tail calls between closed graphs (header, body, the blocks of the
//! body). The plain J transform is not tail recursive: `J(body)` calls `J(header)` and then
//! builds `(value, bprop)` from its result, and `bprop` of the body calls the header's bprop
//! before it applies its own rules; so both the forward and the backward pass of a loop of n
//! iterations would nest n calls (RecursionError past `max_depth`).
//!
//! Graphs on such a cycle are therefore transformed in continuation-passing style: `Jk(g)`
//! takes one more parameter `k`, the backward continuation of its caller, which maps the
//! sensitivities of `g`'s parameters to the sensitivities the whole loop returns.
//! - When `g` tail-calls a graph of its own cycle, `Jk(g)` tail-calls `Jk` of the callee (a
//!   Switch chooses between the `Jk` of its branches), passing its own backward graph as the
//!   callee's continuation: `B(ds)` takes the sensitivities of the call's arguments, applies
//!   `g`'s rules and tail-calls `k` with the sensitivities of `g`'s parameters. The forward
//!   pass runs as jumps; the backward pass runs the chain of continuations, newest first, as
//!   tail calls; each continuation keeps only what its rules read, and the sensitivities
//!   travel in arguments.
//! - Otherwise `Jk(g)` returns `(value, bprop)` like `J(g)`, and `bprop` ends by tail-calling
//!   `k` (this is how a loop's exit block starts the backward chain).
//!
//! Callers outside the cycle see the plain convention: `J(g)` is an entry that tail-calls
//! `Jk(g)` with the identity continuation `Bdone(ds) = ds`.

use std::collections::HashMap;

use anfora_ir::analysis::{reachable, strongly_connected};
use anfora_ir::{Const, GraphId, Module, NodeId, Prim};
use anfora_ops::def::Backward;

use crate::Transform;

/// The tail call ending a graph, when its callee is known by name.
pub(crate) struct TailCall {
    /// The output call.
    pub node: NodeId,
    /// `Switch(c, @a, @b)`, the callee, when it is one whose only use is this call.
    pub switch: Option<NodeId>,
    /// The graphs the call may reach.
    pub targets: Vec<GraphId>,
}

/// The tail call of graph `g` whose callee is a graph constant or a Switch between two.
pub(crate) fn tail_call(m: &Module, g: GraphId) -> Option<TailCall> {
    let node = m.tail_call(g)?;
    let callee = m.inputs(node)[0];
    if let Some(h) = m.constant(callee).and_then(Const::as_graph) {
        return Some(TailCall {
            node,
            switch: None,
            targets: vec![h],
        });
    }
    let ins = m.inputs(callee);
    if m.callee_prim(callee) != Some(Prim::Switch)
        || ins.len() != 4
        || m.node(callee).owner != Some(g)
        || m.inputs(node)[1..].contains(&callee)
    {
        return None;
    }
    let targets = ins[2..]
        .iter()
        .map(|&b| m.constant(b).and_then(Const::as_graph))
        .collect::<Option<Vec<_>>>()?;
    // The Switch must be used by the call alone (lifted graphs are closed, so only `g`'s own
    // nodes could use it), or its value would be a J-world function of the other convention.
    let used_elsewhere =
        (m.graph_nodes(g).into_iter()).any(|n| n != node && m.inputs(n).contains(&callee));
    (!used_elsewhere).then_some(TailCall {
        node,
        switch: Some(callee),
        targets,
    })
}

/// The graphs that lie on a cycle of tail calls, by cycle.
#[derive(Default)]
pub(crate) struct TailCycles {
    cycle: HashMap<GraphId, u32>,
    count: u32,
}

impl TailCycles {
    /// Records the cycles among the graphs reachable from the lifted function `root`.
    pub fn add(&mut self, m: &Module, root: GraphId) {
        let graphs: Vec<GraphId> = reachable(m, &[root]).into_iter().map(|(g, _)| g).collect();
        let edges: HashMap<GraphId, Vec<GraphId>> = (graphs.iter())
            .filter_map(|&g| Some((g, tail_call(m, g)?.targets)))
            .collect();
        let components = strongly_connected(&graphs, |g| edges.get(&g).map_or(&[], Vec::as_slice));
        for &g in &graphs {
            if components.cyclic[g] && !self.cycle.contains_key(&g) {
                self.cycle.insert(g, self.count + components.component[g]);
            }
        }
        self.count += graphs.len() as u32;
    }

    pub fn contains(&self, g: GraphId) -> bool {
        self.cycle.contains_key(&g)
    }

    /// Whether `a` and `b` lie on one cycle.
    fn same(&self, a: GraphId, b: GraphId) -> bool {
        self.cycle
            .get(&a)
            .is_some_and(|c| self.cycle.get(&b) == Some(c))
    }
}

impl Transform<'_> {
    /// The tail call of `g` that `Jk(g)` makes in continuation-passing style: one that may
    /// reach a graph of `g`'s own cycle.
    pub(crate) fn cycle_tail_call(&self, g: GraphId) -> Option<TailCall> {
        let t = tail_call(self.m, g)?;
        t.targets
            .iter()
            .any(|&h| self.cycles.same(g, h))
            .then_some(t)
    }

    /// Whether `g`'s continuation would be its caller's: `g` passes its parameters on to
    /// `t` unchanged and in order, and nothing else it computes has a sensitivity (a loop
    /// header: a comparison and a Switch). The callee's sensitivities are dense and of the
    /// parameters' types already, so `Jk(g)` passes its own `k` and keeps nothing per iteration.
    pub(crate) fn forwards(&self, g: GraphId, t: &TailCall) -> bool {
        self.m.inputs(t.node)[1..] == self.m.graph(g).params[..]
            && self.m.graph_nodes(g).into_iter().all(|n| {
                n == t.node
                    || self
                        .m
                        .callee_prim(n)
                        .is_some_and(|p| matches!(p.def().backward, Backward::Zero))
            })
    }

    /// `Jk(g)`, built by [`Transform::finish`].
    pub(crate) fn jk_graph(&mut self, g: GraphId) -> GraphId {
        if let Some(&j) = self.jk.get(&(g, self.integers)) {
            return j;
        }
        let jk = self.new_j_graph(g, "Jk");
        self.jk.insert((g, self.integers), jk);
        self.todo.push((g, jk, true, self.integers));
        jk
    }

    /// `J(g)` for `g` on a cycle: `J(g)(x...) = Jk(g)(x..., Bdone)`, where the identity
    /// `Bdone(ds) = ds` ends the chain of continuations. Each entry has its own `Bdone`, so
    /// inference gives it the one type of `g`'s sensitivities.
    pub(crate) fn entry(&mut self, g: GraphId, jg: GraphId) {
        let jk = self.jk_graph(g);
        let src = self.m.graph(g).clone();
        let done = self.m.add_graph(
            self.names.fresh(&format!("Bdone{}", src.name)),
            src.function.clone(),
            anfora_ir::GraphKind::Lambda,
            src.span,
        );
        let ds = self.m.add_param(done, "ds", src.span);
        self.m.set_output(done, ds);
        let mut call = vec![self.m.value(Const::Graph(jk))];
        call.extend(self.copy_params(g, jg));
        call.push(self.m.value(Const::Graph(done)));
        let out = self.apply(jg, call, src.span);
        self.m.set_output(jg, out);
    }
}

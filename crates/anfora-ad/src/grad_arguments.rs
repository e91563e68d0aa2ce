//! Functions that differentiate a function they receive as an argument, copied into their
//! callers.
//!
//! `def apply_grad(f, x): return grad(f)(x)` cannot be expanded on its own: the grad stage runs
//! before inference, and `f` is only a parameter there. When every call of such a function
//! passes its arguments directly, the function's body is copied into each caller, where the
//! argument is often a known function (this is how `GradOperation.__call__` works inside a
//! Cell). Only straight-line bodies without nested functions are copied, which keeps this a
//! plain substitution; anything else still gets E0501.

use std::collections::HashMap;

use anfora_ir::{Const, GraphId, Module, NodeId, NodeKind};

use crate::grad_calls;

/// Inlines, into every caller, each function holding a grad call whose function is one of its
/// own parameters. Returns whether anything changed.
pub(crate) fn copy_into_callers(m: &mut Module, roots: &[GraphId]) -> bool {
    let mut changed = false;
    // Each round removes one level of passing functions along; a bound stops runaway cases.
    for _ in 0..16 {
        let (graphs, calls) = grad_calls(m, roots);
        let targets: Vec<GraphId> = calls
            .iter()
            .filter(|&&(g, n)| {
                let f = m.inputs(n)[1];
                matches!(m.node(f).kind, NodeKind::Parameter) && m.node(f).owner == Some(g)
            })
            .map(|&(g, _)| g)
            .filter(|&g| straight_line(m, g))
            .collect();
        let mut round = false;
        for g in targets {
            if let Some(sites) = call_sites(m, &graphs, g) {
                for (h, c) in sites {
                    inline_call(m, &graphs, h, c, g);
                }
                round = true;
            }
        }
        if !round {
            break;
        }
        changed = true;
    }
    changed
}

/// Whether `g` reads only its own nodes and constants, and creates no functions.
fn straight_line(m: &Module, g: GraphId) -> bool {
    m.graph_nodes(g).iter().all(|&n| {
        m.inputs(n).iter().all(|&x| match &m.node(x).kind {
            NodeKind::Value(c) => !matches!(c, Const::Graph(_)),
            _ => m.node(x).owner == Some(g),
        })
    })
}

/// Every call of `g` (graph, call node), if `g` is used only as the callee of positional calls
/// with its number of parameters.
fn call_sites(m: &Module, graphs: &[GraphId], g: GraphId) -> Option<Vec<(GraphId, NodeId)>> {
    let is_g = |x: NodeId| matches!(m.constant(x), Some(Const::Graph(h)) if *h == g);
    let arity = m.graph(g).params.len();
    let mut sites = Vec::new();
    for &h in graphs {
        if m.graph(h).output.is_some_and(is_g) {
            return None;
        }
        for n in m.graph_nodes(h) {
            let inputs = m.inputs(n);
            if inputs[1..].iter().any(|&x| is_g(x)) {
                return None;
            }
            if is_g(inputs[0]) {
                if inputs.len() != arity + 1 {
                    return None;
                }
                sites.push((h, n));
            }
        }
    }
    (!sites.is_empty()).then_some(sites)
}

/// Replaces call `c` of `g` in `h` by a copy of `g`'s body.
fn inline_call(m: &mut Module, graphs: &[GraphId], h: GraphId, c: NodeId, g: GraphId) {
    let src = m.graph(g).clone();
    let mut map: HashMap<NodeId, NodeId> = HashMap::new();
    for (&p, &a) in src.params.iter().zip(&m.inputs(c)[1..]) {
        map.insert(p, a);
    }
    let ordered: std::collections::HashSet<NodeId> = src.order.iter().copied().collect();
    let mut copied_order = Vec::new();
    for n in m.graph_nodes(g) {
        let node = m.node(n).clone();
        let inputs: Vec<NodeId> = (m.inputs(n).iter())
            .map(|x| *map.get(x).unwrap_or(x))
            .collect();
        let copy = m.apply_unordered(h, inputs, node.span);
        m.nodes[copy].name = node.name.clone();
        m.nodes[copy].inlined = node.inlined.clone();
        if ordered.contains(&n) {
            copied_order.push((n, copy));
        }
        map.insert(n, copy);
    }
    // The copies run where the call ran, in the callee's evaluation order.
    let rank: HashMap<NodeId, usize> = src.order.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    copied_order.sort_by_key(|(n, _)| rank[n]);
    let copies: Vec<NodeId> = copied_order.into_iter().map(|(_, c)| c).collect();
    let order = &mut m.graphs[h].order;
    match order.iter().position(|&x| x == c) {
        Some(i) => {
            order.splice(i..=i, copies);
        }
        None => order.extend(copies),
    }
    let out = src.output.map(|o| *map.get(&o).unwrap_or(&o));
    if let Some(out) = out {
        m.replace_uses(graphs, c, out);
    }
}

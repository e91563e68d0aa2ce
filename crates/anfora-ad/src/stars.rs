//! Star and `**` calls of functions named in the program (`f(*t)`, `f(*t, **d)`), in the
//! graphs a differentiated function reaches: each becomes a plain call of `f` with the items
//! of `StarBind(f, ...)` / `DictBind(f, ...)`, its arguments bound to `f`'s signature. The
//! grad stage then differentiates it as any call, and the binding's rule routes each
//! parameter's sensitivity back to the argument bound to it. (The tuple's length and the
//! dict's keys are only known to inference, which binds both.)

use anfora_ir::analysis::reachable;
use anfora_ir::{Const, GraphId, Module, NodeId, Prim};

/// Whether `n` is a binding whose first argument is the callee itself: lambda lifting and the
/// J transform leave it as written (its signature binds; it is not called there).
pub(crate) fn binds_callee(m: &Module, n: NodeId) -> bool {
    m.callee_prim(n)
        .is_some_and(anfora_ops::call::binds_arguments)
}

/// Rewrites the star calls of the graphs `root` reaches.
pub(crate) fn bind_star_calls(m: &mut Module, root: GraphId) {
    for (g, _) in reachable(m, &[root]) {
        let order = m.graph(g).order.clone();
        let mut new_order = Vec::with_capacity(order.len());
        for &n in &order {
            new_order.extend(bind(m, g, n));
            new_order.push(n);
        }
        // A tail call is not in the order: what it reads runs last.
        if let Some(t) = m.tail_call(g).filter(|t| !order.contains(t)) {
            new_order.extend(bind(m, g, t));
        }
        m.graphs[g].order = new_order;
    }
}

/// Rewrites call `n` of `g` if it is a star call of a graph with a signature; the nodes made
/// for it, to run before it.
fn bind(m: &mut Module, g: GraphId, n: NodeId) -> Vec<NodeId> {
    let binding = match m.callee_prim(n) {
        Some(Prim::CallStar) => Prim::StarBind,
        Some(Prim::CallDict) => Prim::DictBind,
        _ => return Vec::new(),
    };
    let ins = m.inputs(n).to_vec();
    let Some(h) = m.constant(ins[1]).and_then(Const::as_graph) else {
        return Vec::new();
    };
    if m.graph(h).signature.is_none() {
        return Vec::new();
    }
    let span = m.node(n).span;
    let mut bind_ins = vec![m.value(Const::Prim(binding))];
    bind_ins.extend(&ins[1..]);
    let bound = m.apply_unordered(g, bind_ins, span);
    let get = m.value(Const::Prim(Prim::TupleGetItem));
    let mut made = vec![bound];
    let mut call = vec![ins[1]];
    for i in 0..m.graph(h).params.len() {
        let k = m.value(Const::Int(i as i64));
        let item = m.apply_unordered(g, vec![get, bound, k], span);
        made.push(item);
        call.push(item);
    }
    if let Some(inputs) = m.inputs_mut(n) {
        *inputs = call;
    }
    made
}

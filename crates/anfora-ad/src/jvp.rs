//! Forward mode by reverse mode twice: `jvp(f, primals, tangents)` is `(f(*primals), J t)`.
//! The pullback `u -> vjp(f, *primals)[1](u)` is linear (it is `u -> J^T u`), so its own vjp,
//! taken at any point and applied to `t`, is `J t`. The rewrite produces a `vjp` of a graph
//! holding a `vjp` (a second-order gradient), which the grad stage expands like any other;
//! after specialization the optimizer removes the machinery as it does for `grad`.

use anfora_ir::codes;
use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, GraphId, GraphKind, Module, NodeId, Prim};

use crate::Namer;

/// The items of a tuple written in the program (a `MakeTuple` or a constant tuple).
fn tuple_items(m: &mut Module, t: NodeId) -> Option<Vec<NodeId>> {
    if m.callee_prim(t) == Some(Prim::MakeTuple) {
        return Some(m.inputs(t)[1..].to_vec());
    }
    match m.constant(t) {
        Some(Const::Tuple(xs)) => {
            let xs = xs.to_vec();
            Some(xs.into_iter().map(|c| m.value(c)).collect())
        }
        _ => None,
    }
}

/// Rewrites the `jvp` call `n` of graph `h` into a call of `f` and a `vjp` of the pullback
/// (which holds the other `vjp`); `all` are the graphs whose uses of `n` are replaced.
pub fn desugar(
    m: &mut Module,
    names: &mut Namer,
    h: GraphId,
    n: NodeId,
    all: &[GraphId],
) -> Result<(), Box<Diagnostic>> {
    let ins = m.inputs(n).to_vec();
    let span = m.node(n).span;
    let Some(primals) = tuple_items(m, ins[2]) else {
        return Err(Box::new(Diagnostic::error(
            codes::GRAD_ARGUMENT,
            "jvp() needs its primals as a tuple written at the call, e.g. jvp(f, (x, y), (dx, dy))",
            span,
        )));
    };
    let mark = m.graph(h).order.len();
    let f = ins[1];
    let k0 = m.value(Const::Int(0));
    let k1 = m.value(Const::Int(1));
    let mut call = vec![f];
    call.extend(&primals);
    let y = m.apply(h, call, span);
    // pullback(u, *primals) = vjp(f, *primals)[1](u): linear in u. The pullback is built inside
    // the graph the second vjp differentiates, so no function value crosses into it.
    let function = m.graph(h).function.clone();
    let pullback = m.add_graph(
        names.fresh("jvp_pullback"),
        function,
        GraphKind::Lambda,
        span,
    );
    let u = m.add_param(pullback, "u", span);
    let mut inner = vec![f];
    for i in 0..primals.len() {
        inner.push(m.add_param(pullback, &format!("primal{i}"), span));
    }
    let first = m.apply_prim(pullback, Prim::Vjp, &inner, span);
    let vjp_f = m.apply_prim(pullback, Prim::TupleGetItem, &[first, k1], span);
    let back = m.apply(pullback, vec![vjp_f, u], span);
    m.set_output(pullback, back);
    let pullback_value = m.value_at(Const::Graph(pullback), span);
    let mut second_args = vec![pullback_value, y];
    second_args.extend(&primals);
    let second = m.apply_prim(h, Prim::Vjp, &second_args, span);
    let transpose = m.apply_prim(h, Prim::TupleGetItem, &[second, k1], span);
    let forward = m.apply(h, vec![transpose, ins[3]], span);
    let jt = m.apply_prim(h, Prim::TupleGetItem, &[forward, k0], span);
    let result = m.apply_prim(h, Prim::MakeTuple, &[y, jt], span);
    crate::replace_call(m, h, n, mark, result, all);
    Ok(())
}

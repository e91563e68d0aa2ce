//! The entry of a function with `*args` called with its arguments one by one, as a caller
//! outside compiled code passes them: a graph taking them flat that packs the extra ones
//! into the tuple the function's `*args` parameter receives.

use anfora_ir::{Const, GraphId, GraphKind, Module, NodeId, Prim};

/// `g` itself when it takes no `*args` (or `n_args` does not reach them), else a graph of
/// `n_args` parameters calling `g` with the extra ones packed. Keyword-only parameters take
/// their defaults; `None` when one has none (Python's TypeError: a missing argument).
pub fn flat_entry(module: &mut Module, g: GraphId, n_args: usize) -> Option<GraphId> {
    let Some(sig) = module.graph(g).signature.clone() else {
        return Some(g);
    };
    if !sig.packs {
        return Some(g);
    }
    let defaults: Vec<Const> = sig
        .kwonly
        .iter()
        .map(|p| p.default.clone())
        .collect::<Option<_>>()?;
    let n_params = sig.params.len();
    if n_args < n_params {
        return Some(g);
    }
    let (name, function, span) = {
        let graph = module.graph(g);
        (graph.name.clone(), graph.function.clone(), graph.span)
    };
    let w = module.add_graph(format!("flat_{name}"), function, GraphKind::Function, span);
    let params: Vec<NodeId> = (0..n_args)
        .map(|i| module.add_param(w, &format!("arg{i}"), span))
        .collect();
    let make = module.value(Const::Prim(Prim::MakeTuple));
    let extras = std::iter::once(make).chain(params[n_params..].iter().copied());
    let packed = module.apply(w, extras.collect(), span);
    let mut call = vec![module.value_at(Const::Graph(g), span)];
    call.extend(&params[..n_params]);
    call.push(packed);
    call.extend(defaults.into_iter().map(|d| module.value(d)));
    let out = module.apply_unordered(w, call, span);
    module.set_output(w, out);
    Some(w)
}

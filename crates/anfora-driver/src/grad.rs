//! The entry graph of a gradient: `grad(f, argnums, weights)(*args)` built around a parsed
//! function, which the pipeline then compiles like any other.

use anfora_ir::{Const, GraphId, GraphKind, Module, NodeId, ParamRef, Prim};

/// Which gradient of a function a compilation computes.
#[derive(Clone, Copy, Debug)]
pub struct Gradient<'a> {
    /// The arguments differentiated with respect to.
    pub argnums: &'a [usize],
    /// The Parameters differentiated with respect to.
    pub weights: &'a [ParamRef],
    /// `value_and_grad` rather than `grad`.
    pub value: bool,
    /// The output's sensitivity is an extra last argument.
    pub sens: bool,
    /// Integer values' sensitivities cast to their dtype (MindSpore's rule), not zero.
    pub cast_integers: bool,
    /// The function returns `(value, aux)`; only the value is differentiated.
    pub has_aux: bool,
}

/// A graph computing the gradient of function graph `g` (parsed) at its arguments:
/// `grad(g, argnums, weights)(*params)`, or `value_and_grad`. With weights, the result is
/// `(input gradients, weight gradients)`.
pub fn grad_entry(module: &mut Module, g: GraphId, gradient: &Gradient) -> GraphId {
    let Gradient {
        argnums,
        weights,
        value,
        sens,
        cast_integers,
        has_aux,
    } = *gradient;
    let (name, function, span) = {
        let graph = module.graph(g);
        (graph.name.clone(), graph.function.clone(), graph.span)
    };
    let w = module.add_graph(
        format!("grad_entry_{name}"),
        function,
        GraphKind::Function,
        span,
    );
    let mut params: Vec<NodeId> = (module.graph(g).params.clone().iter())
        .map(|&q| {
            let p = module.node(q).clone();
            module.add_param(w, p.name.as_deref().unwrap_or("x"), p.span)
        })
        .collect();
    if sens {
        params.push(module.add_param(w, "sens", span));
    }
    let argnums = Const::tuple(argnums.iter().map(|&i| Const::Int(i as i64)).collect());
    let weights = if weights.is_empty() {
        Const::None
    } else {
        Const::tuple(weights.iter().cloned().map(Const::Ref).collect())
    };
    let integers = Const::str(if cast_integers { "cast" } else { "zero" });
    let inputs = [
        Const::Graph(g),
        argnums,
        weights,
        Const::Bool(sens),
        integers,
        Const::Bool(has_aux),
    ]
    .map(|c| module.value_at(c, span));
    let prim = if value {
        Prim::ValueAndGrad
    } else {
        Prim::Grad
    };
    let grad_fn = module.apply_prim(w, prim, &inputs, span);
    let mut call = vec![grad_fn];
    call.extend(params);
    let out = module.apply(w, call, span);
    module.set_output(w, out);
    w
}

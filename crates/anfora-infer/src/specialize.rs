//! Specialization: one new graph per context the analysis reached, with the abstracts of its
//! nodes. Constant results of pure primitives become Value nodes, `Switch` on a constant
//! condition becomes the branch taken, and calls whose callee is known become direct calls of
//! the right specialization.

use std::collections::HashMap;

use anfora_ir::analysis::breadth_first;
use anfora_ir::{Const, Graph, GraphId, Module, Node, NodeId, NodeKind, Prim};

use crate::interpreter::{
    Solved, attr_grad_place, attribute_const, chosen_attributes, differentiated_attribute_const,
    single_closure,
};
use anfora_ops::abs::to_value;
use anfora_ops::abs::{Abs, CtxId, Func};

/// The specialized program.
pub struct Specialized {
    /// The specialization of the entry graph.
    pub entry: GraphId,
    /// Abstracts of the parameters and Apply nodes of the specialized graphs (and of constants
    /// folded from them).
    pub abstracts: HashMap<NodeId, Abs>,
    /// For each call node whose callee is a graph (directly or through a value: a Switch, a
    /// Partial, a function argument), the specialized graphs it may call.
    pub call_targets: HashMap<NodeId, Vec<GraphId>>,
    /// The specialized graphs of closures whose identity was lost: calls of values whose
    /// callee is not known at compile time may reach any of them.
    pub escaped: Vec<GraphId>,
}

/// Effects and calls must stay in the program even when their result is a constant.
fn foldable_call(solved: &Solved, m: &Module, c: CtxId, n: NodeId) -> bool {
    let callee = m.inputs(n)[0];
    let p = match m.constant(callee) {
        Some(Const::Prim(p)) => *p,
        _ => match solved.ctx(c).values.get(&callee) {
            Some(Abs::Func(fs)) if fs.len() == 1 => match fs[0] {
                Func::Prim(p) => p,
                _ => return false,
            },
            _ => return false,
        },
    };
    p.is_pure()
}

pub fn specialize(solved: &Solved, root: CtxId, module: &mut Module) -> Specialized {
    let value_ctx = |c: CtxId, h: GraphId| solved.mono_of(h, solved.parent_ctx(c, h));
    // Contexts reachable from the root, breadth first.
    let order = breadth_first([root], |c| {
        let ctx = solved.ctx(c);
        let mut next: Vec<CtxId> = ctx.calls.values().flatten().copied().collect();
        next.extend(ctx.parent);
        let graph = module.graph(ctx.graph);
        let mut operands: Vec<NodeId> = module
            .graph_nodes(ctx.graph)
            .iter()
            .flat_map(|&n| module.inputs(n).to_vec())
            .collect();
        operands.extend(graph.output);
        for i in operands {
            if let Some(k) = module.constant(i) {
                k.for_each_graph(&mut |h| next.extend(value_ctx(c, h)));
            }
        }
        next
    });

    // Phase 1: graphs, parameters and nodes (inputs are filled in phase 2).
    let mut name_uses: HashMap<String, usize> = HashMap::new();
    let mut spec: HashMap<CtxId, GraphId> = HashMap::new();
    for &c in &order {
        let orig: Graph = module.graph(solved.ctx(c).graph).clone();
        let k = name_uses.entry(orig.name.clone()).or_insert(0);
        *k += 1;
        let name = if *k == 1 {
            orig.name.clone()
        } else {
            format!("{}_{}", orig.name, *k - 1)
        };
        let ng = module.add_graph(
            format!("{name}{SPEC_MARK}"),
            orig.function.clone(),
            orig.kind,
            orig.span,
        );
        module.graphs[ng].signature = orig.signature.clone();
        spec.insert(c, ng);
    }
    let mut map: HashMap<(CtxId, NodeId), NodeId> = HashMap::new();
    let mut abstracts: HashMap<NodeId, Abs> = HashMap::new();
    let mut pending: Vec<(CtxId, NodeId, NodeId)> = Vec::new();
    for &c in &order {
        let ctx = solved.ctx(c);
        let ng = spec[&c];
        let params = module.graph(ctx.graph).params.clone();
        for (i, &p) in params.iter().enumerate() {
            let node = module.node(p).clone();
            let np = module.add_param(ng, node.name.as_deref().unwrap_or(""), node.span);
            map.insert((c, p), np);
            abstracts.insert(np, ctx.args.get(i).cloned().unwrap_or(Abs::Any));
        }
        for n in module.graph_nodes(ctx.graph) {
            let node = module.node(n).clone();
            let abs = ctx.values.get(&n).cloned().unwrap_or(Abs::Any);
            // Switch on a known condition: the branch taken, as a graph constant.
            let switch_target = (module.callee_prim(n) == Some(Prim::Switch))
                .then(|| single_closure(&abs))
                .flatten()
                .filter(|_| {
                    operand_abs(solved, module, c, module.inputs(n)[1])
                        .as_bool()
                        .is_some()
                });
            let new = if let Some((h, _)) = switch_target {
                let target = called_ctx(solved, c, h).or_else(|| value_ctx(c, h));
                let g = target.map(|t| spec_of(&spec, t, h)).unwrap_or(h);
                module.value_at(Const::Graph(g), node.span)
            } else if let Some(k) = object_attribute(solved, module, c, n) {
                // An attribute of an object used as a value: its constant.
                let k = map_graphs(&k, &mut |h| {
                    let target = value_ctx(c, h).or_else(|| called_ctx(solved, c, h));
                    target.map(|t| spec_of(&spec, t, h)).unwrap_or(h)
                });
                module.value_at(k, node.span)
            } else if let (Some(v), true) = (to_value(&abs), foldable_call(solved, module, c, n)) {
                match anfora_ops::value::to_const(&v) {
                    Some(k) => module.value_at(k, node.span),
                    None => clone_apply(module, ng, &node, &mut pending, c, n),
                }
            } else {
                clone_apply(module, ng, &node, &mut pending, c, n)
            };
            map.insert((c, n), new);
            abstracts.insert(new, abs);
        }
    }

    // Phase 2: inputs, evaluation orders and outputs.
    let resolve_operand = |module: &mut Module,
                           map: &HashMap<(CtxId, NodeId), NodeId>,
                           c: CtxId,
                           i: NodeId,
                           call: Option<NodeId>|
     -> NodeId {
        let node = module.node(i).clone();
        match &node.kind {
            NodeKind::Value(k) => {
                if !k.holds_graph() {
                    return i;
                }
                let k = map_graphs(k, &mut |h| {
                    // The callee of a call: the context it calls. A function used as a value is
                    // called through it, in its value context (a direct call of the same
                    // function nearby may have specialized it for other arguments).
                    let target = match call {
                        Some(call) => solved
                            .ctx(c)
                            .calls
                            .get(&call)
                            .and_then(|ts| ts.iter().copied().find(|&t| solved.ctx(t).graph == h))
                            .or_else(|| called_ctx(solved, c, h))
                            .or_else(|| value_ctx(c, h)),
                        None => value_ctx(c, h).or_else(|| called_ctx(solved, c, h)),
                    };
                    target.map(|t| spec_of(&spec, t, h)).unwrap_or(h)
                });
                module.value_at(k, node.span)
            }
            _ => {
                let owner = node.owner.expect("an owned node");
                let x = solved
                    .enclosing(c, owner)
                    .expect("free variables have enclosing contexts");
                map[&(x, i)]
            }
        }
    };
    let mut call_targets: HashMap<NodeId, Vec<GraphId>> = HashMap::new();
    // Nodes made for a call (its `*args` tuple, the items of a star call), which run before it.
    let mut before: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
    for (c, n, new) in pending {
        if let Some(ts) = solved.ctx(c).calls.get(&n) {
            let targets: Vec<GraphId> = ts.iter().filter_map(|t| spec.get(t).copied()).collect();
            if !targets.is_empty() {
                call_targets.insert(new, targets);
            }
        }
        let inputs = module.inputs(n).to_vec();
        // The function a call calls: its callee, or the first argument of a keyword or star
        // call (whose callee is the primitive that binds them).
        let binds = matches!(
            module.callee_prim(n),
            Some(Prim::CallKw | Prim::CallStar | Prim::CallDict)
        );
        let callee_at = usize::from(binds);
        let mut out: Vec<NodeId> = Vec::with_capacity(inputs.len());
        for (k, &i) in inputs.iter().enumerate() {
            out.push(resolve_operand(
                module,
                &map,
                c,
                i,
                (k == callee_at).then_some(n),
            ));
        }
        let owner = module.node(new).owner.expect("an Apply node has an owner");
        // An attribute of one of several objects, chosen at run time, whose constants differ:
        // the constant of the object the value is, `Switch(Eq(obj, a), a.w, Switch(...))`.
        if let Some(chosen) = chosen_attribute(solved, module, c, n) {
            let span = module.node(new).span;
            let abs = abstracts.get(&new).cloned().unwrap_or(Abs::Any);
            let (eq, switch) = (
                module.value(Const::Prim(Prim::Eq)),
                module.value(Const::Prim(Prim::Switch)),
            );
            let mut made = Vec::new();
            let (_, last) = chosen.last().expect("two or more objects");
            let last = module.value(last.clone());
            let mut rest = resolve_operand(module, &map, c, last, None);
            for (i, (h, k)) in chosen[..chosen.len() - 1].iter().enumerate().rev() {
                let object = module.value(Const::Graph(*h));
                let object = resolve_operand(module, &map, c, object, None);
                let cond = module.apply_unordered(owner, vec![eq, out[1], object], span);
                abstracts.insert(cond, Abs::Bool(None));
                made.push(cond);
                let k = module.value(k.clone());
                let k = resolve_operand(module, &map, c, k, None);
                if i == 0 {
                    out = vec![switch, cond, k, rest];
                } else {
                    let s = module.apply_unordered(owner, vec![switch, cond, k, rest], span);
                    abstracts.insert(s, abs.clone());
                    made.push(s);
                    rest = s;
                }
            }
            before.entry(new).or_default().extend(made);
        }
        // Star calls, and calls through values that need binding, become plain calls.
        let targets = solved
            .ctx(c)
            .calls
            .get(&n)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let site = crate::bind_calls::Site {
            solved,
            ctx: c,
            inputs: &inputs,
            out: &out,
            targets,
            graph: owner,
        };
        if let Some(bound) = crate::bind_calls::rewrite(module, &site) {
            for (node, abs) in bound.new_nodes {
                abstracts.insert(node, abs);
                before.entry(new).or_default().push(node);
            }
            out = bound.inputs;
            if bound.raises {
                call_targets.remove(&new);
            }
        }
        if let Some(items) = attr_grad_inputs(solved, module, c, n, &out) {
            out = items;
        }
        // A call of a known closure without free variables through a value becomes direct.
        if module.constant(inputs[0]).is_none()
            && let Some((h, None)) = single_closure(&operand_abs(solved, module, c, inputs[0]))
            && let Some(ts) = solved.ctx(c).calls.get(&n)
            && ts.len() == 1
            && solved.ctx(ts[0]).graph == h
            && inputs.len() - 1 == module.graph(h).params.len()
        {
            out[0] = module.value(Const::Graph(spec[&ts[0]]));
        }
        *module.inputs_mut(new).expect("an Apply node") = out;
    }
    for &c in &order {
        let ctx = solved.ctx(c);
        let ng = spec[&c];
        let orig_order = module.graph(ctx.graph).order.clone();
        let mut new_order: Vec<NodeId> = Vec::with_capacity(orig_order.len());
        for n in orig_order.iter().map(|n| map[&(c, *n)]) {
            if let Some(extra) = before.remove(&n) {
                new_order.extend(extra);
            }
            if module.is_apply(n) {
                new_order.push(n);
            }
        }
        // Those of a tail call, which is not in the order.
        if let Some(o) = module.graph(ctx.graph).output
            && let Some(&t) = map.get(&(c, o))
            && let Some(extra) = before.remove(&t)
        {
            new_order.extend(extra);
        }
        module.graphs[ng].order = new_order;
        if let Some(o) = module.graph(ctx.graph).output {
            let out = match map.get(&(c, o)) {
                Some(&x) => x,
                None => resolve_operand(module, &map, c, o, None),
            };
            module.set_output(ng, out);
        }
    }
    let mut escaped: Vec<GraphId> = solved
        .generic
        .iter()
        .filter_map(|&(g, pc)| solved.mono_of(g, pc))
        .filter_map(|c| spec.get(&c).copied())
        .collect();
    escaped.sort();
    Specialized {
        entry: spec[&root],
        abstracts,
        call_targets,
        escaped,
    }
}

/// The objects `GetAttr` node `n` may read from in context `c`, with their attributes, where
/// the value is one of several objects chosen at run time whose constants differ.
fn chosen_attribute(
    solved: &Solved,
    m: &Module,
    c: CtxId,
    n: NodeId,
) -> Option<Vec<(GraphId, Const)>> {
    if m.callee_prim(n) != Some(Prim::GetAttr) {
        return None;
    }
    let inputs = m.inputs(n);
    let Some(Const::Str(name)) = m.constant(*inputs.get(2)?) else {
        return None;
    };
    let object = operand_abs(solved, m, c, inputs[1]);
    if attribute_const(m, &object, name).is_some() {
        return None;
    }
    chosen_attributes(m, &object, name)
}

/// The constant that `GetAttr` node `n` reads from an object used as a value, in context `c`.
fn object_attribute(solved: &Solved, m: &Module, c: CtxId, n: NodeId) -> Option<Const> {
    if m.callee_prim(n) != Some(Prim::GetAttr) {
        return None;
    }
    let inputs = m.inputs(n);
    let Some(Const::Str(name)) = m.constant(*inputs.get(2)?) else {
        return None;
    };
    let object = operand_abs(solved, m, c, inputs[1]);
    attribute_const(m, &object, name).or_else(|| differentiated_attribute_const(m, &object, name))
}

/// `AttrGrad(obj, name, d)` node `n` (inputs specialized: `out`) where it puts `d` among the
/// bound values of an object's grad-stage copy: `MakeTuple(None..., d, None...)`.
fn attr_grad_inputs(
    solved: &Solved,
    m: &mut Module,
    c: CtxId,
    n: NodeId,
    out: &[NodeId],
) -> Option<Vec<NodeId>> {
    if m.callee_prim(n) != Some(Prim::AttrGrad) {
        return None;
    }
    let inputs = m.inputs(n).to_vec();
    let Some(Const::Str(name)) = m.constant(inputs[2]).cloned() else {
        return None;
    };
    let (at, len) = attr_grad_place(m, &operand_abs(solved, m, c, inputs[1]), &name)?;
    let none = m.value(Const::None);
    let mut items = vec![m.value(Const::Prim(Prim::MakeTuple))];
    items.extend((0..len).map(|i| if i == at { out[3] } else { none }));
    Some(items)
}

/// Suffix of specialized graph names, so dumps tell them from the parsed graphs.
pub const SPEC_MARK: &str = "";

pub(crate) fn operand_abs(solved: &Solved, m: &Module, c: CtxId, n: NodeId) -> Abs {
    match &m.node(n).kind {
        NodeKind::Value(k) => match k {
            Const::Bool(b) => Abs::Bool(Some(*b)),
            Const::Graph(h) => Abs::func(Func::Closure {
                graph: *h,
                ctx: solved.parent_ctx(c, *h),
            }),
            _ => Abs::Any,
        },
        _ => {
            let Some(owner) = m.node(n).owner else {
                return Abs::Any;
            };
            solved
                .enclosing(c, owner)
                .and_then(|x| solved.ctx(x).values.get(&n).cloned())
                .unwrap_or(Abs::Any)
        }
    }
}

/// The context `c` called for graph `h` (through any of its call nodes).
fn called_ctx(solved: &Solved, c: CtxId, h: GraphId) -> Option<CtxId> {
    solved
        .ctx(c)
        .calls
        .values()
        .flatten()
        .copied()
        .find(|&t| solved.ctx(t).graph == h)
}

fn spec_of(spec: &HashMap<CtxId, GraphId>, t: CtxId, fallback: GraphId) -> GraphId {
    spec.get(&t).copied().unwrap_or(fallback)
}

fn map_graphs(k: &Const, f: &mut dyn FnMut(GraphId) -> GraphId) -> Const {
    match k {
        Const::Graph(h) => Const::Graph(f(*h)),
        Const::Tuple(items) => Const::tuple(items.iter().map(|i| map_graphs(i, f)).collect()),
        Const::List(items) => Const::List(items.iter().map(|i| map_graphs(i, f)).collect()),
        other => other.clone(),
    }
}

fn clone_apply(
    module: &mut Module,
    g: GraphId,
    node: &Node,
    pending: &mut Vec<(CtxId, NodeId, NodeId)>,
    c: CtxId,
    n: NodeId,
) -> NodeId {
    let placeholder = module.value(Const::None);
    let new = module.apply_unordered(g, vec![placeholder], node.span);
    module.nodes[new].name = node.name.clone();
    module.nodes[new].inlined = node.inlined.clone();
    pending.push((c, n, new));
    new
}

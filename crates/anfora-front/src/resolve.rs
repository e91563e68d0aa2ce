//! The resolve stage: replaces the `Symbol` constants the parse stage leaves for global names
//! with what they stand for (constants, primitives, user functions — lowered on first use —
//! or namespaces), folds attributes of namespaces (`ops.add`), and binds the arguments of calls
//! whose callee is now known (keyword arguments and defaults, with Python's errors for a
//! mismatch).

use std::collections::VecDeque;
use std::sync::Arc;

use anfora_ir::diag::Diagnostic;
use anfora_ir::{
    ArgSource, AttrRefusal, Const, GraphId, GraphKind, NodeId, NodeKind, ObjectValue, Prim,
    Signature, Span,
};

use crate::python_builtins::{cpython_accepts, is_python_builtin};
use crate::{
    Frontend, Namespace, Resolved, Resolver, ScopeId, codes, namespace_attr, namespace_names,
};

fn namespace_name(ns: Namespace) -> &'static str {
    match ns {
        Namespace::Anfora => "anfora",
        Namespace::Ops => "anfora.ops",
    }
}

fn namespace_of(name: &str) -> Option<Namespace> {
    match name {
        "anfora" => Some(Namespace::Anfora),
        "anfora.ops" => Some(Namespace::Ops),
        _ => None,
    }
}

/// Resolves every graph reachable from `roots`, lowering the functions they reach.
pub(crate) fn resolve(fe: &mut Frontend, resolver: &mut dyn Resolver, roots: &[GraphId]) {
    let mut queue: VecDeque<GraphId> = roots.iter().copied().collect();
    let mut unlowered = Vec::new();
    loop {
        while let Some(g) = queue.pop_front() {
            if fe.is_unlowered(g) {
                unlowered.push(g);
                continue;
            }
            // Each graph is resolved once, however many entry points reach it.
            if !fe.resolved.insert(g) {
                continue;
            }
            resolve_graph(fe, resolver, g, &mut queue);
        }
        object_attributes(fe, resolver, &mut queue);
        if !queue.is_empty() {
            continue;
        }
        if !fe.has_pending() {
            break;
        }
        // Functions first used above are lowered now; resolve them too.
        let before = fe.module.graphs.len();
        fe.lower_pending(resolver);
        queue.extend(unlowered.drain(..));
        // (By index: skipping through the keys would cost a step per older graph, each
        // time a function is lowered.)
        let after = fe.module.graphs.len();
        queue.extend((before..after).map(|i| GraphId::from_u32(i as u32)));
    }
}

fn resolve_graph(
    fe: &mut Frontend,
    resolver: &mut dyn Resolver,
    g: GraphId,
    queue: &mut VecDeque<GraphId>,
) {
    let nodes = fe.module.graph_nodes(g);
    // 1. Symbols become constants.
    let mut operands: Vec<NodeId> = nodes
        .iter()
        .flat_map(|&n| fe.module.inputs(n).to_vec())
        .collect();
    operands.extend(fe.module.graph(g).output);
    for n in operands {
        if let Some(Const::Symbol { scope, name }) = fe.module.constant(n) {
            let (scope, name) = (*scope, name.clone());
            let span = fe.module.node(n).span;
            let c = resolve_symbol(fe, resolver, ScopeId(scope), &name, span);
            fe.module.nodes[n].kind = NodeKind::Value(c);
        }
        if let Some(c) = fe.module.constant(n) {
            c.for_each_graph(&mut |h| queue.push_back(h));
        }
    }
    // 2. Attributes of namespaces fold to constants; the node becomes a Value node.
    for &n in &nodes {
        if fe.module.callee_prim(n) != Some(Prim::GetAttr) {
            continue;
        }
        let inputs = fe.module.inputs(n).to_vec();
        let c = match (fe.module.constant(inputs[1]), fe.module.constant(inputs[2])) {
            (Some(Const::Namespace(ns)), Some(Const::Str(attr))) => {
                let (ns, attr) = (ns.clone(), attr.clone());
                namespace_attribute(fe, &ns, &attr, n)
            }
            (Some(Const::HostObject(obj)), Some(Const::Str(attr))) => {
                let (obj, attr) = (*obj, attr.clone());
                object_attribute(fe, resolver, obj, &attr, n)
            }
            _ => continue,
        };
        let span = fe.module.node(n).span;
        c.for_each_graph(&mut |h| queue.push_back(h));
        fe.module.nodes[n] = anfora_ir::Node {
            kind: NodeKind::Value(c),
            owner: None,
            name: None,
            span,
            inlined: None,
        };
        fe.module.graphs[g].order.retain(|&m| m != n);
    }
    // The attributes read through values, for objects used as values.
    for &n in &nodes {
        let inputs = fe.module.inputs(n);
        if fe.module.callee_prim(n) == Some(Prim::GetAttr)
            && inputs.len() == 3
            && fe.module.constant(inputs[1]).is_none()
            && let Some(Const::Str(attr)) = fe.module.constant(inputs[2])
        {
            fe.attr_names.insert(attr.clone());
        }
    }
    // A call of a host object calls its `__call__` (a Cell's `construct`).
    for &n in &nodes {
        let at = usize::from(fe.module.callee_prim(n) == Some(Prim::CallKw));
        let Some(&callee) = fe.module.inputs(n).get(at) else {
            continue;
        };
        if !matches!(fe.module.node(n).kind, NodeKind::Apply(_)) {
            continue;
        }
        let Some(Const::HostObject(obj)) = fe.module.constant(callee) else {
            continue;
        };
        let obj = *obj;
        let c = object_attribute(fe, resolver, obj, "__call__", callee);
        c.for_each_graph(&mut |h| queue.push_back(h));
        let span = fe.module.node(callee).span;
        let v = fe.module.value_at(c, span);
        if let Some(inputs) = fe.module.inputs_mut(n) {
            inputs[at] = v;
        }
    }
    // 3. A namespace anywhere else is an error; a host object (alone or in a tuple) becomes
    // the graph that stands for it.
    let nodes = fe.module.graph_nodes(g);
    let mut uses: Vec<NodeId> = nodes
        .iter()
        .flat_map(|&n| fe.module.inputs(n)[1..].to_vec())
        .collect();
    uses.extend(fe.module.graph(g).output);
    for n in uses {
        let span = fe.module.node(n).span;
        let value = match fe.module.constant(n) {
            Some(Const::Namespace(ns)) => {
                let what = ns.clone();
                fe.diags.push(
                    Diagnostic::error(
                        codes::MODULE_VALUE,
                        format!("the module `{what}` cannot be used as a value"),
                        span,
                    )
                    .with_label("a module")
                    .with_hint("use one of its attributes, such as `ops.add`"),
                );
                Const::None
            }
            Some(k) if holds_host_object(k) => {
                let k = k.clone();
                let v = objects_as_values(fe, resolver, &k);
                v.for_each_graph(&mut |h| queue.push_back(h));
                v
            }
            _ => continue,
        };
        fe.module.nodes[n].kind = NodeKind::Value(value);
    }
    // 4. Calls of known functions get their arguments bound.
    for &n in &nodes {
        bind_call(fe, n);
    }
}

/// The constant for attribute `attr` of an anfora namespace (an error if there is none).
fn namespace_attribute(fe: &mut Frontend, ns: &str, attr: &str, n: NodeId) -> Const {
    let ns = namespace_of(ns).expect("namespaces come from resolve_symbol");
    let span = fe.module.node(n).span;
    match namespace_attr(ns, attr) {
        Some(Resolved::Value(c)) => c,
        Some(Resolved::Namespace(inner)) => Const::Namespace(namespace_name(inner).into()),
        _ => {
            let names = namespace_names(ns);
            let hint = match names
                .iter()
                .find(|n| n.starts_with(&attr[..attr.len().min(3)]))
            {
                Some(n) => format!("did you mean `{n}`?"),
                None => format!("available: {}", names.join(", ")),
            };
            fe.diags.push(
                Diagnostic::error(
                    codes::NO_ATTRIBUTE,
                    format!("module '{}' has no attribute '{attr}'", namespace_name(ns)),
                    span,
                )
                .with_label("unknown attribute")
                .with_hint(hint),
            );
            Const::None
        }
    }
}

/// The constant for attribute `attr` of host object `obj`, through the resolver.
fn object_attribute(
    fe: &mut Frontend,
    resolver: &mut dyn Resolver,
    obj: u64,
    attr: &str,
    n: NodeId,
) -> Const {
    let span = fe.module.node(n).span;
    match resolver.resolve_attr(obj, attr) {
        Resolved::Unknown => {
            let ty = resolver.object_type(obj);
            fe.diags.push(
                Diagnostic::error(
                    codes::NO_ATTRIBUTE,
                    format!("'{ty}' object has no attribute '{attr}'"),
                    span,
                )
                .with_label("unknown attribute")
                .with_hint("attributes of `self` are read when the method compiles; set them in `__init__`"),
            );
            Const::None
        }
        known => resolved_const(fe, known, span),
    }
}

/// The constant a resolved name or attribute stands for (`Unknown` is the caller's case). Host
/// objects stay `HostObject`s: their attributes fold here, and step 3 of `resolve_graph` turns
/// those used as values into graphs.
fn resolved_const(fe: &mut Frontend, r: Resolved, span: Span) -> Const {
    match convert(fe, r) {
        Ok(c) => c,
        Err(AttrRefusal { message, hint }) => {
            fe.diags.push(
                Diagnostic::error(codes::HOST_VALUE, message, span)
                    .with_label("used here")
                    .with_hint(hint),
            );
            Const::None
        }
    }
}

/// [`resolved_const`] without the diagnostic: why the value cannot be used, if it cannot.
fn convert(fe: &mut Frontend, r: Resolved) -> Result<Const, AttrRefusal> {
    let items = |fe: &mut Frontend, items: Vec<Resolved>| -> Result<Vec<Const>, AttrRefusal> {
        items.into_iter().map(|r| convert(fe, r)).collect()
    };
    Ok(match r {
        Resolved::Value(c) => c,
        Resolved::Function(f) => Const::Graph(fe.function_graph(f)),
        Resolved::Source(h) => match fe.host_function(&h) {
            Some(f) => Const::Graph(fe.function_graph(f)),
            None => Const::None,
        },
        Resolved::Namespace(ns) => Const::Namespace(namespace_name(ns).into()),
        Resolved::Object(id) => Const::HostObject(id),
        Resolved::Tuple(list) => Const::Tuple(items(fe, list)?.into()),
        Resolved::List(list) => Const::List(items(fe, list)?.into()),
        Resolved::Refused { message, hint } => return Err(AttrRefusal { message, hint }),
        Resolved::Unknown => Const::None,
    })
}

fn holds_host_object(k: &Const) -> bool {
    match k {
        Const::HostObject(_) => true,
        Const::Tuple(items) | Const::List(items) => items.iter().any(holds_host_object),
        _ => false,
    }
}

/// `k` with each host object in it replaced by the graph that stands for it as a value.
fn objects_as_values(fe: &mut Frontend, resolver: &mut dyn Resolver, k: &Const) -> Const {
    let mut items = |list: &[Const]| -> Vec<Const> {
        list.iter()
            .map(|i| objects_as_values(fe, resolver, i))
            .collect()
    };
    match k {
        Const::HostObject(obj) => match object_value(fe, resolver, *obj) {
            Some(g) => Const::Graph(g),
            None => Const::None,
        },
        Const::Tuple(list) => Const::Tuple(items(list).into()),
        Const::List(list) => Const::List(items(list).into()),
        other => other.clone(),
    }
}

/// The graph that stands for host object `obj` used as a value: the function its calls run
/// (its `__call__`, a Cell's `construct`; for an object without one, a function raising
/// Python's TypeError), registered in `Module::objects` so that inference can read the
/// object's attributes through it. `None` where its `__call__` did not parse (the diagnostics
/// say why).
fn object_value(fe: &mut Frontend, resolver: &mut dyn Resolver, obj: u64) -> Option<GraphId> {
    if let Some(g) = fe.object_values.get(&obj) {
        return *g;
    }
    let type_name: Arc<str> = resolver.object_type(obj).into();
    let g = match resolver.resolve_attr(obj, "__call__") {
        Resolved::Source(h) => fe.object_function(&h).map(|f| fe.function_graph(f)),
        _ => Some(not_callable(fe, &type_name)),
    };
    fe.object_values.insert(obj, g);
    if let Some(g) = g {
        let object = ObjectValue {
            type_name,
            attrs: Default::default(),
        };
        fe.module.objects.insert(g, object);
    }
    g
}

/// `def __call__(*args): raise TypeError("'T' object is not callable")`, the call of an
/// object whose class has no `__call__`.
fn not_callable(fe: &mut Frontend, type_name: &str) -> GraphId {
    let function: Arc<str> = format!("{type_name}.__call__").into();
    let name = fe.unique_name(&function);
    let m = &mut fe.module;
    let g = m.add_graph(name, function.clone(), GraphKind::Function, Span::NONE);
    m.add_param(g, "args", Span::NONE);
    m.graphs[g].signature = Some(Signature {
        name: function,
        params: Vec::new(),
        posonly: 0,
        varargs: true,
        packs: true,
        kwonly: Vec::new(),
        packs_keywords: false,
    });
    let kind = m.value(Const::str("TypeError"));
    let message = m.value(Const::str(&format!("'{type_name}' object is not callable")));
    let raise = m.apply_prim(g, Prim::Raise, &[kind, message], Span::NONE);
    m.set_output(g, raise);
    g
}

/// Looks up, on every object used as a value, the attribute names compiled code reads
/// through values (inference picks the ones it needs). An attribute that is itself an
/// object becomes a value in turn; functions reached are queued for resolution.
fn object_attributes(
    fe: &mut Frontend,
    resolver: &mut dyn Resolver,
    queue: &mut VecDeque<GraphId>,
) {
    loop {
        let objects: Vec<(u64, GraphId)> = (fe.object_values.iter())
            .filter_map(|(&o, g)| g.map(|g| (o, g)))
            .collect();
        let names: Vec<Arc<str>> = fe.attr_names.iter().cloned().collect();
        let mut added = false;
        for (obj, g) in objects {
            for name in &names {
                if !fe.looked_up.insert((g, name.clone())) {
                    continue;
                }
                let value = match resolver.resolve_attr(obj, name) {
                    Resolved::Unknown => continue,
                    r => convert(fe, r).map(|k| objects_as_values(fe, resolver, &k)),
                };
                if let Ok(k) = &value {
                    k.for_each_graph(&mut |h| queue.push_back(h));
                }
                let object = fe
                    .module
                    .objects
                    .get_mut(&g)
                    .expect("registered with its graph");
                object.attrs.insert(name.clone(), value);
                added = true;
            }
        }
        if !added {
            break;
        }
    }
}

fn resolve_symbol(
    fe: &mut Frontend,
    resolver: &mut dyn Resolver,
    scope: ScopeId,
    name: &str,
    span: Span,
) -> Const {
    match resolver.resolve_global(scope, name) {
        Resolved::Unknown => {
            if let Some(p) = Prim::builtin(name) {
                return Const::Prim(p);
            }
            if is_python_builtin(name) {
                fe.diags.push(
                    Diagnostic::error(
                        codes::UNSUPPORTED_BUILTIN,
                        format!("the Python builtin '{name}' is not supported in compiled code"),
                        span,
                    )
                    .with_label("not supported")
                    .with_hint(BUILTIN_HINT),
                );
                return Const::None;
            }
            let hint = if Prim::op(name).is_some() {
                format!("did you mean `ops.{name}` (after `from anfora import ops`)?")
            } else {
                "define it at module level, pass it as an argument, or check the spelling".into()
            };
            fe.diags.push(
                Diagnostic::error(
                    codes::UNDEFINED,
                    format!("name '{name}' is not defined"),
                    span,
                )
                .with_label("not defined")
                .with_hint(hint),
            );
            Const::None
        }
        known => resolved_const(fe, known, span),
    }
}

const BUILTIN_HINT: &str = "compute it from the supported operations (docs/language.md), or call \
     it outside compiled code and pass the result in";

/// Binds the arguments of a call whose callee is a primitive or a graph with a signature.
fn bind_call(fe: &mut Frontend, n: NodeId) {
    let m = &fe.module;
    let inputs = m.inputs(n).to_vec();
    if inputs.is_empty() {
        return;
    }
    // A keyword call: CallKw(f, names, positional..., keyword values...).
    let (callee, positional, names, kw_values) = if m.callee_prim(n) == Some(Prim::CallKw) {
        let Some(Const::Tuple(names)) = m.constant(inputs[2]) else {
            return;
        };
        let names: Vec<String> = names
            .iter()
            .map(|c| match c {
                Const::Str(s) => s.to_string(),
                _ => String::new(),
            })
            .collect();
        let split = inputs.len() - names.len();
        (
            inputs[1],
            inputs[3..split].to_vec(),
            names,
            inputs[split..].to_vec(),
        )
    } else {
        (inputs[0], inputs[1..].to_vec(), Vec::new(), Vec::new())
    };
    let is_builtin = matches!(m.constant(callee),
        Some(Const::Prim(p)) if Prim::builtin(&p.signature().name) == Some(*p));
    let sig: Signature = match m.constant(callee) {
        // Every call of a known primitive is bound, so the VM can trust argument counts.
        Some(Const::Prim(p)) if !matches!(*p, Prim::CallKw | Prim::CallStar | Prim::CallDict) => {
            p.signature().clone()
        }
        Some(Const::Graph(h)) => match &m.graph(*h).signature {
            Some(s) => s.clone(),
            None => return,
        },
        _ => return,
    };
    let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    let owner = m.node(n).owner.expect("a call belongs to a graph");
    let span = m.node(n).span;
    let bound = sig.bind(positional.len(), &refs).map(|sources| {
        sources
            .into_iter()
            .map(|s| match s {
                ArgSource::Positional(i) => positional[i],
                ArgSource::Keyword(j) => kw_values[j],
                ArgSource::Default(c) => fe.module.value(c),
                // `*args`: a tuple, built right before the call.
                ArgSource::Packed(a, b) => {
                    let make = fe.module.value(Const::Prim(Prim::MakeTuple));
                    let inputs = std::iter::once(make).chain(positional[a..b].iter().copied());
                    let t = fe.module.apply_unordered(owner, inputs.collect(), span);
                    fe.module.insert_before(owner, t, n);
                    t
                }
                // `**kwargs`: a dict, built right before the call.
                ArgSource::PackedKeywords(js) => {
                    let make = fe.module.value(Const::Prim(Prim::MakeDict));
                    let keys = js.iter().map(|&j| Const::Str(Arc::from(refs[j])));
                    let keys = fe.module.value(Const::tuple(keys.collect()));
                    let values = js.iter().map(|&j| kw_values[j]);
                    let inputs = [make, keys].into_iter().chain(values);
                    let d = fe.module.apply_unordered(owner, inputs.collect(), span);
                    fe.module.insert_before(owner, d, n);
                    d
                }
            })
            .collect::<Vec<NodeId>>()
    });
    match bound {
        Ok(args) => {
            let bound = std::iter::once(callee).chain(args).collect();
            *fe.module.inputs_mut(n).expect("an Apply node") = bound;
        }
        Err(err) => {
            let span = fe.module.node(n).span;
            let diag = if is_builtin && cpython_accepts(&sig.name, positional.len(), &refs) {
                Diagnostic::error(
                    codes::UNSUPPORTED_BUILTIN,
                    format!(
                        "this call of {}() is not supported in compiled code, where it takes {}",
                        sig.name,
                        sig.python_text()
                    ),
                    span,
                )
                .with_label("not supported")
                .with_hint(BUILTIN_HINT)
            } else {
                Diagnostic::error(codes::BAD_CALL, err.message(&sig.name), span)
                    .with_label("in this call")
                    .with_hint("this fails in Python too: fix the arguments")
            };
            fe.diags.push(diag);
        }
    }
}

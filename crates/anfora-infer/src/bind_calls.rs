//! Calls that specialization binds to their callee's signature, so that every later stage sees
//! a plain call with one argument per parameter:
//!
//! * a star call, `CallStar(f, names, args, kw...)`, whose tuple's length inference knows;
//! * a keyword call through a value, `CallKw(f, names, args..., kw...)`;
//! * a call through a value of a function with `*args`, whose extra arguments are packed, or
//!   with defaults the call leaves out (later stages append effect states to calls, which
//!   binding at run time would take for arguments).
//!
//! Each is bound statically when every context the call reaches runs one graph with a
//! signature, called as a closure (not a partial application). Other calls stay as they are
//! and are bound when they run (`CallStar` and `CallKw` by both engines).
//!
//! The grad stage's bindings (`StarBind`, `DictBind`: a star call's arguments as a tuple, one
//! item per parameter; their gradients, which route each parameter's sensitivity back to its
//! argument) are bound the same way, always: inference refused those it could not bind.

use anfora_ir::{ArgPlace, ArgSource, Const, GraphId, Module, NodeId, Prim, arg_places};
use anfora_ops::abs::{Abs, CtxId, Func};

use crate::interpreter::Solved;
use crate::interpreter::binding::{layout, place_abs, single_graph};
use crate::specialize::operand_abs;

/// A call being specialized: its original `inputs`, specialized `out`, the contexts it may
/// call, and the graph its new nodes go in.
pub struct Site<'a> {
    pub solved: &'a Solved,
    pub ctx: CtxId,
    pub inputs: &'a [NodeId],
    pub out: &'a [NodeId],
    pub targets: &'a [CtxId],
    pub graph: GraphId,
}

/// The rewritten call's inputs, and the nodes made for it (which run before it) with their
/// abstracts.
pub struct Bound {
    pub inputs: Vec<NodeId>,
    pub new_nodes: Vec<(NodeId, Abs)>,
    /// The call is Python's TypeError for arguments that do not bind (its inputs raise it):
    /// it calls nothing.
    pub raises: bool,
}

/// A call's parts: the function, the positional arguments with their abstracts, the keyword
/// names and values.
struct Parts {
    callee: NodeId,
    callee_abs: Abs,
    positional: Vec<NodeId>,
    positional_abs: Vec<Abs>,
    names: Vec<String>,
    keywords: Vec<NodeId>,
    keyword_abs: Vec<Abs>,
    star: bool,
    /// The arguments bound as a tuple (`StarBind`, `DictBind`), not a call.
    tuple: bool,
}

pub fn rewrite(module: &mut Module, site: &Site) -> Option<Bound> {
    let mut new_nodes = Vec::new();
    if let Some(p) = module.constant(site.inputs[0]).and_then(|c| c.as_prim())
        && let Some((Some(d_at), _)) = layout(p)
    {
        return bind_gradient(module, site, d_at + 1, new_nodes);
    }
    let parts = parts(module, site, &mut new_nodes)?;
    // A call that cannot be bound (its callee is one of several functions, or Python would
    // raise TypeError) stays as it is, bound when it runs.
    let (mut inputs, raises) = bind_statically(module, site, &parts, &mut new_nodes)?;
    if parts.tuple && !raises {
        inputs[0] = module.value(Const::Prim(Prim::MakeTuple));
    }
    Some(Bound {
        inputs,
        new_nodes,
        raises,
    })
}

/// The parts of a star call (its tuple's items read by new nodes), a keyword call or a plain
/// call through a value; `None` for other calls.
fn parts(module: &mut Module, site: &Site, new_nodes: &mut Vec<(NodeId, Abs)>) -> Option<Parts> {
    let (inputs, out) = (site.inputs, site.out);
    let abs = |module: &Module, i: NodeId| operand_abs(site.solved, module, site.ctx, i);
    let names_of = |module: &Module, i: NodeId| -> Option<Vec<String>> {
        match module.constant(i) {
            Some(Const::Tuple(t)) => t
                .iter()
                .map(|c| match c {
                    Const::Str(s) => Some(s.to_string()),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    };
    match module.constant(inputs[0]) {
        Some(Const::Prim(p @ (Prim::CallStar | Prim::StarBind))) => {
            let tuple = *p == Prim::StarBind;
            let Abs::Tuple(items) = abs(module, inputs[3]) else {
                return None;
            };
            let names = names_of(module, inputs[2])?;
            let mut read = Reads::new(module, site, inputs[0], new_nodes);
            let positional = read.tuple_items(module, out[3], &items);
            Some(Parts {
                callee: out[1],
                callee_abs: abs(module, inputs[1]),
                positional,
                positional_abs: items.to_vec(),
                names,
                keywords: out[4..].to_vec(),
                keyword_abs: inputs[4..].iter().map(|&i| abs(module, i)).collect(),
                star: true,
                tuple,
            })
        }
        Some(Const::Prim(p @ (Prim::CallDict | Prim::DictBind))) => {
            let tuple = *p == Prim::DictBind;
            let (Abs::Tuple(items), Abs::Dict(kw)) =
                (abs(module, inputs[2]), abs(module, inputs[3]))
            else {
                return None;
            };
            let mut read = Reads::new(module, site, inputs[0], new_nodes);
            let positional = read.tuple_items(module, out[2], &items);
            let keywords = kw
                .iter()
                .map(|(k, a)| read.item(module, Prim::GetItem, out[3], Const::Str(k.clone()), a))
                .collect();
            Some(Parts {
                callee: out[1],
                callee_abs: abs(module, inputs[1]),
                positional,
                positional_abs: items.to_vec(),
                names: kw.iter().map(|(k, _)| k.to_string()).collect(),
                keywords,
                keyword_abs: kw.iter().map(|(_, a)| a.clone()).collect(),
                star: true,
                tuple,
            })
        }
        Some(Const::Prim(Prim::CallKw)) => {
            let names = names_of(module, inputs[2])?;
            let split = inputs.len().checked_sub(names.len())?;
            Some(Parts {
                callee: out[1],
                callee_abs: abs(module, inputs[1]),
                positional: out[3..split].to_vec(),
                positional_abs: inputs[3..split].iter().map(|&i| abs(module, i)).collect(),
                names,
                keywords: out[split..].to_vec(),
                keyword_abs: inputs[split..].iter().map(|&i| abs(module, i)).collect(),
                star: false,
                tuple: false,
            })
        }
        Some(_) => None,
        None => Some(Parts {
            callee: out[0],
            callee_abs: abs(module, inputs[0]),
            positional: out[1..].to_vec(),
            positional_abs: inputs[1..].iter().map(|&i| abs(module, i)).collect(),
            names: Vec::new(),
            keywords: Vec::new(),
            keyword_abs: Vec::new(),
            star: false,
            tuple: false,
        }),
    }
}

/// The nodes that read a star call's arguments out of its tuple and dict, which run before
/// the call.
struct Reads<'n> {
    graph: GraphId,
    span: anfora_ir::Span,
    new_nodes: &'n mut Vec<(NodeId, Abs)>,
}

impl<'n> Reads<'n> {
    fn new(
        module: &Module,
        site: &Site,
        call: NodeId,
        new_nodes: &'n mut Vec<(NodeId, Abs)>,
    ) -> Self {
        let span = module.node(call).span;
        Reads {
            graph: site.graph,
            span,
            new_nodes,
        }
    }

    /// A new node of abstract `abs`.
    fn apply(&mut self, module: &mut Module, inputs: Vec<NodeId>, abs: Abs) -> NodeId {
        let r = module.apply_unordered(self.graph, inputs, self.span);
        self.new_nodes.push((r, abs));
        r
    }

    /// `prim(from, key)`, of abstract `a`.
    fn item(
        &mut self,
        module: &mut Module,
        prim: Prim,
        from: NodeId,
        key: Const,
        a: &Abs,
    ) -> NodeId {
        let f = module.value(Const::Prim(prim));
        let key = module.value(key);
        self.apply(module, vec![f, from, key], a.clone())
    }

    /// The items of tuple `from`, of abstracts `items`.
    fn tuple_items(&mut self, module: &mut Module, from: NodeId, items: &[Abs]) -> Vec<NodeId> {
        (items.iter().enumerate())
            .map(|(i, a)| self.item(module, Prim::TupleGetItem, from, Const::Int(i as i64), a))
            .collect()
    }
}

/// The inputs of the call bound to its one target graph's signature, when it needs binding
/// (a star or keyword call, or a callee with `*args`) and can be; where the arguments do not
/// bind, the inputs of `Raise(TypeError, message)`, as Python raises before the call (and
/// `true`).
fn bind_statically(
    module: &mut Module,
    site: &Site,
    parts: &Parts,
    new_nodes: &mut Vec<(NodeId, Abs)>,
) -> Option<(Vec<NodeId>, bool)> {
    // A binding calls nothing: its graph is its callee's.
    let h = match parts.tuple {
        true => single_graph(&parts.callee_abs)?,
        false => site.solved.ctx(*site.targets.first()?).graph,
    };
    if site.targets.iter().any(|&t| site.solved.ctx(t).graph != h) {
        return None;
    }
    let Abs::Func(fs) = &parts.callee_abs else {
        return None;
    };
    if !fs
        .iter()
        .all(|f| matches!(f, Func::Closure { graph, .. } if *graph == h))
    {
        return None;
    }
    let sig = module.graph(h).signature.clone()?;
    let exact = parts.positional.len() == module.graph(h).params.len();
    let needs_binding = parts.star || !parts.names.is_empty() || sig.packs || !exact;
    if !needs_binding {
        return None;
    }
    let names: Vec<&str> = parts.names.iter().map(String::as_str).collect();
    let sources = match sig.bind(parts.positional.len(), &names) {
        Ok(sources) => sources,
        Err(e) => {
            let raise = module.value(Const::Prim(Prim::Raise));
            let kind = module.value(Const::str("TypeError"));
            let message = module.value(Const::str(&e.message(&sig.name)));
            return Some((vec![raise, kind, message], true));
        }
    };
    let span = module.node(parts.callee).span;
    let mut inputs = vec![parts.callee];
    for s in sources {
        inputs.push(match s {
            ArgSource::Positional(i) => parts.positional[i],
            ArgSource::Keyword(j) => parts.keywords[j],
            ArgSource::Default(k) => module.value(k),
            ArgSource::Packed(a, b) => {
                let make = module.value(Const::Prim(Prim::MakeTuple));
                let items = std::iter::once(make).chain(parts.positional[a..b].iter().copied());
                let t = module.apply_unordered(site.graph, items.collect(), span);
                new_nodes.push((t, Abs::tuple(parts.positional_abs[a..b].to_vec())));
                t
            }
            ArgSource::PackedKeywords(js) => {
                let make = module.value(Const::Prim(Prim::MakeDict));
                let keys = js
                    .iter()
                    .map(|&j| Const::Str(parts.names[j].as_str().into()));
                let keys = module.value(Const::tuple(keys.collect()));
                let values = js.iter().map(|&j| parts.keywords[j]);
                let inputs = [make, keys].into_iter().chain(values);
                let d = module.apply_unordered(site.graph, inputs.collect(), span);
                let items = js
                    .iter()
                    .map(|&j| (parts.names[j].as_str().into(), parts.keyword_abs[j].clone()));
                new_nodes.push((d, Abs::Dict(items.collect())));
                d
            }
        });
    }
    Some((inputs, false))
}

/// `StarBindGrad(f, names, args, d, kw...)` or `DictBindGrad(f, args, d, kwargs)` (`d` at
/// input `d_at`) as `MakeTuple` of the arguments' sensitivities: each parameter's item of
/// `d` (or the item of the tuple or dict a packing parameter made) goes back to the argument
/// bound to it.
fn bind_gradient(
    module: &mut Module,
    site: &Site,
    d_at: usize,
    mut new_nodes: Vec<(NodeId, Abs)>,
) -> Option<Bound> {
    let binding = if module.constant(site.inputs[0])?.as_prim()? == Prim::StarBindGrad {
        Prim::StarBind
    } else {
        Prim::DictBind
    };
    let callee = module.value(Const::Prim(binding));
    let without_d = |xs: &[NodeId]| {
        let mut v = xs.to_vec();
        v.remove(d_at);
        v[0] = callee;
        v
    };
    let (inputs, out) = (without_d(site.inputs), without_d(site.out));
    let view = Site {
        inputs: &inputs,
        out: &out,
        ..*site
    };
    let mut parts = parts(module, &view, &mut new_nodes)?;
    parts.tuple = true;
    let h = single_graph(&parts.callee_abs)?;
    let sig = module.graph(h).signature.clone()?;
    let names: Vec<&str> = parts.names.iter().map(String::as_str).collect();
    let Ok(sources) = sig.bind(parts.positional.len(), &names) else {
        // The call raised TypeError: its gradient never runs.
        let (inputs, _) = bind_statically(module, &view, &parts, &mut new_nodes)?;
        return Some(Bound {
            inputs,
            new_nodes,
            raises: true,
        });
    };
    let (positional, keywords) = arg_places(&sources, parts.positional.len(), names.len());
    let d_abs = operand_abs(site.solved, module, site.ctx, site.inputs[d_at]);
    let mut e = Sensitivities {
        d: (site.out[d_at], d_abs),
        reads: Reads::new(module, site, parts.callee, &mut new_nodes),
    };
    let mut inputs = vec![module.value(Const::Prim(Prim::MakeTuple))];
    inputs.push(e.tuple(module, &positional));
    if binding == Prim::DictBind {
        inputs.push(e.tuple(module, &keywords));
    } else {
        for &place in &keywords {
            inputs.push(e.of(module, place));
        }
    }
    Some(Bound {
        inputs,
        new_nodes,
        raises: false,
    })
}

/// The nodes that read the arguments' sensitivities from `d`, a binding tuple's.
struct Sensitivities<'n> {
    d: (NodeId, Abs),
    reads: Reads<'n>,
}

impl Sensitivities<'_> {
    fn apply(&mut self, module: &mut Module, inputs: Vec<NodeId>, abs: Abs) -> NodeId {
        self.reads.apply(module, inputs, abs)
    }

    /// The sensitivity of the argument that went to `place` (None where none did).
    fn of(&mut self, module: &mut Module, place: Option<ArgPlace>) -> NodeId {
        let Some(place) = place else {
            return module.value(Const::None);
        };
        let get = module.value(Const::Prim(Prim::GradItem));
        let p = module.value(Const::Int(place.param as i64));
        let whole = ArgPlace {
            item: None,
            ..place
        };
        let abs = place_abs(&self.d.1, Some(whole));
        let r = self.apply(module, vec![get, self.d.0, p], abs);
        let Some(q) = place.item else {
            return r;
        };
        let q = module.value(Const::Int(q as i64));
        let abs = place_abs(&self.d.1, Some(place));
        self.apply(module, vec![get, r, q], abs)
    }

    /// The tuple of the sensitivities of the arguments that went to `places`.
    fn tuple(&mut self, module: &mut Module, places: &[Option<ArgPlace>]) -> NodeId {
        let mut inputs = vec![module.value(Const::Prim(Prim::MakeTuple))];
        let abs = places.iter().map(|&p| place_abs(&self.d.1, p)).collect();
        for &place in places {
            inputs.push(self.of(module, place));
        }
        self.apply(module, inputs, Abs::tuple(abs))
    }
}

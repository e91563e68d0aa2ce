//! The auto-monad stage (seed 000, MindSpore's `auto_monad`): after inference, side effects
//! become data dependencies.
//!
//! * A memory state `U`, an IO state `IO` and a communication state `C` (the collectives,
//!   which every process must issue in the same order) are threaded through the program as ordinary
//!   values: constants in the entry graph, parameters of every other graph that needs them,
//!   arguments of every call that reaches an effect (direct calls, `Switch` branches, loops,
//!   closures, `Partial`s and higher-order calls alike: all graphs one call site may reach take
//!   the same states).
//! * A write becomes `op(..., u)` followed by `u = UpdateState(u, op)`; IO the same on `io`,
//!   collectives on `c`.
//! * A Parameter read where a value is needed becomes `Load(p, u)`, then
//!   `u = UpdateState(u, load)`, so later writes are ordered after it.
//! * A graph's output becomes `Depend(out, u, io, c)` unless it is a tail call that carries the
//!   states on (loops keep running in constant space).
//! * Random primitives (hidden effects) carry no state: the optimizer never merges, fuses or
//!   removes them.
//! * A call of a value the compiler cannot identify (`Any`) may reach any closure whose
//!   identity was lost (`Specialized::escaped`): those closures share one class, and such
//!   calls pass the states that class takes.
//!
//! The chains are threaded whatever the executor does, so every later pass can see from the
//! data flow alone what must stay ordered.

use std::collections::{HashMap, HashSet};

use anfora_infer::Specialized;
use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, GraphId, Module, Monad, NodeId, Prim, Span, codes};
use anfora_ops::{Abs, Func};

/// Which states a graph (or a call) needs, indexed by [`Monad::index`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Needs([bool; Monad::ALL.len()]);

impl Needs {
    fn any(self) -> bool {
        self.0.iter().any(|&b| b)
    }

    fn has(self, m: Monad) -> bool {
        self.0[m.index()]
    }

    fn union(self, o: Needs) -> Needs {
        Needs(std::array::from_fn(|i| self.0[i] || o.0[i]))
    }
}

/// The current state of each chain a graph threads (`None`: the graph does not take it).
type States = [Option<NodeId>; Monad::ALL.len()];

/// The effects of a primitive call: its chain from its attributes, and a memory read when it
/// reads a Parameter.
fn prim_needs(p: Prim, arg_abs: &[Abs]) -> Needs {
    let reads = arg_abs
        .iter()
        .enumerate()
        .any(|(i, a)| matches!(a, Abs::Ref(_)) && !p.takes_ref(i));
    let mut n = Needs::default();
    if let Some(m) = p.effects().chain() {
        n.0[m.index()] = true;
    }
    n.0[Monad::U.index()] |= reads;
    n
}

/// Primitives a computed callee may be (through `Partial`s).
fn callee_prims(abs: &Abs, out: &mut Vec<Prim>) {
    fn of(f: &Func, out: &mut Vec<Prim>) {
        match f {
            Func::Prim(p) => out.push(*p),
            Func::Partial(inner, _) => of(inner, out),
            _ => {}
        }
    }
    if let Abs::Func(fs) = abs {
        fs.iter().for_each(|f| of(f, out));
    }
}

struct Pass<'a> {
    module: &'a mut Module,
    abstracts: &'a mut HashMap<NodeId, Abs>,
    call_targets: &'a HashMap<NodeId, Vec<GraphId>>,
    graphs: Vec<GraphId>,
    /// Union-find over graphs that one call site may reach.
    class: HashMap<GraphId, GraphId>,
    /// A closure whose identity was lost (the class calls of unknown values reach), if any.
    escaped: Option<GraphId>,
}

impl Pass<'_> {
    fn abs(&self, n: NodeId) -> Abs {
        if let Some(a) = self.abstracts.get(&n) {
            return a.clone();
        }
        match self.module.constant(n) {
            Some(Const::Ref(p)) => Abs::Ref(std::sync::Arc::new(anfora_ops::RefAbs::of(p))),
            Some(Const::Prim(p)) => Abs::func(Func::Prim(*p)),
            _ => Abs::Any,
        }
    }

    fn find(&mut self, g: GraphId) -> GraphId {
        let mut r = g;
        while let Some(&p) = self.class.get(&r) {
            if p == r {
                break;
            }
            r = p;
        }
        self.class.insert(g, r);
        r
    }

    fn unite(&mut self, a: GraphId, b: GraphId) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.class.insert(rb, ra);
        }
    }

    /// Apply nodes a graph evaluates: its order, then an output call outside it.
    fn calls_of(&self, g: GraphId) -> Vec<NodeId> {
        let graph = self.module.graph(g);
        let mut out = graph.order.clone();
        if let Some(o) = graph.output
            && self.module.is_apply(o)
            && self.module.node(o).owner == Some(g)
            && !out.contains(&o)
        {
            out.push(o);
        }
        out
    }

    /// The graphs call `n` may reach: its callee, the targets inference found, or, for a
    /// value the compiler cannot identify, the escaped closures' class.
    fn targets(&self, n: NodeId) -> Vec<GraphId> {
        if let Some(h) = self.module.callee_graph(n) {
            return vec![h];
        }
        if let Some(ts) = self.call_targets.get(&n) {
            return ts.clone();
        }
        // Only a value inference found unknown: code it never reached (after an operation that
        // always raises) has no abstract and calls nothing.
        let unknown = |i: NodeId| matches!(self.abstracts.get(&i), Some(Abs::Any));
        let inputs = self.module.inputs(n);
        match (self.escaped, self.module.callee_prim(n)) {
            (Some(e), None) if unknown(inputs[0]) => vec![e],
            (Some(e), Some(Prim::CallKw | Prim::CallStar | Prim::CallDict))
                if unknown(inputs[1]) =>
            {
                vec![e]
            }
            _ => Vec::new(),
        }
    }

    fn is_tail(&self, g: GraphId, n: NodeId) -> bool {
        self.module.tail_call(g) == Some(n)
    }

    /// The local needs of call `n` (primitives it runs itself, not the graphs it calls).
    fn local_needs(&self, n: NodeId) -> Needs {
        let inputs = self.module.inputs(n);
        if let Some(p) = self.module.callee_prim(n) {
            let args: Vec<Abs> = inputs[1..].iter().map(|&a| self.abs(a)).collect();
            return prim_needs(p, &args);
        }
        let mut prims = Vec::new();
        callee_prims(&self.abs(inputs[0]), &mut prims);
        prims
            .into_iter()
            .fold(Needs::default(), |acc, p| acc.union(prim_needs(p, &[])))
    }
}

/// Threads the memory, IO and communication states through the specialized program. Returns the diagnostics
/// of effects it cannot order (a keyword call of an effectful function known only at run
/// time).
pub fn auto_monad(module: &mut Module, spec: &mut Specialized) -> Result<(), Vec<Diagnostic>> {
    let graphs = anfora_ir::analysis::analyze(module, &[spec.entry]).graphs;
    let mut pass = Pass {
        module,
        abstracts: &mut spec.abstracts,
        call_targets: &spec.call_targets,
        graphs,
        class: HashMap::new(),
        escaped: spec.escaped.first().copied(),
    };
    for w in spec.escaped.windows(2) {
        pass.unite(w[0], w[1]);
    }
    let graphs = pass.graphs.clone();

    // 1. What each graph does, transitively (callees first, to a fixpoint: loops and recursion).
    let mut local: HashMap<GraphId, Needs> = HashMap::new();
    let mut callees: HashMap<GraphId, Vec<(NodeId, Vec<GraphId>)>> = HashMap::new();
    for &g in &graphs {
        let mut needs = Needs::default();
        let mut calls = Vec::new();
        for n in pass.calls_of(g) {
            needs = needs.union(pass.local_needs(n));
            let targets = pass.targets(n);
            if !targets.is_empty() {
                calls.push((n, targets));
            }
        }
        local.insert(g, needs);
        callees.insert(g, calls);
    }
    // Graphs one call may reach take the same states.
    for calls in callees.values() {
        for (_, targets) in calls {
            for w in targets.windows(2) {
                pass.unite(w[0], w[1]);
            }
        }
    }
    let mut need: HashMap<GraphId, Needs> = HashMap::new();
    loop {
        let mut changed = false;
        for &g in &graphs {
            let mut n = local[&g];
            for (call, targets) in &callees[&g] {
                for &t in targets {
                    let root = pass.find(t);
                    n = n.union(need.get(&root).copied().unwrap_or_default());
                }
                // A call through a value that may also be an effectful primitive.
                n = n.union(pass.local_needs(*call));
            }
            let root = pass.find(g);
            let old = need.get(&root).copied().unwrap_or_default();
            let mut new = old.union(n);
            // A tail callee continues the caller's chains.
            for (call, targets) in &callees[&g] {
                if pass.is_tail(g, *call) {
                    for &t in targets {
                        let rt = pass.find(t);
                        let o = need.get(&rt).copied().unwrap_or_default();
                        let with = o.union(new);
                        if with != o {
                            need.insert(rt, with);
                            changed = true;
                        }
                    }
                }
            }
            new = new.union(need.get(&root).copied().unwrap_or_default());
            if new != old {
                need.insert(root, new);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let needs_of = |pass: &mut Pass, g: GraphId, need: &HashMap<GraphId, Needs>| {
        let r = pass.find(g);
        need.get(&r).copied().unwrap_or_default()
    };

    // 2. The entry is called by the host, which passes no states: if other graphs call it
    // too (recursion), a wrapper becomes the entry and passes the initial states.
    let entry_needs = needs_of(&mut pass, spec.entry, &need);
    let entry_called = callees
        .values()
        .flatten()
        .any(|(_, ts)| ts.contains(&spec.entry));
    let mut entry = spec.entry;
    if entry_called && entry_needs.any() {
        entry = wrap_entry(&mut pass, spec.entry, entry_needs);
    }

    // 3. Thread the states through every graph.
    let mut diags = Vec::new();
    for &g in &graphs {
        let is_top = g == entry;
        let n = needs_of(&mut pass, g, &need);
        let states = local_states(&mut pass, n, is_top, g);
        thread(&mut pass, g, states, &need, &mut diags);
    }
    spec.entry = entry;
    if diags.is_empty() { Ok(()) } else { Err(diags) }
}

/// The initial states of a graph: constants in the top graph, new parameters elsewhere.
fn local_states(pass: &mut Pass, n: Needs, top: bool, g: GraphId) -> States {
    Monad::ALL.map(|m| {
        n.has(m).then(|| {
            let node = if top {
                pass.module.value(Const::Monad(m))
            } else {
                let span = pass.module.graph(g).span;
                pass.module.add_param(g, m.param_name(), span)
            };
            pass.abstracts.insert(node, Abs::Monad(m));
            node
        })
    })
}

/// A new entry graph calling `entry` with the initial states.
fn wrap_entry(pass: &mut Pass, entry: GraphId, n: Needs) -> GraphId {
    let orig = pass.module.graph(entry).clone();
    let top = pass.module.add_graph(
        format!("{}_top", orig.name),
        orig.function.clone(),
        orig.kind,
        orig.span,
    );
    pass.module.graphs[top].signature = orig.signature.clone();
    let mut inputs = vec![pass.module.value(Const::Graph(entry))];
    for &p in &orig.params {
        let name = pass.module.node(p).name.clone();
        let np = pass
            .module
            .add_param(top, name.as_deref().unwrap_or(""), orig.span);
        let a = pass.abs(p);
        pass.abstracts.insert(np, a);
        inputs.push(np);
    }
    for m in Monad::ALL {
        if n.has(m) {
            let v = pass.module.value(Const::Monad(m));
            pass.abstracts.insert(v, Abs::Monad(m));
            inputs.push(v);
        }
    }
    let call = pass.module.apply(top, inputs, orig.span);
    let out_abs = orig.output.map(|o| pass.abs(o)).unwrap_or(Abs::Any);
    pass.abstracts.insert(call, out_abs);
    pass.module.set_output(top, call);
    pass.graphs.push(top);
    top
}

fn prim_node(
    pass: &mut Pass,
    g: GraphId,
    p: Prim,
    args: &[NodeId],
    span: Span,
    abs: Abs,
) -> NodeId {
    let callee = pass.module.value(Const::Prim(p));
    let mut inputs = vec![callee];
    inputs.extend_from_slice(args);
    let n = pass.module.apply_unordered(g, inputs, span);
    pass.abstracts.insert(n, abs);
    n
}

/// Moves state chain `state` (of monad `m`, which has a current state) past the nodes `after`:
/// `UpdateState(state, after...)`, appended to `order`, becomes its current state.
fn advance(
    pass: &mut Pass,
    g: GraphId,
    state: &mut Option<NodeId>,
    m: Monad,
    after: &[NodeId],
    span: Span,
    order: &mut Vec<NodeId>,
) {
    let mut args = vec![state.expect("a chain with a current state")];
    args.extend_from_slice(after);
    let s = prim_node(pass, g, Prim::UpdateState, &args, span, Abs::Monad(m));
    order.push(s);
    *state = Some(s);
}

fn thread(
    pass: &mut Pass,
    g: GraphId,
    states0: States,
    need: &HashMap<GraphId, Needs>,
    diags: &mut Vec<Diagnostic>,
) {
    let mut states = states0;
    let calls = pass.calls_of(g);
    let in_order: HashSet<NodeId> = pass.module.graph(g).order.iter().copied().collect();
    let mut order = Vec::with_capacity(calls.len() * 2);
    let mut tail_carries = false;
    for n in calls {
        let span = pass.module.node(n).span;
        let tail = pass.is_tail(g, n);
        let inputs = pass.module.inputs(n).to_vec();
        if matches!(
            pass.module.callee_prim(n),
            Some(Prim::CallKw | Prim::CallStar | Prim::CallDict)
        ) {
            // The callee binds keywords at run time: states cannot be appended after them.
            let wants = pass.targets(n).iter().fold(Needs::default(), |acc, t| {
                let r = pass.find(*t);
                acc.union(need.get(&r).copied().unwrap_or_default())
            });
            if wants.any() {
                diags.push(
                    Diagnostic::error(
                        codes::EFFECT_KW_CALL,
                        "a call with keyword arguments of a function known only at run time cannot have side effects",
                        span,
                    )
                    .with_label("this call may write Parameters, print or communicate")
                    .with_hint("pass the arguments by position, or call the function directly"),
                );
            }
        }
        if let Some(p) = pass.module.callee_prim(n) {
            // Parameters read here: Load in the current memory state.
            let u = Monad::U.index();
            let mut loads = Vec::new();
            for (i, &a) in inputs.iter().enumerate().skip(1) {
                if let Abs::Ref(r) = pass.abs(a)
                    && !p.takes_ref(i - 1)
                    && let Some(cur) = states[u]
                {
                    let l = prim_node(pass, g, Prim::Load, &[a, cur], span, r.value());
                    order.push(l);
                    pass.module.inputs_mut(n).expect("an Apply node")[i] = l;
                    loads.push(l);
                }
            }
            if !loads.is_empty() && states[u].is_some() {
                advance(pass, g, &mut states[u], Monad::U, &loads, span, &mut order);
            }
            let chain = p.effects().chain();
            match chain.and_then(|m| states[m.index()].map(|cur| (m, cur))) {
                Some((m, cur)) => {
                    pass.module.inputs_mut(n).expect("an Apply node").push(cur);
                    if in_order.contains(&n) {
                        order.push(n);
                    }
                    advance(pass, g, &mut states[m.index()], m, &[n], span, &mut order);
                }
                None if in_order.contains(&n) => order.push(n),
                None => {}
            }
            continue;
        }
        // A call of a graph or of a computed function: pass the states its targets take.
        let targets = pass.targets(n);
        let mut wants = pass.local_needs(n);
        for t in &targets {
            let r = pass.find(*t);
            wants = wants.union(need.get(&r).copied().unwrap_or_default());
        }
        let mut passed = Needs::default();
        for m in Monad::ALL {
            if wants.has(m)
                && let Some(cur) = states[m.index()]
            {
                pass.module.inputs_mut(n).expect("an Apply node").push(cur);
                passed.0[m.index()] = true;
            }
        }
        if in_order.contains(&n) {
            order.push(n);
        }
        if tail {
            // The callee continues the chains and returns after them.
            tail_carries = Monad::ALL
                .iter()
                .all(|m| passed.has(*m) || states[m.index()] == states0[m.index()]);
            continue;
        }
        for m in Monad::ALL {
            if passed.has(m) {
                advance(pass, g, &mut states[m.index()], m, &[n], span, &mut order);
            }
        }
    }
    // The output waits for the last state of each chain this graph changed.
    if !tail_carries {
        let pending: Vec<NodeId> = (0..states.len())
            .filter(|&i| states[i] != states0[i])
            .filter_map(|i| states[i])
            .collect();
        if let (false, Some(out)) = (pending.is_empty(), pass.module.graph(g).output) {
            let span = pass.module.node(out).span;
            let mut args = vec![out];
            args.extend(pending);
            let a = pass.abs(out);
            let d = prim_node(pass, g, Prim::Depend, &args, span, a);
            order.push(d);
            pass.module.set_output(g, d);
        }
    }
    pass.module.graphs[g].order = order;
}

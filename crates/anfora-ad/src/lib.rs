//! The grad stage: reverse-mode automatic differentiation as an IR-to-IR transform, after
//! Pearlmutter and Siskind's J/K closure transform (as in Myia and MindSpore).
//!
//! The stage runs on resolved graphs, before inference, and replaces every call of
//! `grad`/`value_and_grad`/`vjp` whose function is known at compile time (`jvp` is first
//! rewritten into two `vjp`s, see [`jvp`]):
//! 1. [`lift`] copies the graphs the function reaches so that none has free variables;
//! 2. [`J`](Transform::j_graph) maps each closed graph `g` to `J(g)`, which computes `g`'s value
//!    and returns it with a backward closure `bprop(dout)`; the closure returns the
//!    sensitivities of `g`'s parameters. Calls of graphs become calls of their J graphs;
//!    primitive calls keep their forward form and their backward rule ([`rules`]) is emitted in
//!    the backward graph, in reverse order; a value used several times sums its
//!    sensitivities (`GradAdd`). Control flow needs little: a `Switch` chooses between J
//!    graphs, recursion is calls, and the chain of backward closures is the tape (each
//!    closure keeps only the forward values its rules read). Loops (cycles of tail calls)
//!    pass continuations instead ([`loops`]), so that neither pass nests a call per
//!    iteration;
//! 3. a wrapper graph calls `J(f)`, seeds the output sensitivity with ones and picks the
//!    requested gradients.
//!
//! The result is ordinary IR that inference specializes and the optimizer cleans up. Effects
//! stay in the forward graphs (they run once); the auto-monad stage threads them afterwards.

mod cells;
mod constant_args;
mod emit;
mod expand;
mod grad_arguments;
mod jvp;
mod lift;
mod loops;
mod methods;
mod stars;

use std::collections::{HashMap, HashSet};

use anfora_ir::analysis::{reachable, referenced};
use anfora_ir::codes;
use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, GraphId, GraphKind, Module, NodeId, Prim, Span};

pub use lift::{FvKey, Lifted, lift};

/// What the sensitivity of an integer tensor is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntegerSensitivities {
    /// A zero of its dtype: integers are not differentiated (anfora's and JAX's rule).
    Zero,
    /// The sensitivity computed as for floats and cast (truncated) to the value's dtype at
    /// every value: MindSpore's rule, which its compatibility layer asks for.
    Cast,
}

/// Unique graph names.
pub struct Namer {
    used: HashSet<String>,
}

impl Namer {
    pub fn new(m: &Module) -> Namer {
        Namer {
            used: m.graphs.values().map(|g| g.name.clone()).collect(),
        }
    }

    pub fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut i = 1;
        while !self.used.insert(name.clone()) {
            name = format!("{base}_{i}");
            i += 1;
        }
        name
    }
}

fn is_grad_call(m: &Module, n: NodeId) -> bool {
    matches!(
        m.callee_prim(n),
        Some(Prim::Grad | Prim::ValueAndGrad | Prim::Vjp | Prim::Jvp)
    )
}

/// Rewrites every `jvp` call into `vjp` calls ([`jvp`]).
fn desugar_jvps(m: &mut Module, roots: &[GraphId]) -> Vec<Diagnostic> {
    let (graphs, calls) = grad_calls(m, roots);
    let mut names = Namer::new(m);
    let mut errors = Vec::new();
    for (g, n) in calls {
        if m.callee_prim(n) == Some(Prim::Jvp)
            && let Err(e) = jvp::desugar(m, &mut names, g, n, &graphs)
        {
            errors.push(*e);
        }
    }
    errors
}

/// Expands every `grad`, `value_and_grad` and `vjp` call in the graphs reachable from `roots`.
/// Returns whether anything changed.
pub fn expand(m: &mut Module, roots: &[GraphId]) -> Result<bool, Vec<Diagnostic>> {
    let (_, pending) = grad_calls(m, roots);
    if pending.is_empty() {
        return Ok(false);
    }
    let jvp_errors = desugar_jvps(m, roots);
    if !jvp_errors.is_empty() {
        return Err(jvp_errors);
    }
    grad_arguments::copy_into_callers(m, roots);
    let (mut graphs, mut pending) = grad_calls(m, roots);
    let mut t = Transform::new(m);
    let mut errors = Vec::new();
    loop {
        let mut progress = false;
        for &(g, n) in &pending {
            let f = t.m.inputs(n)[1];
            let Some(fg) = t.m.constant(f).and_then(Const::as_graph) else {
                let inner = pending.iter().any(|&(_, p)| p == f);
                if !inner {
                    errors.push(
                        Diagnostic::error(
                            codes::GRAD_UNKNOWN_FUNCTION,
                            format!(
                                "{}() needs a function known at compile time",
                                t.m.callee_prim(n).map(Prim::python_name).unwrap_or_default()
                            ),
                            t.m.node(n).span,
                        )
                        .with_hint(
                            "differentiate a def, a lambda or another grad named here; a function passed in as an argument is only known at run time",
                        ),
                    );
                }
                continue;
            };
            // Inner grads first: the function must be free of unexpanded ones.
            if has_grad_calls(t.m, fg) {
                continue;
            }
            match t.expand_one(g, n, fg, &graphs) {
                Ok(()) => progress = true,
                Err(e) => errors.extend(e),
            }
        }
        if !progress || !errors.is_empty() {
            break;
        }
        (graphs, pending) = grad_calls(t.m, roots);
        if pending.is_empty() {
            break;
        }
    }
    errors.append(&mut t.errors);
    if errors.is_empty() {
        Ok(true)
    } else {
        Err(errors)
    }
}

/// Whether the graphs `f` calls or refers to (not those whose values it reads as free
/// variables: lifting turns those into parameters) hold grad calls.
fn has_grad_calls(m: &Module, f: GraphId) -> bool {
    referenced(m, &[f])
        .iter()
        .any(|(_, nodes)| nodes.iter().any(|&n| is_grad_call(m, n)))
}

/// Replaces call `n` of graph `h` by `result`: the nodes appended to `h`'s evaluation order
/// since it had `mark` entries take `n`'s place there, and uses of `n` in `all` become uses of
/// `result`.
fn replace_call(
    m: &mut Module,
    h: GraphId,
    n: NodeId,
    mark: usize,
    result: NodeId,
    all: &[GraphId],
) {
    let order = &mut m.graphs[h].order;
    let pos = order.iter().position(|&x| x == n);
    let new: Vec<NodeId> = order.drain(mark..).collect();
    match pos {
        Some(i) => {
            order.splice(i..=i, new);
        }
        None => order.extend(new),
    }
    m.replace_uses(all, n, result);
}

/// The graphs reachable from `roots` and the grad calls in them.
fn grad_calls(m: &Module, roots: &[GraphId]) -> (Vec<GraphId>, Vec<(GraphId, NodeId)>) {
    let mut graphs = Vec::new();
    let mut calls = Vec::new();
    for (g, nodes) in reachable(m, roots) {
        graphs.push(g);
        calls.extend(
            nodes
                .into_iter()
                .filter(|&n| is_grad_call(m, n))
                .map(|n| (g, n)),
        );
    }
    (graphs, calls)
}

/// One backward step recorded while building a J graph.
pub(crate) enum Back {
    /// A primitive call: its J-graph arguments and value.
    Prim {
        node: NodeId,
        prim: Prim,
        args: Vec<NodeId>,
        out: NodeId,
    },
    /// A call of a graph (or a function value): its backward closure.
    Call {
        node: NodeId,
        out: NodeId,
        bprop: NodeId,
        dynamic: bool,
    },
    /// An operation on a cell: the cell's adjoint (see [`cells`]).
    Cell { node: NodeId, adjoint: NodeId },
}

/// How a J graph ends.
enum Ending {
    /// `(value, bprop)`.
    Pair(NodeId),
    /// The tail call into its cycle that passes its continuation on (see [`loops`]).
    Loop(loops::TailCall),
}

struct Transform<'a> {
    m: &'a mut Module,
    names: Namer,
    /// J graph of each closed graph (for a graph on a cycle of tail calls, the entry that
    /// calls its continuation-passing form, see [`loops`]).
    /// Each is kept per rule for integer values, which the backward graphs depend on.
    j: HashMap<(GraphId, IntegerSensitivities), GraphId>,
    /// The continuation-passing J graph `Jk(g)` of each graph on or leaving a cycle of tail
    /// calls.
    jk: HashMap<(GraphId, IntegerSensitivities), GraphId>,
    /// J graph of each primitive used as a value.
    j_prim: HashMap<(Prim, IntegerSensitivities), GraphId>,
    /// J graphs to build: the graph, its J graph, whether it passes continuations, and the
    /// rule for integer values it is built with.
    todo: Vec<(GraphId, GraphId, bool, IntegerSensitivities)>,
    /// The rule for integer values of the J graphs being made now.
    integers: IntegerSensitivities,
    cycles: loops::TailCycles,
    errors: Vec<Diagnostic>,
    /// Missing rules already reported (one diagnostic per call site).
    reported: HashSet<(Prim, Span)>,
    /// The program differentiated has closure cells (see [`cells`]).
    cells: bool,
}

impl<'a> Transform<'a> {
    fn new(m: &'a mut Module) -> Transform<'a> {
        let names = Namer::new(m);
        Transform {
            m,
            names,
            j: HashMap::new(),
            jk: HashMap::new(),
            j_prim: HashMap::new(),
            todo: Vec::new(),
            integers: IntegerSensitivities::Zero,
            cycles: loops::TailCycles::default(),
            errors: Vec::new(),
            reported: HashSet::new(),
            cells: false,
        }
    }

    fn int(&mut self, i: i64) -> NodeId {
        self.m.value(Const::Int(i))
    }

    fn apply(&mut self, g: GraphId, inputs: Vec<NodeId>, span: Span) -> NodeId {
        self.m.apply(g, inputs, span)
    }

    fn prim(&mut self, g: GraphId, p: Prim, args: &[NodeId], span: Span) -> NodeId {
        self.m.apply_prim(g, p, args, span)
    }

    /// Calls a J graph (or J-world function) in `g` and unpacks its `(value, bprop)`.
    fn call_j(&mut self, g: GraphId, inputs: Vec<NodeId>, span: Span) -> (NodeId, NodeId) {
        let r = self.apply(g, inputs, span);
        let (zero, one) = (self.int(0), self.int(1));
        let value = self.prim(g, Prim::TupleGetItem, &[r, zero], span);
        let bprop = self.prim(g, Prim::TupleGetItem, &[r, one], span);
        (value, bprop)
    }

    /// Item `idx` of the sensitivities `ds`, with zeros shaped like `like` for a missing one.
    fn dense_item(&mut self, g: GraphId, ds: NodeId, idx: i64, like: NodeId, span: Span) -> NodeId {
        let k = self.int(idx);
        let item = self.prim(g, Prim::TupleGetItem, &[ds, k], span);
        self.prim(g, Prim::FillZeros, &[item, like], span)
    }

    /// Ends backward graph `bg` with one dense sensitivity per parameter (so that the branches
    /// of a Switch agree on their types), handed on to the continuation `k` if there is one.
    fn close_backward(
        &mut self,
        bg: GraphId,
        grads: Vec<Option<NodeId>>,
        params: &[NodeId],
        k: Option<NodeId>,
        span: Span,
    ) {
        let mut outs = Vec::with_capacity(params.len());
        for (gi, &p) in grads.into_iter().zip(params) {
            let gi = gi.unwrap_or_else(|| self.m.value(Const::None));
            outs.push(self.prim(bg, Prim::FillZeros, &[gi, p], span));
        }
        let mut bout = self.prim(bg, Prim::MakeTuple, &outs, span);
        if let Some(k) = k {
            // A tail call: the chain of continuations runs in constant depth.
            bout = self.apply(bg, vec![k, bout], span);
        }
        self.m.set_output(bg, bout);
    }

    /// Ends J graph `jg` with `(out, bprop)`, `bprop` being the backward graph `bg`.
    fn return_pair(&mut self, jg: GraphId, out: NodeId, bg: GraphId, span: Span) {
        let bval = self.m.value(Const::Graph(bg));
        let r = self.prim(jg, Prim::MakeTuple, &[out, bval], span);
        self.m.set_output(jg, r);
    }

    /// Parameters of `to` named as those of `g`, in order; a loop header's sequences (its
    /// parameters or constants, after lifting) carry over, so that inference unrolls the J
    /// loop where it unrolls the loop.
    fn copy_params(&mut self, g: GraphId, to: GraphId) -> Vec<NodeId> {
        let params = self.m.graph(g).params.clone();
        let copies: Vec<NodeId> = (params.iter())
            .map(|&p| {
                let node = self.m.node(p).clone();
                self.m
                    .add_param(to, node.name.as_deref().unwrap_or("x"), node.span)
            })
            .collect();
        let iterates = (self.m.graph(g).iterates.iter())
            .filter_map(|s| match params.iter().position(|p| p == s) {
                Some(j) => Some(copies[j]),
                None => self.m.constant(*s).is_some().then_some(*s),
            })
            .collect();
        self.m.graphs[to].iterates = iterates;
        copies
    }

    /// A new, empty J graph for `g`, named `prefix` + `g`'s name.
    fn new_j_graph(&mut self, g: GraphId, prefix: &str) -> GraphId {
        let src = self.m.graph(g);
        let (name, function, span) = (src.name.clone(), src.function.clone(), src.span);
        let kind = src.kind;
        self.m.add_graph(
            self.names.fresh(&format!("{prefix}{name}")),
            function,
            kind,
            span,
        )
    }

    /// The J graph of closed graph `g` (built by [`Transform::finish`]).
    fn j_graph(&mut self, g: GraphId) -> GraphId {
        if let Some(&j) = self.j.get(&(g, self.integers)) {
            return j;
        }
        let jg = self.new_j_graph(g, "J");
        self.j.insert((g, self.integers), jg);
        // An object's graph, or a lifted copy of one: the J graph stands for the object too.
        let object = match self.m.objects.contains_key(&g) {
            true => Some(g),
            false => self.m.differentiated_objects.get(&g).copied(),
        };
        if let Some(o) = object {
            self.m.differentiated_objects.insert(jg, o);
        }
        if self.cycles.contains(g) {
            self.entry(g, jg);
        } else {
            self.todo.push((g, jg, false, self.integers));
        }
        jg
    }

    fn finish(&mut self) {
        let outer = self.integers;
        while let Some((g, jg, cps, integers)) = self.todo.pop() {
            self.integers = integers;
            self.build(g, jg, cps);
        }
        self.integers = outer;
    }

    /// The J-world counterpart of input `x` of a node of `g`.
    fn j_value(&mut self, g: GraphId, x: NodeId, map: &HashMap<NodeId, NodeId>) -> NodeId {
        if self.m.node(x).owner == Some(g) {
            return map[&x];
        }
        match self.m.constant(x) {
            Some(Const::Graph(k)) => {
                let k = *k;
                let jk = self.j_graph(k);
                self.m.value(Const::Graph(jk))
            }
            Some(Const::Prim(p)) if !p.is_type() => {
                let p = *p;
                let jp = self.j_prim_graph(p, self.m.node(x).span);
                self.m.value(Const::Graph(jp))
            }
            Some(c) => {
                if !c.holds_graph() {
                    return x;
                }
                // A tuple of objects or functions (`self.layers`): the same tuple of their J
                // graphs, so that a call of an item in the J world returns `(out, bprop)`.
                let (c, span) = (c.clone(), self.m.node(x).span);
                let jc = self.j_const(&c, span);
                self.m.value(jc)
            }
            None => x,
        }
    }

    /// Constant `c` with every function in it replaced by its J graph.
    fn j_const(&mut self, c: &Const, span: Span) -> Const {
        anfora_ops::deep(|| self.j_const_inner(c, span))
    }

    fn j_const_inner(&mut self, c: &Const, span: Span) -> Const {
        match c {
            Const::Graph(k) => Const::Graph(self.j_graph(*k)),
            Const::Prim(p) if !p.is_type() => Const::Graph(self.j_prim_graph(*p, span)),
            Const::Tuple(items) => {
                Const::tuple(items.iter().map(|i| self.j_const(i, span)).collect())
            }
            Const::List(items) => {
                Const::List(items.iter().map(|i| self.j_const(i, span)).collect())
            }
            c => c.clone(),
        }
    }

    /// `J(p)` for a primitive used as a value: `(p(x...), bprop)`.
    fn j_prim_graph(&mut self, p: Prim, span: Span) -> GraphId {
        if let Some(&j) = self.j_prim.get(&(p, self.integers)) {
            return j;
        }
        let sig = p.signature();
        let jg = self.m.add_graph(
            self.names.fresh(&format!("J{}", p.name())),
            std::sync::Arc::from(p.python_name()),
            GraphKind::Lambda,
            span,
        );
        self.j_prim.insert((p, self.integers), jg);
        if sig.varargs {
            self.no_rule(p, span);
        }
        let params: Vec<NodeId> = sig
            .params
            .iter()
            .map(|q| self.m.add_param(jg, &q.name, span))
            .collect();
        let callee = self.m.value(Const::Prim(p));
        let (out, rule_prim, rule_args) = self.forward_prim(jg, callee, p, &params, span);
        let bg = self.m.add_graph(
            self.names.fresh(&format!("B{}", p.name())),
            std::sync::Arc::from(p.python_name()),
            GraphKind::Lambda,
            span,
        );
        let d = self.m.add_param(bg, "dout", span);
        let needs = vec![true; rule_args.len()];
        let mut e = emit::GraphEmit {
            m: self.m,
            graph: bg,
            span,
            integers: self.integers,
        };
        let grads = emit::backward(&mut e, rule_prim, &rule_args, &needs, out, d);
        let mut grads = grads.unwrap_or_else(|| {
            self.no_rule(p, span);
            vec![None; params.len()]
        });
        if rule_prim != p {
            // Dropout: only x (the first argument of both) gets a gradient.
            grads.truncate(1);
            grads.resize(params.len(), None);
        }
        self.close_backward(bg, grads, &params, None, span);
        self.return_pair(jg, out, bg, span);
        jg
    }

    /// The forward call of primitive `p` (the node `callee`) on `args` in J graph `jg`: its
    /// value, and the primitive and arguments whose backward rule differentiates it.
    /// `ops.dropout` runs as `DropoutApply(x, DropoutMask(x, p, training), p, training)`, so
    /// that the backward pass multiplies by the very mask the forward pass drew; the
    /// sensitivity of `x` stays the first.
    fn forward_prim(
        &mut self,
        jg: GraphId,
        callee: NodeId,
        p: Prim,
        args: &[NodeId],
        span: Span,
    ) -> (NodeId, Prim, Vec<NodeId>) {
        let mut e = emit::GraphEmit {
            m: self.m,
            graph: jg,
            span,
            integers: self.integers,
        };
        if let Some(f) = emit::forward(&mut e, p, args) {
            return (f.out, f.prim, f.args);
        }
        let mut ins = vec![callee];
        ins.extend(args);
        (self.apply(jg, ins, span), p, args.to_vec())
    }

    fn no_rule(&mut self, p: Prim, span: Span) {
        if self.reported.insert((p, span)) {
            self.errors.push(
                Diagnostic::error(
                    codes::NO_BACKWARD_RULE,
                    format!("{} has no backward rule", p.python_name()),
                    span,
                )
                .with_label("the gradient flows through this call")
                .with_hint(match p.def().backward {
                    anfora_ops::def::Backward::Refused(why) => why,
                    _ => "wrap the input in ops.stop_gradient(...) if no gradient should flow here",
                }),
            );
        }
    }

    /// Builds `J(g)` into `jg` (`Jk(g)` with `cps`, see [`loops`]).
    fn build(&mut self, g: GraphId, jg: GraphId, cps: bool) {
        let src = self.m.graph(g).clone();
        let jparams = self.copy_params(g, jg);
        let mut map: HashMap<NodeId, NodeId> =
            src.params.iter().copied().zip(jparams.clone()).collect();
        let k = cps.then(|| self.m.add_param(jg, "k", src.span));
        let tail = if cps { self.cycle_tail_call(g) } else { None };
        let backs = self.forward(g, jg, &mut map, tail.as_ref());
        if let (Some(t), Some(k)) = (&tail, k)
            && self.forwards(g, t)
        {
            // Its continuation would only pass the callee's sensitivities on to `k`.
            self.continue_loop(g, jg, k, t, &map);
            return;
        }
        let ending = match tail {
            Some(t) => Ending::Loop(t),
            None => Ending::Pair(match src.output {
                Some(o) => self.j_value(g, o, &map),
                None => self.m.value(Const::None),
            }),
        };

        // The backward graph, nested in the J graph (it reads forward values).
        let bg = self.m.add_graph(
            self.names.fresh(&format!("B{}", src.name)),
            src.function.clone(),
            GraphKind::Lambda,
            src.span,
        );
        let mut sens: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
        match &ending {
            Ending::Pair(_) => {
                let dout = self.m.add_param(bg, "dout", src.span);
                if let Some(o) = src.output
                    && self.m.node(o).owner == Some(g)
                {
                    sens.entry(o).or_default().push(dout);
                }
            }
            // A continuation receives the sensitivities of the tail call's arguments.
            Ending::Loop(t) => {
                let ds = self.m.add_param(bg, "ds", src.span);
                self.call_sensitivities(g, bg, t.node, ds, false, &mut sens);
            }
        }
        self.backward(g, bg, backs, &mut sens);
        let grads = src
            .params
            .iter()
            .map(|p| self.accumulate(bg, sens.remove(p), src.span))
            .collect();
        self.close_backward(bg, grads, &jparams, k, src.span);
        match ending {
            Ending::Loop(t) => {
                let bval = self.m.value(Const::Graph(bg));
                self.continue_loop(g, jg, bval, &t, &map);
            }
            Ending::Pair(out) => self.return_pair(jg, out, bg, src.span),
        }
    }

    /// Ends `Jk(g)` with its tail call into its cycle: `Jk(callee)(args..., cont)`, `cont`
    /// being the callee's continuation.
    fn continue_loop(
        &mut self,
        g: GraphId,
        jg: GraphId,
        cont: NodeId,
        t: &loops::TailCall,
        map: &HashMap<NodeId, NodeId>,
    ) {
        let ins = self.m.inputs(t.node).to_vec();
        let callee = match t.switch {
            Some(s) => map[&s],
            None => {
                let jk = self.jk_graph(t.targets[0]);
                self.m.value(Const::Graph(jk))
            }
        };
        let mut call = vec![callee];
        for &x in &ins[1..] {
            call.push(self.j_value(g, x, map));
        }
        call.push(cont);
        let node = self.m.node(t.node).clone();
        let r = self.apply(jg, call, node.span);
        self.m.nodes[r].inlined = node.inlined;
        self.m.set_output(jg, r);
    }

    /// The forward half of `J(g)` in `jg`: every node of `g` but `tail`'s call (which
    /// [`Transform::continue_loop`] makes), mapped into `map`; the backward steps, in order.
    fn forward(
        &mut self,
        g: GraphId,
        jg: GraphId,
        map: &mut HashMap<NodeId, NodeId>,
        tail: Option<&loops::TailCall>,
    ) -> Vec<Back> {
        let mut backs: Vec<Back> = Vec::new();
        for n in self.m.graph_nodes(g) {
            if tail.is_some_and(|t| t.node == n) {
                continue;
            }
            let node = self.m.node(n).clone();
            let span = node.span;
            let ins = self.m.inputs(n).to_vec();
            let fwd = if let Some(t) = tail.filter(|t| t.switch == Some(n)) {
                // The Switch of a tail call into the cycle chooses between `Jk` graphs (its
                // backward rule is zero, and its branches are constants).
                let mut sw = vec![self.j_value(g, ins[1], map)];
                for &h in &t.targets {
                    let jk = self.jk_graph(h);
                    sw.push(self.m.value(Const::Graph(jk)));
                }
                self.prim(jg, Prim::Switch, &sw, span)
            } else {
                self.forward_node(g, jg, n, map, &mut backs)
            };
            if let Some(name) = &node.name {
                self.m.set_name(fwd, name);
            }
            self.m.nodes[fwd].inlined = node.inlined.clone();
            map.insert(n, fwd);
        }
        backs
    }

    /// The J-world counterpart of node `n` of `g`, made in `jg`, with its backward step.
    fn forward_node(
        &mut self,
        g: GraphId,
        jg: GraphId,
        n: NodeId,
        map: &HashMap<NodeId, NodeId>,
        backs: &mut Vec<Back>,
    ) -> NodeId {
        let span = self.m.node(n).span;
        let ins = self.m.inputs(n).to_vec();
        let binding = stars::binds_callee(self.m, n);
        let args: Vec<NodeId> = (ins[1..].iter().enumerate())
            .map(|(i, &x)| match binding && i == 0 {
                true => x,
                false => self.j_value(g, x, map),
            })
            .collect();
        match self.m.constant(ins[0]).cloned() {
            Some(Const::Prim(p)) if cells::is_cell_prim(p) => {
                let (out, back) = self.forward_cell(jg, n, p, &args, span);
                backs.push(back);
                out
            }
            Some(Const::Prim(p)) => {
                let (out, prim, args) = self.forward_prim(jg, ins[0], p, &args, span);
                backs.push(Back::Prim {
                    node: n,
                    prim,
                    args,
                    out,
                });
                out
            }
            other => {
                let (callee, dynamic) = match other {
                    Some(Const::Graph(k)) => {
                        let jk = self.j_graph(k);
                        (self.m.value(Const::Graph(jk)), false)
                    }
                    _ => (self.j_value(g, ins[0], map), true),
                };
                let mut jins = vec![callee];
                jins.extend(&args);
                let (out, bprop) = self.call_j(jg, jins, span);
                backs.push(Back::Call {
                    node: n,
                    out,
                    bprop,
                    dynamic,
                });
                out
            }
        }
    }

    /// Emits the backward steps `backs` of `g` into `bg`, in reverse, adding to `sens` the
    /// sensitivities of the nodes of `g` that they give.
    fn backward(
        &mut self,
        g: GraphId,
        bg: GraphId,
        backs: Vec<Back>,
        sens: &mut HashMap<NodeId, Vec<NodeId>>,
    ) {
        let owned = |m: &Module, x: NodeId| m.node(x).owner == Some(g);
        for back in backs.into_iter().rev() {
            let n = match &back {
                Back::Prim { node, .. } | Back::Call { node, .. } | Back::Cell { node, .. } => {
                    *node
                }
            };
            let mut d = self.accumulate(bg, sens.remove(&n), self.m.node(n).span);
            // A cell's step runs whether or not its value has a sensitivity: the adjoint
            // carries what later reads gave. So does a call's where the program has cells:
            // the callee may read or write one.
            match back {
                Back::Cell { adjoint, .. } => {
                    self.backward_cell(g, bg, (n, adjoint), d, sens);
                    continue;
                }
                Back::Call { out, .. } if d.is_none() && self.cells => {
                    d = Some(self.zeros_like(bg, out, self.m.node(n).span));
                }
                _ => {}
            }
            let Some(d) = d else {
                continue;
            };
            let span = self.m.node(n).span;
            let ins = self.m.inputs(n).to_vec();
            match back {
                Back::Prim {
                    prim, args, out, ..
                } => {
                    let mut needs: Vec<bool> = ins[1..].iter().map(|&x| owned(self.m, x)).collect();
                    if args.len() != needs.len() {
                        // ops.dropout's forward (see `forward_prim`): only x, the first
                        // argument of both calls, gets a sensitivity.
                        needs.truncate(1);
                        needs.resize(args.len(), false);
                    }
                    if !needs.iter().any(|&b| b) {
                        continue;
                    }
                    let mut e = emit::GraphEmit {
                        m: self.m,
                        graph: bg,
                        span,
                        integers: self.integers,
                    };
                    match emit::backward(&mut e, prim, &args, &needs, out, d) {
                        Some(grads) => {
                            for (i, gi) in grads.into_iter().enumerate() {
                                if let Some(gi) = gi
                                    && needs[i]
                                {
                                    sens.entry(ins[1 + i]).or_default().push(gi);
                                }
                            }
                        }
                        None => self.no_rule(prim, span),
                    }
                }
                Back::Call { bprop, dynamic, .. } => {
                    let ds = self.apply(bg, vec![bprop, d], span);
                    self.call_sensitivities(g, bg, n, ds, dynamic, sens);
                }
                Back::Cell { .. } => {}
            }
        }
    }

    /// Adds to `sens` the sensitivities of the arguments (and, for a call of a function value
    /// `dynamic`, of the callee) of call `n` of `g`, items of its callee's backward result `ds`.
    fn call_sensitivities(
        &mut self,
        g: GraphId,
        bg: GraphId,
        n: NodeId,
        ds: NodeId,
        dynamic: bool,
        sens: &mut HashMap<NodeId, Vec<NodeId>>,
    ) {
        let owned = |m: &Module, x: NodeId| m.node(x).owner == Some(g);
        let span = self.m.node(n).span;
        let ins = self.m.inputs(n).to_vec();
        let nargs = ins.len() as i64 - 1;
        for (i, &x) in ins[1..].iter().enumerate() {
            if owned(self.m, x) {
                let idx = if dynamic { i as i64 - nargs } else { i as i64 };
                let k = self.int(idx);
                let item = self.prim(bg, Prim::TupleGetItem, &[ds, k], span);
                sens.entry(x).or_default().push(item);
            }
        }
        if dynamic && owned(self.m, ins[0]) {
            let k = self.int(nargs);
            let head = self.prim(bg, Prim::GradHead, &[ds, k], span);
            sens.entry(ins[0]).or_default().push(head);
        }
    }

    fn accumulate(
        &mut self,
        bg: GraphId,
        parts: Option<Vec<NodeId>>,
        span: Span,
    ) -> Option<NodeId> {
        let parts = parts?;
        let mut it = parts.into_iter();
        let first = it.next()?;
        Some(it.fold(first, |acc, x| {
            self.prim(bg, Prim::GradAdd, &[acc, x], span)
        }))
    }
}

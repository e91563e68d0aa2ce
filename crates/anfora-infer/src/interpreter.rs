//! The abstract interpreter: evaluates graphs over abstract values, one context per graph
//! instance, until nothing changes.
//!
//! * A context is a graph, the context its free variables are read from (its parent), and the
//!   abstracts of its arguments.
//! * Calls of functions are *polyvariant*: each distinct argument signature gets its own
//!   context (and later its own specialized graph), up to a limit per function.
//! * Join blocks and loop headers are *monovariant*: one context per parent context, whose
//!   arguments are the join of every jump into it — the phis of SSA. Loop headers and recursive
//!   calls also drop constants (broadening), so loops are not unrolled and recursion reaches a
//!   fixpoint in a few rounds.
//! * A closure called through a value (not by name) uses one monovariant context, so the value
//!   can name one specialized graph. A closure whose identity is lost (it flows into `Any`) is
//!   compiled for arbitrary arguments.
//! * A context whose result changes makes its callers dirty, and one whose values change the
//!   contexts that read them (its children, and deeper blocks reading its nodes as free
//!   variables); a worklist re-evaluates them.
//! * A result or argument carried from round to round that holds `Bottom` (a tuple of a
//!   recursive call's result, not returned yet) is stored as `Bottom`, so no stored value grows
//!   without end and the fixpoint is reached on every program (`nesting`).
//!
//! This module holds the contexts and the worklist; `calls` evaluates calls (of primitives,
//! closures and methods, with keyword binding), `diagnostics` reports the shape and join
//! errors that remain once the analysis is done, and `nesting` the recursions whose results
//! would nest without bound (E0305).

mod ancestry;
pub(crate) mod binding;
mod calls;
mod cells;
mod diagnostics;
mod nesting;
mod objects;

pub(crate) use objects::{
    attr_grad_place, attribute_const, chosen_attributes, differentiated_attribute_const,
};

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use anfora_ir::analysis::{Analysis, breadth_first};
use anfora_ir::codes::NO_FIXPOINT;
use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, GraphId, GraphKind, Module, NodeId, NodeKind, Span};
use anfora_ops::abs::from_value;
use anfora_ops::abs::{Abs, CtxId, Func, JoinError};
use nesting::{Dropped, Slot};

/// Most specializations of one function for one parent context.
const MAX_POLY: usize = 8;
/// The longest tuple a `for` loop is unrolled over (see `Interpreter::unrolls`).
const MAX_UNROLL: usize = 64;
/// Largest set of possible functions kept before it becomes `Any`. The backward continuation
/// of a loop header differentiated by `anfora-ad` is one of a set with a member per way into
/// the header (the entry, the end of the body, each `continue`), so this bounds the loops
/// whose gradients keep their types.
const MAX_FUNCS: usize = 8;
/// Bound on re-evaluations (a safety net: the lattice is finite).
const MAX_STEPS: usize = 200_000;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Poly(GraphId, Option<CtxId>, Vec<Abs>),
    Mono(GraphId, Option<CtxId>),
}

pub struct Ctx {
    pub graph: GraphId,
    pub parent: Option<CtxId>,
    pub args: Vec<Abs>,
    pub result: Abs,
    /// The abstract of each parameter and Apply node of the graph in this context.
    pub values: HashMap<NodeId, Abs>,
    /// The contexts each call node called, in node order (so that whatever walks them, the
    /// specializations and their names come out the same every time).
    pub calls: BTreeMap<NodeId, Vec<CtxId>>,
    pub mono: bool,
    evaluated: bool,
    callers: HashSet<CtxId>,
    /// The contexts that read this context's values: its children, and contexts nested deeper
    /// that read its nodes as free variables (re-evaluated when the values change; a child
    /// whose own values stay the same would not pass the change on to them).
    readers: HashSet<CtxId>,
    /// Where each argument of a monovariant context first came from (for join errors).
    arg_sources: Vec<Option<ArgSource>>,
    /// The call that first reached this context: the calling context and call node (for the
    /// chain of calls in error notes).
    origin: Option<(CtxId, NodeId)>,
    /// For join blocks: the latest arguments of each jump into this context (checked against
    /// each other once the analysis is done).
    incoming: Vec<((CtxId, NodeId), Vec<ArgSource>)>,
    /// For each call of several functions in the last evaluation: what each one gave.
    results: HashMap<NodeId, Vec<(Func, Abs)>>,
    /// The E0301 errors of the last evaluation, in node order: the call node, the operation
    /// and the message (reported once the analysis is done, see `Interpreter::report_shape_errors`);
    /// with `true` last, an E0304 (an argument that must be a constant is not).
    shape_errors: Vec<(NodeId, String, String, bool)>,
    /// Other errors of the last evaluation (attributes of objects used as values).
    refusals: Vec<Diagnostic>,
}

/// Where a phi's value came from: the value, the node that computed it and the kind of block
/// that jumped (to name the branch).
#[derive(Clone, Debug)]
struct ArgSource {
    value: Abs,
    span: Span,
    from: GraphKind,
}

/// What the analysis found, owned, so that the specializer can change the module.
pub struct Solved {
    pub ctxs: Vec<CtxData>,
    pub mono: HashMap<(GraphId, Option<CtxId>), CtxId>,
    pub parents: HashMap<GraphId, GraphId>,
    /// The closures whose identity was lost (their monovariant contexts are compiled for
    /// any arguments and called from sites that cannot tell which function they call).
    pub generic: HashSet<(GraphId, Option<CtxId>)>,
}

pub struct CtxData {
    pub graph: GraphId,
    pub parent: Option<CtxId>,
    pub args: Vec<Abs>,
    pub values: HashMap<NodeId, Abs>,
    pub calls: BTreeMap<NodeId, Vec<CtxId>>,
}

impl Solved {
    pub fn ctx(&self, c: CtxId) -> &CtxData {
        &self.ctxs[c.0 as usize]
    }

    /// The context of `h`'s parent graph, among `c` and its enclosing contexts.
    pub fn parent_ctx(&self, c: CtxId, h: GraphId) -> Option<CtxId> {
        let parent = *self.parents.get(&h)?;
        self.enclosing(c, parent)
    }

    /// The context of graph `g` among `c` and its enclosing contexts.
    pub fn enclosing(&self, c: CtxId, g: GraphId) -> Option<CtxId> {
        find_enclosing(c, g, |x| (self.ctx(x).graph, self.ctx(x).parent))
    }

    pub fn mono_of(&self, graph: GraphId, parent: Option<CtxId>) -> Option<CtxId> {
        self.mono.get(&(graph, parent)).copied()
    }
}

pub struct Interpreter<'m> {
    pub module: &'m Module,
    analysis: Analysis,
    pub ctxs: Vec<Ctx>,
    keys: HashMap<Key, CtxId>,
    poly_count: HashMap<(GraphId, Option<CtxId>), usize>,
    /// The contexts being evaluated, and the chains of calls that reached each context.
    ancestry: ancestry::Ancestry,
    dirty: VecDeque<CtxId>,
    dirty_set: HashSet<CtxId>,
    /// Contexts that changed while being evaluated.
    rerun: HashSet<CtxId>,
    /// Closures whose identity was lost: compiled for any arguments.
    generic: HashSet<(GraphId, Option<CtxId>)>,
    /// Closures used as values: they need a monovariant specialization.
    pub value_closures: HashSet<(GraphId, Option<CtxId>)>,
    /// Contexts of an unrolled loop's iterations (its header and, where lambda lifting made
    /// them closed graphs, the blocks each iteration runs).
    unrolled: HashSet<CtxId>,
    pub errors: Vec<Diagnostic>,
    reported: HashSet<(String, u32, u32)>,
    steps: usize,
    /// The slots given values that do not exist yet (see `nesting`).
    dropped: Dropped,
    /// What each cell holds and who reads it (see `cells`).
    cells: HashMap<anfora_ops::abs::CellSite, cells::Cell>,
}

impl<'m> Interpreter<'m> {
    pub fn new(module: &'m Module, analysis: Analysis) -> Interpreter<'m> {
        Interpreter {
            module,
            analysis,
            ctxs: Vec::new(),
            keys: HashMap::new(),
            poly_count: HashMap::new(),
            ancestry: ancestry::Ancestry::default(),
            dirty: VecDeque::new(),
            dirty_set: HashSet::new(),
            rerun: HashSet::new(),
            generic: HashSet::new(),
            value_closures: HashSet::new(),
            unrolled: HashSet::new(),
            errors: Vec::new(),
            reported: HashSet::new(),
            steps: 0,
            dropped: HashMap::new(),
            cells: HashMap::new(),
        }
    }

    /// Analyzes `entry` called with `args`; returns the root context.
    pub fn run(&mut self, entry: GraphId, args: Vec<Abs>) -> CtxId {
        let root = self.context(
            Key::Poly(entry, None, args.clone()),
            entry,
            None,
            args,
            false,
        );
        self.evaluate(root);
        self.drain();
        // Closures used as values but never called with known arguments: the host (or code
        // that lost track of them) may call them with anything.
        loop {
            let pending: Vec<(GraphId, Option<CtxId>)> = self
                .value_closures
                .iter()
                .copied()
                .filter(|&(g, pc)| match self.keys.get(&Key::Mono(g, pc)) {
                    Some(&c) => !self.ctxs[c.0 as usize].evaluated,
                    None => true,
                })
                .collect();
            if pending.is_empty() {
                break;
            }
            for (g, pc) in pending {
                self.generic.insert((g, pc));
                let c = self.any_args_context(g, pc);
                if !self.ctxs[c.0 as usize].evaluated {
                    self.evaluate(c);
                }
            }
            self.drain();
        }
        let out = self.ctxs[root.0 as usize].result.clone();
        self.escape(&out);
        self.drain();
        self.report_unbounded(root);
        self.report_shape_errors(root);
        self.check_joins(root);
        root
    }

    /// The contexts the specialized program keeps: those reached from the root by calls, their
    /// enclosing contexts and the contexts of closures used as values.
    fn live(&self, root: CtxId) -> Vec<CtxId> {
        let values = self
            .value_closures
            .iter()
            .filter_map(|&(g, pc)| self.keys.get(&Key::Mono(g, pc)).copied());
        breadth_first(std::iter::once(root).chain(values), |c| {
            let ctx = self.ctx(c);
            let calls = ctx.calls.values().flatten().copied();
            calls.chain(ctx.parent).collect::<Vec<_>>()
        })
    }

    /// Hands over the results.
    pub fn solved(self) -> Solved {
        let mono = self
            .keys
            .iter()
            .filter_map(|(k, &c)| match k {
                Key::Mono(g, p) => Some(((*g, *p), c)),
                Key::Poly(..) => None,
            })
            .collect();
        let parents = self
            .analysis
            .graphs
            .iter()
            .filter_map(|&g| self.analysis.parent[g].map(|p| (g, p)))
            .collect();
        let ctxs = self
            .ctxs
            .into_iter()
            .map(|c| CtxData {
                graph: c.graph,
                parent: c.parent,
                args: c.args,
                values: c.values,
                calls: c.calls,
            })
            .collect();
        Solved {
            ctxs,
            mono,
            parents,
            generic: self.generic,
        }
    }

    pub fn ctx(&self, c: CtxId) -> &Ctx {
        &self.ctxs[c.0 as usize]
    }

    fn ctx_mut(&mut self, c: CtxId) -> &mut Ctx {
        &mut self.ctxs[c.0 as usize]
    }

    fn context(
        &mut self,
        key: Key,
        graph: GraphId,
        parent: Option<CtxId>,
        args: Vec<Abs>,
        mono: bool,
    ) -> CtxId {
        if let Some(&c) = self.keys.get(&key) {
            return c;
        }
        let id = CtxId(self.ctxs.len() as u32);
        let n = args.len();
        self.ctxs.push(Ctx {
            graph,
            parent,
            args,
            result: Abs::Bottom,
            values: HashMap::new(),
            calls: BTreeMap::new(),
            mono,
            evaluated: false,
            callers: HashSet::new(),
            readers: HashSet::new(),
            arg_sources: vec![None; n],
            origin: None,
            incoming: Vec::new(),
            results: HashMap::new(),
            shape_errors: Vec::new(),
            refusals: Vec::new(),
        });
        self.keys.insert(key, id);
        self.ancestry.created(id, (graph, parent));
        if let Some(p) = parent {
            self.ctx_mut(p).readers.insert(id);
        }
        id
    }

    fn mono_context(&mut self, graph: GraphId, parent: Option<CtxId>) -> CtxId {
        let n = self.module.graph(graph).params.len();
        self.context(
            Key::Mono(graph, parent),
            graph,
            parent,
            vec![Abs::Bottom; n],
            true,
        )
    }

    /// The monovariant context of closure `graph` (in context `parent`) called with anything.
    fn any_args_context(&mut self, graph: GraphId, parent: Option<CtxId>) -> CtxId {
        let n = self.module.graph(graph).params.len();
        let c = self.mono_context(graph, parent);
        self.add_mono_args(c, &vec![Abs::Any; n], None);
        c
    }

    fn mark_dirty(&mut self, c: CtxId) {
        if self.ancestry.is_running(c) {
            // Evaluate again once the evaluation under way finishes.
            self.rerun.insert(c);
        } else if self.ctx(c).evaluated && self.dirty_set.insert(c) {
            self.dirty.push_back(c);
        }
    }

    fn drain(&mut self) {
        while let Some(c) = self.dirty.pop_front() {
            self.dirty_set.remove(&c);
            if self.ancestry.is_running(c) {
                self.rerun.insert(c);
                continue;
            }
            self.steps += 1;
            if self.steps > MAX_STEPS {
                self.report(
                    c,
                    Diagnostic::error(
                        NO_FIXPOINT,
                        "type inference did not converge",
                        self.module.graph(self.ctx(c).graph).span,
                    )
                    .with_hint("this is a bug in anfora; please report the program"),
                );
                self.dirty.clear();
                self.dirty_set.clear();
                return;
            }
            self.evaluate(c);
        }
    }

    /// Records a diagnostic found while evaluating context `c` (once per message and span),
    /// with the chain of Python-level calls that led to `c` as notes, innermost first, as
    /// MindSpore's `analyze_fail.ir` shows them.
    fn report(&mut self, c: CtxId, mut d: Diagnostic) {
        // One error per place: the same operation failing again in another specialization
        // (with other shapes) adds nothing.
        let key = (d.code.to_string(), d.span.start, d.span.end);
        if !self.reported.insert(key) {
            return;
        }
        d.notes.extend(self.call_chain(c));
        self.errors.push(d);
    }

    /// `called from file:line:col in function` for each call of a function (not of a block of
    /// the same function: branches and loops) on the way from the entry to context `c`.
    fn call_chain(&self, c: CtxId) -> Vec<String> {
        let mut notes = Vec::new();
        let mut cur = c;
        // Origins point to contexts created earlier, so this terminates; the bound is a guard.
        for _ in 0..self.ctxs.len() {
            let Some((caller, call)) = self.ctx(cur).origin else {
                break;
            };
            if !self.module.graph(self.ctx(cur).graph).kind.is_block() {
                let function = &self.module.graph(self.ctx(caller).graph).function;
                let span = self.module.node(call).span;
                notes.push(format!(
                    "called from {} in {}",
                    self.module.sources.describe(span),
                    function
                ));
            }
            cur = caller;
        }
        notes
    }

    // ---- evaluation -----------------------------------------------------------------------

    fn evaluate(&mut self, c: CtxId) {
        anfora_ir::deep(|| self.evaluate_inner(c))
    }

    fn evaluate_inner(&mut self, c: CtxId) {
        let g = self.ctx(c).graph;
        let instance = (g, self.ctx(c).parent);
        self.ancestry.enter(c, instance);
        let graph = self.module.graph(g);
        let mut values: HashMap<NodeId, Abs> = HashMap::new();
        for (i, &p) in graph.params.iter().enumerate() {
            values.insert(p, self.ctx(c).args.get(i).cloned().unwrap_or(Abs::Any));
        }
        let old_values = std::mem::replace(&mut self.ctx_mut(c).values, values);
        self.ctx_mut(c).calls.clear();
        self.ctx_mut(c).results.clear();
        self.ctx_mut(c).shape_errors.clear();
        self.ctx_mut(c).refusals.clear();
        for n in self.module.graph_nodes(g) {
            let a = self.eval_apply(c, n);
            self.ctx_mut(c).values.insert(n, a);
        }
        let out = match graph.output {
            Some(o) => {
                let a = self.operand(c, o);
                if !self.module.is_apply(o) {
                    self.note_value_use(c, o);
                }
                a
            }
            None => Abs::Bottom,
        };
        // Unknown callers receive what a generic context returns: its closures escape too.
        if self.generic.contains(&(g, self.ctx(c).parent)) {
            self.escape(&out);
        }
        self.ancestry.leave(c, instance);
        if self.rerun.remove(&c) && self.dirty_set.insert(c) {
            self.dirty.push_back(c);
        }
        let first = !self.ctx(c).evaluated;
        self.ctx_mut(c).evaluated = true;
        let old = self.ctx(c).result.clone();
        let out = self.settle(Slot::Result(c), out, None);
        let new = old.widen_join(&out);
        let new = self.widen(new);
        if new != old || first {
            self.ctx_mut(c).result = new;
            let callers: Vec<CtxId> = self.ctx(c).callers.iter().copied().collect();
            for caller in callers {
                self.mark_dirty(caller);
            }
        }
        if !first && old_values != self.ctx(c).values {
            let readers: Vec<CtxId> = self.ctx(c).readers.iter().copied().collect();
            for reader in readers {
                self.mark_dirty(reader);
            }
        }
    }

    /// Keeps sets of functions small, and the abstract finite.
    fn widen(&mut self, a: Abs) -> Abs {
        match &a {
            Abs::Func(fs) if fs.len() > MAX_FUNCS => {
                self.escape(&a);
                Abs::Any
            }
            _ => a,
        }
    }

    fn join(&mut self, a: &Abs, b: &Abs) -> Result<Abs, JoinError> {
        let r = a.join(b)?;
        Ok(self.after_join(a, b, r))
    }

    /// The functions of `a` and `b` escape when their join `r` forgot them; `r`, kept small.
    fn after_join(&mut self, a: &Abs, b: &Abs, r: Abs) -> Abs {
        if matches!(r, Abs::Any) && (contains_func(a) || contains_func(b)) {
            self.escape(a);
            self.escape(b);
        }
        self.widen(r)
    }

    /// The abstract of node `n` as seen from context `c` (constants, parameters, nodes of `c`'s
    /// graph, or free variables read from an enclosing context).
    fn operand(&mut self, c: CtxId, n: NodeId) -> Abs {
        let node = self.module.node(n);
        match &node.kind {
            NodeKind::Value(k) => self.constant(c, k),
            _ => {
                let owner = node.owner.expect("non-value nodes have owners");
                match self.enclosing(c, owner) {
                    Some(x) => {
                        if x != c {
                            self.ctx_mut(x).readers.insert(c);
                        }
                        self.ctx(x).values.get(&n).cloned().unwrap_or(Abs::Bottom)
                    }
                    None => Abs::Any,
                }
            }
        }
    }

    fn constant(&mut self, c: CtxId, k: &Const) -> Abs {
        match k {
            Const::Graph(h) => Abs::func(Func::Closure {
                graph: *h,
                ctx: self.closure_parent(c, *h),
            }),
            Const::Tuple(items) => Abs::tuple(items.iter().map(|i| self.constant(c, i)).collect()),
            Const::List(items) => Abs::List(items.iter().map(|i| self.constant(c, i)).collect()),
            Const::Tensor(t) => from_value(&anfora_ops::Value::Tensor(t.clone())),
            other => plain_constant(other),
        }
    }

    /// The context of `h`'s parent graph, found among `c` and its enclosing contexts.
    fn closure_parent(&self, c: CtxId, h: GraphId) -> Option<CtxId> {
        let parent = self.analysis.parent.get(h).copied().flatten()?;
        self.enclosing(c, parent)
    }

    /// The context of graph `g` among `c` and its enclosing contexts.
    fn enclosing(&self, c: CtxId, g: GraphId) -> Option<CtxId> {
        find_enclosing(c, g, |x| (self.ctx(x).graph, self.ctx(x).parent))
    }

    /// A graph constant used as a value (not called right away) needs a specialization that
    /// every call through the value can use.
    fn note_value_use(&mut self, c: CtxId, n: NodeId) {
        if let Some(k) = self.module.constant(n) {
            let k = k.clone();
            self.note_const_value_use(c, &k);
        }
    }

    fn note_const_value_use(&mut self, c: CtxId, k: &Const) {
        let mut graphs = Vec::new();
        k.for_each_graph(&mut |h| graphs.push(h));
        for h in graphs {
            let pc = self.closure_parent(c, h);
            self.value_closures.insert((h, pc));
        }
    }

    /// Joins `args` into a monovariant context's arguments; re-evaluates it if they grew. The
    /// phis of join blocks and loop headers must agree on tensors; the arguments of functions
    /// widen to unknown dimensions instead. `from` is the calling context and call node.
    fn add_mono_args(&mut self, t: CtxId, args: &[Abs], from: Option<(CtxId, NodeId)>) {
        let kind = self.module.graph(self.ctx(t).graph).kind;
        let strict = matches!(kind, GraphKind::Join | GraphKind::LoopHeader);
        let mut changed = false;
        for (i, a) in args.iter().enumerate() {
            let a = &self.settle(Slot::Arg(t, i), a.clone(), from);
            let old = self.ctx(t).args.get(i).cloned().unwrap_or(Abs::Bottom);
            let source = from.map(|(c, n)| self.arg_source(c, n, i, a));
            let new = if strict {
                // Sizes may differ: from one loop iteration to the next, and, until the
                // analysis is done, on the paths into a join block (`check_joins`).
                match old.join_sizes(a) {
                    Ok(r) => self.after_join(&old, a, r),
                    Err(_) => {
                        let first = self.ctx(t).arg_sources.get(i).cloned().flatten();
                        if let (Some((c, _)), Some(first), Some(second)) = (from, first, &source) {
                            self.phi_join_error(c, t, i, &first, second);
                        }
                        Abs::Any
                    }
                }
            } else {
                let r = old.widen_join(a);
                if matches!(r, Abs::Any) && (contains_func(&old) || contains_func(a)) {
                    self.escape(&old);
                    self.escape(a);
                }
                self.widen(r)
            };
            if self.ctx(t).arg_sources.get(i).is_some_and(|s| s.is_none())
                && !a.is_bottom()
                && let Some(source) = &source
            {
                self.ctx_mut(t).arg_sources[i] = Some(source.clone());
            }
            if let (Some(edge), Some(source)) = (from, source)
                && kind == GraphKind::Join
            {
                let ctx = self.ctx_mut(t);
                match ctx.incoming.iter_mut().find(|(e, _)| *e == edge) {
                    Some((_, sources)) => {
                        if sources.len() <= i {
                            sources.resize(i + 1, source.clone());
                        }
                        sources[i] = source;
                    }
                    None => ctx.incoming.push((edge, vec![source; i + 1])),
                }
            }
            if new != old {
                if i < self.ctx(t).args.len() {
                    self.ctx_mut(t).args[i] = new;
                }
                changed = true;
            }
        }
        if changed {
            self.mark_dirty(t);
        }
    }

    /// Where argument `i` of call `n` in context `c` comes from: the node computing it (or the
    /// call when it is a constant) and the kind of the calling block.
    fn arg_source(&self, c: CtxId, n: NodeId, i: usize, a: &Abs) -> ArgSource {
        let call = self.module.node(n).span;
        let span = self
            .module
            .inputs(n)
            .get(i + 1)
            .map(|&x| self.module.node(x).span)
            .filter(|s| !s.is_none())
            .unwrap_or(call);
        ArgSource {
            value: a.clone(),
            span,
            from: self.module.graph(self.ctx(c).graph).kind,
        }
    }

    /// The closures in `a` may now be called with anything: compile them generically.
    fn escape(&mut self, a: &Abs) {
        let mut funcs = Vec::new();
        collect_funcs(a, &mut funcs);
        for f in funcs {
            let Func::Closure { graph, ctx } = f else {
                continue;
            };
            if self.generic.insert((graph, ctx)) {
                self.value_closures.insert((graph, ctx));
                self.any_args_context(graph, ctx);
            }
        }
    }
}

/// The context of graph `g` among `c` and its enclosing contexts; `link` gives a context's graph
/// and parent context.
fn find_enclosing(
    c: CtxId,
    g: GraphId,
    link: impl Fn(CtxId) -> (GraphId, Option<CtxId>),
) -> Option<CtxId> {
    let mut cur = Some(c);
    while let Some(x) = cur {
        let (graph, parent) = link(x);
        if graph == g {
            return Some(x);
        }
        cur = parent;
    }
    None
}

/// The abstract of a constant that holds no graph.
fn plain_constant(k: &Const) -> Abs {
    from_value(&anfora_ops::value::from_const(k, &mut |_| {
        anfora_ops::Value::None
    }))
}

fn contains_func(a: &Abs) -> bool {
    let mut v = Vec::new();
    collect_funcs(a, &mut v);
    !v.is_empty()
}

fn contains_any(a: &Abs) -> bool {
    match a {
        Abs::Any => true,
        Abs::Tuple(items) | Abs::List(items) => items.iter().any(contains_any),
        _ => false,
    }
}

fn collect_funcs(a: &Abs, out: &mut Vec<Func>) {
    match a {
        Abs::Func(fs) => {
            for f in fs.iter() {
                if let Func::Partial(inner, args) = f {
                    out.push((**inner).clone());
                    for x in args.iter() {
                        collect_funcs(x, out);
                    }
                }
                out.push(f.clone());
            }
        }
        Abs::Tuple(items) | Abs::List(items) => items.iter().for_each(|x| collect_funcs(x, out)),
        _ => {}
    }
}

/// The closure an abstract stands for, if it is exactly one.
pub fn single_closure(a: &Abs) -> Option<(GraphId, Option<CtxId>)> {
    match a {
        Abs::Func(fs) if fs.len() == 1 => match &fs[0] {
            Func::Closure { graph, ctx } => Some((*graph, *ctx)),
            _ => None,
        },
        _ => None,
    }
}

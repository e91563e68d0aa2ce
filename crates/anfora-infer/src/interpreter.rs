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
//! * A context whose result changes makes its callers dirty; a worklist re-evaluates them.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use anfora_ir::analysis::Analysis;
use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, GraphId, GraphKind, Module, NodeId, NodeKind, Prim, Span};

use anfora_ops::abs::RuleError;
use anfora_ops::abs::from_value;
use anfora_ops::abs::{Abs, CtxId, Func, JoinError};
use anfora_ops::call::{infer_prim, not_constant, op_label, shape_message};
use anfora_ops::python::method_abs;
use anfora_ops::value::Method;

use anfora_ir::codes::{JOIN as JOIN_ERROR, NO_FIXPOINT, NOT_CONSTANT, SHAPE as SHAPE_ERROR};

/// Most specializations of one function for one parent context.
const MAX_POLY: usize = 8;
/// The longest tuple a `for` loop is unrolled over (see `Interpreter::unrolls`).
const MAX_UNROLL: usize = 64;
/// Largest set of possible functions kept before it becomes `Any`.
const MAX_FUNCS: usize = 4;
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
    children: HashSet<CtxId>,
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
        let mut cur = Some(c);
        while let Some(x) = cur {
            if self.ctx(x).graph == g {
                return Some(x);
            }
            cur = self.ctx(x).parent;
        }
        None
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
    in_progress: Vec<CtxId>,
    dirty: VecDeque<CtxId>,
    dirty_set: HashSet<CtxId>,
    /// Contexts that changed while being evaluated.
    rerun: HashSet<CtxId>,
    /// Closures whose identity was lost: compiled for any arguments.
    generic: HashSet<(GraphId, Option<CtxId>)>,
    /// Closures used as values: they need a monovariant specialization.
    pub value_closures: HashSet<(GraphId, Option<CtxId>)>,
    pub errors: Vec<Diagnostic>,
    reported: HashSet<(String, u32, u32)>,
    steps: usize,
}

impl<'m> Interpreter<'m> {
    pub fn new(module: &'m Module, analysis: Analysis) -> Interpreter<'m> {
        Interpreter {
            module,
            analysis,
            ctxs: Vec::new(),
            keys: HashMap::new(),
            poly_count: HashMap::new(),
            in_progress: Vec::new(),
            dirty: VecDeque::new(),
            dirty_set: HashSet::new(),
            rerun: HashSet::new(),
            generic: HashSet::new(),
            value_closures: HashSet::new(),
            errors: Vec::new(),
            reported: HashSet::new(),
            steps: 0,
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
                let n = self.module.graph(g).params.len();
                let c = self.mono_context(g, pc);
                self.add_mono_args(c, &vec![Abs::Any; n], None);
                if !self.ctxs[c.0 as usize].evaluated {
                    self.evaluate(c);
                }
            }
            self.drain();
        }
        let out = self.ctxs[root.0 as usize].result.clone();
        self.escape(&out);
        self.drain();
        self.report_shape_errors(root);
        self.check_joins(root);
        root
    }

    /// E0301 for the operations that fail on their final arguments. While the analysis runs,
    /// the value a loop or a recursion carries is first only what its exit path gives (the
    /// recursive call's result is still `Bottom`): a tuple grown in a loop is `()` in the
    /// first round and of unknown length later. An error found in an earlier round may not
    /// exist in the program, so each context keeps the errors of its latest evaluation only,
    /// and those of the contexts the program keeps are reported here.
    fn report_shape_errors(&mut self, root: CtxId) {
        for c in self.live(root) {
            for (n, operation, msg, constant) in self.ctx(c).shape_errors.clone() {
                let span = self.module.node(n).span;
                let message = shape_message(&operation, &msg);
                let d = if constant {
                    Diagnostic::error(NOT_CONSTANT, message, span)
                        .with_label("not known at compile time")
                        .with_hint(
                            "write the value as a literal (or a module-level constant) at the \
                             call, or pass it as an argument that is a compile-time constant; a \
                             value chosen at run time (by a branch on a tensor, or as the \
                             variable of a loop over several strings) is not",
                        )
                } else {
                    Diagnostic::error(SHAPE_ERROR, message, span)
                        .with_label("here")
                        .with_hint(
                            "tensor shapes and dtypes are checked when compiling, before the \
                             program runs",
                        )
                };
                self.report(c, d);
            }
        }
    }

    /// The contexts the specialized program keeps: those reached from the root by calls, their
    /// enclosing contexts and the contexts of closures used as values.
    fn live(&self, root: CtxId) -> Vec<CtxId> {
        let mut seen = HashSet::new();
        let mut order = Vec::new();
        let mut queue = VecDeque::from([root]);
        for &(g, pc) in &self.value_closures {
            if let Some(&c) = self.keys.get(&Key::Mono(g, pc)) {
                queue.push_back(c);
            }
        }
        while let Some(c) = queue.pop_front() {
            if !seen.insert(c) {
                continue;
            }
            order.push(c);
            let ctx = self.ctx(c);
            for targets in ctx.calls.values() {
                queue.extend(targets.iter().copied());
            }
            queue.extend(ctx.parent);
        }
        order
    }

    /// E0302 for the joins whose sizes disagree once the analysis is done. While it runs, a
    /// value may have a size in one round and an unknown size in the next (a loop or a
    /// recursion that changes it); only the final values tell whether two paths really give
    /// tensors of different shapes. (Different dtypes or ranks are reported at once: they do
    /// not change from round to round.)
    fn check_joins(&mut self, root: CtxId) {
        let live = self.live(root);
        let is_live: HashSet<CtxId> = live.iter().copied().collect();
        for &c in &live {
            // The functions a call may call.
            let mut calls: Vec<(NodeId, Vec<(Func, Abs)>)> = self
                .ctx(c)
                .results
                .iter()
                .map(|(n, r)| (*n, r.clone()))
                .collect();
            calls.sort_by_key(|(n, _)| *n);
            for (n, results) in calls {
                if let Some((i, j)) = first_conflict(results.iter().map(|(_, a)| a)) {
                    let (a, b) = (&results[i], &results[j]);
                    self.results_join_error(c, n, (&a.0, &a.1), (&b.0, &b.1));
                }
            }
            // The jumps into a join block.
            if self.module.graph(self.ctx(c).graph).kind != GraphKind::Join {
                continue;
            }
            let edges: Vec<((CtxId, NodeId), Vec<ArgSource>)> = self
                .ctx(c)
                .incoming
                .iter()
                .filter(|((from, n), _)| {
                    is_live.contains(from)
                        && self
                            .ctx(*from)
                            .calls
                            .get(n)
                            .is_some_and(|ts| ts.contains(&c))
                })
                .cloned()
                .collect();
            let n_params = self.module.graph(self.ctx(c).graph).params.len();
            for i in 0..n_params {
                let values = edges.iter().map(|(_, sources)| &sources[i].value);
                if let Some((a, b)) = first_conflict(values) {
                    let from = edges[b].0.0;
                    let (first, second) = (edges[a].1[i].clone(), edges[b].1[i].clone());
                    self.phi_join_error(from, c, i, &first, &second);
                }
            }
        }
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
            children: HashSet::new(),
            arg_sources: vec![None; n],
            origin: None,
            incoming: Vec::new(),
            results: HashMap::new(),
            shape_errors: Vec::new(),
        });
        self.keys.insert(key, id);
        if let Some(p) = parent {
            self.ctx_mut(p).children.insert(id);
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

    fn mark_dirty(&mut self, c: CtxId) {
        if self.in_progress.contains(&c) {
            // Evaluate again once the evaluation under way finishes.
            self.rerun.insert(c);
        } else if self.ctx(c).evaluated && self.dirty_set.insert(c) {
            self.dirty.push_back(c);
        }
    }

    fn drain(&mut self) {
        while let Some(c) = self.dirty.pop_front() {
            self.dirty_set.remove(&c);
            if self.in_progress.contains(&c) {
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
        self.in_progress.push(c);
        let g = self.ctx(c).graph;
        let graph = self.module.graph(g);
        let mut values: HashMap<NodeId, Abs> = HashMap::new();
        for (i, &p) in graph.params.iter().enumerate() {
            values.insert(p, self.ctx(c).args.get(i).cloned().unwrap_or(Abs::Any));
        }
        let old_values = std::mem::replace(&mut self.ctx_mut(c).values, values);
        self.ctx_mut(c).calls.clear();
        self.ctx_mut(c).results.clear();
        self.ctx_mut(c).shape_errors.clear();
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
        self.in_progress.pop();
        if self.rerun.remove(&c) && self.dirty_set.insert(c) {
            self.dirty.push_back(c);
        }
        let first = !self.ctx(c).evaluated;
        self.ctx_mut(c).evaluated = true;
        let old = self.ctx(c).result.clone();
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
            let children: Vec<CtxId> = self.ctx(c).children.iter().copied().collect();
            for child in children {
                self.mark_dirty(child);
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
                let mut cur = Some(c);
                while let Some(x) = cur {
                    if self.ctx(x).graph == owner {
                        return self.ctx(x).values.get(&n).cloned().unwrap_or(Abs::Bottom);
                    }
                    cur = self.ctx(x).parent;
                }
                Abs::Any
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
            other => {
                let v = anfora_ops::value::from_const(other, &mut |_| anfora_ops::Value::None);
                from_value(&v)
            }
        }
    }

    /// The context of `h`'s parent graph, found among `c` and its enclosing contexts.
    fn closure_parent(&self, c: CtxId, h: GraphId) -> Option<CtxId> {
        let parent = self.analysis.parent.get(h).copied().flatten()?;
        let mut cur = Some(c);
        while let Some(x) = cur {
            if self.ctx(x).graph == parent {
                return Some(x);
            }
            cur = self.ctx(x).parent;
        }
        None
    }

    /// A graph constant used as a value (not called right away) needs a specialization that
    /// every call through the value can use.
    fn note_value_use(&mut self, c: CtxId, n: NodeId) {
        if let Some(k) = self.module.constant(n) {
            let mut graphs = Vec::new();
            k.for_each_graph(&mut |h| graphs.push(h));
            for h in graphs {
                let pc = self.closure_parent(c, h);
                self.value_closures.insert((h, pc));
            }
        }
    }

    fn eval_apply(&mut self, c: CtxId, n: NodeId) -> Abs {
        let inputs = self.module.inputs(n).to_vec();
        let callee = self.operand(c, inputs[0]);
        let is_switch = self.module.callee_prim(n) == Some(Prim::Switch);
        let mut args = Vec::with_capacity(inputs.len() - 1);
        for &i in &inputs[1..] {
            if !is_switch && !self.module.is_apply(i) && !self.module.is_param(i) {
                self.note_value_use(c, i);
            }
            args.push(self.operand(c, i));
        }
        let direct = self.module.constant(inputs[0]).is_some();
        self.call(c, n, &callee, args, direct)
    }

    fn call(&mut self, c: CtxId, n: NodeId, callee: &Abs, args: Vec<Abs>, direct: bool) -> Abs {
        match callee {
            Abs::Bottom => Abs::Bottom,
            Abs::Func(fs) => {
                let fs = fs.clone();
                let mut result = Abs::Bottom;
                for f in fs.iter() {
                    let r = self.call_func(c, n, f, args.clone(), direct);
                    result = self.join_result(c, n, &result, f, r);
                }
                result
            }
            Abs::Any => {
                for a in &args {
                    self.escape(a);
                }
                Abs::Any
            }
            // Calling something that is not a function: TypeError at run time.
            _ => Abs::Bottom,
        }
    }

    /// Joins what function `f` gave at call `n` into what the functions before it gave, and
    /// records it for [`Interpreter::check_joins`]. Tensors whose sizes disagree join to unknown
    /// sizes until then; other disagreements are errors now.
    fn join_result(&mut self, c: CtxId, n: NodeId, acc: &Abs, f: &Func, r: Abs) -> Abs {
        if !r.is_bottom() {
            self.ctx_mut(c)
                .results
                .entry(n)
                .or_default()
                .push((f.clone(), r.clone()));
        }
        match acc.join_sizes(&r) {
            Ok(joined) => self.after_join(acc, &r, joined),
            Err(_) => {
                let seen = self.ctx(c).results.get(&n).cloned().unwrap_or_default();
                let first = seen
                    .iter()
                    .find(|(_, a)| a.join_sizes(&r).is_err())
                    .cloned()
                    .unwrap_or((f.clone(), acc.clone()));
                self.results_join_error(c, n, (&first.0, &first.1), (f, &r));
                Abs::Any
            }
        }
    }

    /// Calls `f`. `direct` calls name their callee in the program (the frontend bound their
    /// arguments to its signature); other calls go through values and are bound here, as the
    /// VM binds them at run time.
    fn call_func(&mut self, c: CtxId, n: NodeId, f: &Func, args: Vec<Abs>, direct: bool) -> Abs {
        match f {
            Func::Prim(Prim::CallKw) => self.call_kw(c, n, args),
            Func::Prim(p) => {
                if direct {
                    return self.call_prim(c, n, *p, args);
                }
                match bind_positional(p.signature(), args, &mut |k| self.constant(c, k)) {
                    Some(bound) => self.call_prim(c, n, *p, bound),
                    // TypeError at run time.
                    None => Abs::Bottom,
                }
            }
            Func::Closure { graph, ctx } => self.call_closure(c, n, *graph, *ctx, args, direct),
            Func::Partial(inner, bound) => {
                let mut all = bound.to_vec();
                all.extend(args);
                self.call_func(c, n, inner, all, false)
            }
            Func::Method(m, t) => match method_abs(*m, t, &args) {
                Ok(r) => r,
                Err(RuleError(msg)) => self.shape_error(c, n, m.name(), &msg),
            },
        }
    }

    /// Calls primitive `p` with arguments bound to its signature.
    fn call_prim(&mut self, c: CtxId, n: NodeId, p: Prim, args: Vec<Abs>) -> Abs {
        if let Some(msg) = not_constant(p, &args) {
            let operation = op_label(p);
            self.ctx_mut(c).shape_errors.push((n, operation, msg, true));
            return Abs::Bottom;
        }
        let r = if p == Prim::Switch {
            self.switch(&args)
        } else {
            match infer_prim(p, &args) {
                Ok(r) => r,
                Err(RuleError(msg)) => self.shape_error(c, n, &op_label(p), &msg),
            }
        };
        if p.def().attrs.passes_values && contains_any(&r) {
            for a in &args {
                self.escape(a);
            }
        }
        r
    }

    /// E0301 at call node `n`: `operation: message`, if the operation still fails once the
    /// analysis is done. The failing operation gives no value (`Bottom`, as an operation that
    /// always raises): an unknown value (`Any`) would flow on into the loop or recursion that
    /// led here and could make the operation's own arguments unknown in the next round, hiding
    /// the error.
    fn shape_error(&mut self, c: CtxId, n: NodeId, operation: &str, msg: &str) -> Abs {
        self.ctx_mut(c)
            .shape_errors
            .push((n, operation.to_string(), msg.to_string(), false));
        Abs::Bottom
    }

    fn switch(&mut self, args: &[Abs]) -> Abs {
        match args[0].as_bool() {
            Some(true) => args[1].clone(),
            Some(false) => args[2].clone(),
            None => match self.join(&args[1], &args[2]) {
                Ok(r) => r,
                Err(_) => Abs::Any,
            },
        }
    }

    /// `CallKw(f, names, args...)` with a known callee: bind keywords, then call.
    fn call_kw(&mut self, c: CtxId, n: NodeId, args: Vec<Abs>) -> Abs {
        let Some(Abs::Tuple(names)) = args.get(1).cloned() else {
            return Abs::Any;
        };
        let names: Vec<String> = names
            .iter()
            .map(|a| match a {
                Abs::Str(Some(s)) => s.to_string(),
                _ => String::new(),
            })
            .collect();
        let split = args.len() - names.len();
        let positional = args[2..split].to_vec();
        let kw = args[split..].to_vec();
        let callee = args[0].clone();
        let Abs::Func(fs) = &callee else {
            for a in &args {
                self.escape(a);
            }
            return Abs::Any;
        };
        let mut result = Abs::Bottom;
        for f in fs.iter() {
            let sig = match f {
                Func::Prim(p) => Some(p.signature().clone()),
                Func::Closure { graph, .. } => self.module.graph(*graph).signature.clone(),
                _ => None,
            };
            let r = match sig {
                Some(sig) => {
                    let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
                    match sig.bind(positional.len(), &refs) {
                        Ok(sources) => {
                            let bound = sources
                                .into_iter()
                                .map(|s| match s {
                                    anfora_ir::ArgSource::Positional(i) => positional[i].clone(),
                                    anfora_ir::ArgSource::Keyword(j) => kw[j].clone(),
                                    anfora_ir::ArgSource::Default(k) => self.constant(c, &k),
                                })
                                .collect();
                            match f {
                                Func::Prim(p) => self.call_prim(c, n, *p, bound),
                                _ => self.call_func(c, n, f, bound, false),
                            }
                        }
                        // TypeError at run time.
                        Err(_) => Abs::Bottom,
                    }
                }
                None => {
                    // Tensor methods take keywords too.
                    if let Func::Method(m, t) = f {
                        match bind_method(*m, &positional, &names, &kw) {
                            Some(bound) => match method_abs(*m, t, &bound) {
                                Ok(r) => r,
                                Err(RuleError(msg)) => self.shape_error(c, n, m.name(), &msg),
                            },
                            // TypeError at run time.
                            None => Abs::Bottom,
                        }
                    } else {
                        Abs::Any
                    }
                }
            };
            result = self.join_result(c, n, &result, f, r);
        }
        result
    }

    fn call_closure(
        &mut self,
        c: CtxId,
        n: NodeId,
        h: GraphId,
        pc: Option<CtxId>,
        args: Vec<Abs>,
        direct: bool,
    ) -> Abs {
        let graph = self.module.graph(h);
        // Calls through values are bound at run time: fill defaults here.
        let args = if args.len() != graph.params.len() {
            match graph.signature.clone() {
                Some(sig) if !direct => {
                    match bind_positional(&sig, args, &mut |k| self.constant(c, k)) {
                        Some(bound) => bound,
                        None => return Abs::Bottom,
                    }
                }
                _ => return Abs::Bottom,
            }
        } else {
            args
        };
        let graph = self.module.graph(h);
        let kind = graph.kind;
        let unroll = self.unrolls(c, h, pc);
        let recursive = !unroll && self.is_recursive_call(c, h, pc);
        // A recursive call whose broadened arguments are those of an existing specialization
        // (the entry called with values known only at run time) calls it: one specialization.
        let existing = if recursive && !self.generic.contains(&(h, pc)) {
            let broadened: Vec<Abs> = args.iter().map(Abs::broaden).collect();
            self.keys.get(&Key::Poly(h, pc, broadened)).copied()
        } else {
            None
        };
        // A signature specialized before keeps its specialization when the caller is
        // re-evaluated after the limit was reached.
        let known = || self.keys.contains_key(&Key::Poly(h, pc, args.clone()));
        let mono = (matches!(kind, GraphKind::Join | GraphKind::LoopHeader) && !unroll)
            || !direct
            || recursive
            || self.generic.contains(&(h, pc))
            || (!unroll
                && self.poly_count.get(&(h, pc)).copied().unwrap_or(0) >= MAX_POLY
                && !known());
        let target = if let Some(x) = existing {
            x
        } else if mono {
            let t = self.mono_context(h, pc);
            let broaden = kind == GraphKind::LoopHeader || recursive || kind == GraphKind::Function;
            let args: Vec<Abs> = if self.generic.contains(&(h, pc)) {
                vec![Abs::Any; args.len()]
            } else if broaden {
                args.iter().map(Abs::broaden).collect()
            } else {
                args
            };
            self.add_mono_args(t, &args, Some((c, n)));
            t
        } else {
            let key = Key::Poly(h, pc, args.clone());
            if !self.keys.contains_key(&key) {
                *self.poly_count.entry((h, pc)).or_insert(0) += 1;
            }
            self.context(key, h, pc, args, false)
        };
        self.ctx_mut(c).calls.entry(n).or_default().push(target);
        self.ctx_mut(target).callers.insert(c);
        // The first call reaching a context created after the caller is where it comes from
        // (origins point to older contexts, so their chains end).
        if self.ctx(target).origin.is_none() && target > c {
            self.ctx_mut(target).origin = Some((c, n));
        }
        if !self.ctx(target).evaluated && !self.in_progress.contains(&target) {
            self.evaluate(target);
        }
        self.ctx(target).result.clone()
    }

    /// Whether a call of loop header `h` is specialized per iteration (unrolled): the loop
    /// walks short tuples (or lists) whose items differ in type, such as a network's
    /// Parameters, layers or gradients. A loop would join those types into unknowns; each
    /// iteration sees its own items instead. The trip count is the tuple's length, known here.
    fn unrolls(&mut self, c: CtxId, h: GraphId, pc: Option<CtxId>) -> bool {
        if self.module.graph(h).iterates.is_empty()
            || self.poly_count.get(&(h, pc)).copied().unwrap_or(0) >= MAX_UNROLL
        {
            return false;
        }
        let seqs = self.module.graph(h).iterates.clone();
        let from = pc.unwrap_or(c);
        seqs.iter().any(|&s| match self.operand(from, s) {
            Abs::Tuple(items) | Abs::List(items) if items.len() <= MAX_UNROLL => {
                let first = items.first().map(Abs::broaden);
                items.iter().any(|x| Some(x.broaden()) != first)
            }
            _ => false,
        })
    }

    /// Whether calling graph `h` (with parent context `pc`) from context `c` is a recursive
    /// call: an instance of `h` is being evaluated, or is among the calls that led to `c`. (The
    /// chain of first calls does not depend on the order contexts are evaluated in, so a
    /// context re-evaluated on its own still sees its recursive calls as recursive.)
    fn is_recursive_call(&self, c: CtxId, h: GraphId, pc: Option<CtxId>) -> bool {
        let is_h = |x: CtxId| self.ctx(x).graph == h && self.ctx(x).parent == pc;
        if self.in_progress.iter().any(|&x| is_h(x)) {
            return true;
        }
        let mut cur = Some(c);
        while let Some(x) = cur {
            if is_h(x) {
                return true;
            }
            cur = self.ctx(x).origin.map(|(caller, _)| caller);
        }
        false
    }

    /// Joins `args` into a monovariant context's arguments; re-evaluates it if they grew. The
    /// phis of join blocks and loop headers must agree on tensors; the arguments of functions
    /// widen to unknown dimensions instead. `from` is the calling context and call node.
    fn add_mono_args(&mut self, t: CtxId, args: &[Abs], from: Option<(CtxId, NodeId)>) {
        let kind = self.module.graph(self.ctx(t).graph).kind;
        let strict = matches!(kind, GraphKind::Join | GraphKind::LoopHeader);
        let mut changed = false;
        for (i, a) in args.iter().enumerate() {
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

    /// E0302 for the phi of a join block or loop header: parameter `i` of context `t` gets
    /// `second` (from a jump in context `c`) where it already had a tensor it cannot join.
    fn phi_join_error(
        &mut self,
        c: CtxId,
        t: CtxId,
        i: usize,
        first: &ArgSource,
        second: &ArgSource,
    ) {
        let g = self.ctx(t).graph;
        let graph = self.module.graph(g);
        let var = graph
            .params
            .get(i)
            .and_then(|&p| self.module.node(p).name.clone())
            .map(|n| n.trim_start_matches('ф').to_string())
            .unwrap_or_default();
        let var = if var.starts_with('.') || var.is_empty() {
            "the value".to_string()
        } else {
            format!("'{var}'")
        };
        let (a, b) = (first.value.broaden(), second.value.broaden());
        let what = difference(&a, &b);
        let (message, hint) = if graph.kind == GraphKind::LoopHeader {
            (
                format!("{var} changes from {a} to {b} between loop iterations ({what} differ)"),
                "a tensor carried through a loop must keep its dtype and rank (its sizes may change)",
            )
        } else {
            (
                format!(
                    "{var} is {a} {} and {b} {} ({what} differ)",
                    path_name(first.from, true),
                    path_name(second.from, false)
                ),
                "the branches of an `if` must give tensors of the same dtype and shape",
            )
        };
        let span = graph.span;
        let d = Diagnostic::error(JOIN_ERROR, message, span)
            .with_label(if graph.kind == GraphKind::LoopHeader {
                "in this loop"
            } else {
                "where the paths join"
            })
            .with_hint(hint)
            .with_related(first.span, format!("{a} here"))
            .with_related(second.span, format!("{b} here"));
        self.report(c, d);
    }

    /// E0302 for the results of the functions a call may call (the branches of an `if` that
    /// both return, or a function value that is one of several functions).
    fn results_join_error(
        &mut self,
        c: CtxId,
        n: NodeId,
        first: (&Func, &Abs),
        second: (&Func, &Abs),
    ) {
        let (a, b) = (first.1.broaden(), second.1.broaden());
        let what = difference(&a, &b);
        let kind = |f: &Func| match f {
            Func::Closure { graph, .. } => Some(self.module.graph(*graph).kind),
            _ => None,
        };
        let out_span = |f: &Func| match f {
            Func::Closure { graph, .. } => {
                let g = self.module.graph(*graph);
                g.output
                    .map(|o| self.module.node(o).span)
                    .filter(|s| !s.is_none())
                    .unwrap_or(g.span)
            }
            _ => Span::NONE,
        };
        let name = |f: &Func| match f {
            Func::Closure { graph, .. } => format!("'{}'", self.module.graph(*graph).function),
            Func::Prim(p) => format!("'{}'", p.python_name()),
            Func::Partial(..) => "a partial application".to_string(),
            Func::Method(m, _) => format!("'Tensor.{}'", m.name()),
        };
        let (k1, k2) = (kind(first.0), kind(second.0));
        let branches = matches!(
            (k1, k2),
            (Some(GraphKind::TrueBranch), Some(GraphKind::FalseBranch))
                | (Some(GraphKind::FalseBranch), Some(GraphKind::TrueBranch))
        );
        let (message, label, hint) = if branches {
            (
                format!(
                    "the branches of this `if` give tensors of different {what}: {a} {} and {b} {}",
                    path_name(k1.unwrap_or(GraphKind::Join), true),
                    path_name(k2.unwrap_or(GraphKind::Join), false)
                ),
                "the branches join here",
                "the branches of an `if` must give tensors of the same dtype and shape",
            )
        } else if k1.is_some_and(GraphKind::is_block) && k2.is_some_and(GraphKind::is_block) {
            (
                format!("the paths that join here give tensors of different {what}: {a} and {b}"),
                "the paths join here",
                "every path must give tensors of the same dtype and shape",
            )
        } else {
            (
                format!(
                    "the functions called here give tensors of different {what}: {a} from {} and {b} from {}",
                    name(first.0),
                    name(second.0)
                ),
                "one of several functions",
                "the functions one call may call must return tensors of the same dtype and shape",
            )
        };
        let mut d = Diagnostic::error(JOIN_ERROR, message, self.module.node(n).span)
            .with_label(label)
            .with_hint(hint);
        for (f, v) in [(first.0, &a), (second.0, &b)] {
            let s = out_span(f);
            if !s.is_none() {
                d = d.with_related(s, format!("{v} here"));
            }
        }
        self.report(c, d);
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
                let n = self.module.graph(graph).params.len();
                let t = self.mono_context(graph, ctx);
                self.add_mono_args(t, &vec![Abs::Any; n], None);
            }
        }
    }
}

/// The first two of `values` (by position) that do not join.
fn first_conflict<'a>(values: impl Iterator<Item = &'a Abs>) -> Option<(usize, usize)> {
    let values: Vec<&Abs> = values.collect();
    for j in 1..values.len() {
        for i in 0..j {
            if values[i].join(values[j]).is_err() {
                return Some((i, j));
            }
        }
    }
    None
}

/// How a path into a join is named in messages, from the kind of block that jumps.
fn path_name(kind: GraphKind, first: bool) -> &'static str {
    match kind {
        GraphKind::TrueBranch => "in the true branch",
        GraphKind::FalseBranch => "in the false branch",
        _ if first => "on one path",
        _ => "on another",
    }
}

/// What two abstracts that do not join disagree on: `dtypes`, `shapes` or both (of the first
/// pair of tensors that disagree).
fn difference(a: &Abs, b: &Abs) -> &'static str {
    fn find(a: &Abs, b: &Abs) -> Option<&'static str> {
        match (a, b) {
            (Abs::Tensor(x), Abs::Tensor(y)) => {
                let dtypes = x.dtype != y.dtype;
                let ranks = x.shape.len() != y.shape.len();
                let shapes = x.shape != y.shape;
                match (dtypes, ranks, shapes) {
                    (true, true, _) => Some("dtypes and ranks"),
                    (true, false, true) => Some("dtypes and shapes"),
                    (true, false, false) => Some("dtypes"),
                    (false, true, _) => Some("ranks"),
                    (false, false, true) => Some("shapes"),
                    (false, false, false) => None,
                }
            }
            (Abs::Tuple(xs), Abs::Tuple(ys)) | (Abs::List(xs), Abs::List(ys))
                if xs.len() == ys.len() =>
            {
                xs.iter().zip(ys.iter()).find_map(|(x, y)| find(x, y))
            }
            _ => None,
        }
    }
    find(a, b).unwrap_or("dtypes or shapes")
}

/// Binds the positional arguments of a call through a value to `sig` (defaults filled in);
/// `None` when Python would raise TypeError.
fn bind_positional(
    sig: &anfora_ir::Signature,
    args: Vec<Abs>,
    constant: &mut dyn FnMut(&Const) -> Abs,
) -> Option<Vec<Abs>> {
    let sources = sig.bind(args.len(), &[]).ok()?;
    Some(
        sources
            .into_iter()
            .map(|s| match s {
                anfora_ir::ArgSource::Positional(i) => args[i].clone(),
                anfora_ir::ArgSource::Default(k) => constant(&k),
                anfora_ir::ArgSource::Keyword(_) => Abs::Any,
            })
            .collect(),
    )
}

/// Binds the arguments of a tensor method called with keywords as the VM does (`None` when
/// Python would raise TypeError). The result holds the arguments after the tensor.
fn bind_method(m: Method, positional: &[Abs], names: &[String], kw: &[Abs]) -> Option<Vec<Abs>> {
    let reduction = match m {
        Method::Sum => Prim::ReduceSum,
        Method::Mean => Prim::ReduceMean,
        Method::Max => Prim::ReduceMax,
        Method::Min => Prim::ReduceMin,
        Method::Prod => Prim::ReduceProd,
        Method::Astype => {
            return match (positional, names) {
                ([d], []) => Some(vec![d.clone()]),
                ([], [k]) if k == "dtype" => Some(vec![kw[0].clone()]),
                _ => None,
            };
        }
        Method::Reshape | Method::Transpose | Method::Permute | Method::Item => {
            return names.is_empty().then(|| positional.to_vec());
        }
    };
    let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    // The tensor is the first parameter of the reduction.
    let sources = reduction
        .signature()
        .bind(positional.len() + 1, &refs)
        .ok()?;
    let mut bound: Vec<Abs> = sources
        .into_iter()
        .map(|s| match s {
            anfora_ir::ArgSource::Positional(0) => Abs::None,
            anfora_ir::ArgSource::Positional(i) => positional[i - 1].clone(),
            anfora_ir::ArgSource::Keyword(j) => kw[j].clone(),
            anfora_ir::ArgSource::Default(k) => {
                from_value(&anfora_ops::value::from_const(&k, &mut |_| {
                    anfora_ops::Value::None
                }))
            }
        })
        .collect();
    bound.remove(0);
    Some(bound)
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

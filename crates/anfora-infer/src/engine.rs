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

use std::collections::{HashMap, HashSet, VecDeque};

use anfora_ir::analysis::Analysis;
use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, GraphId, GraphKind, Module, NodeId, NodeKind, Prim, Span};

use crate::abs::{Abs, CtxId, Func, JoinError};
use crate::rules::{self, RuleError};

/// Error code of a tensor operation whose shapes or dtypes do not fit.
pub const SHAPE_ERROR: &str = "E0301";
/// Error code of paths (branches, loop iterations) giving tensors of different shapes.
pub const JOIN_ERROR: &str = "E0302";
/// Error code of an analysis that did not converge.
pub const NO_FIXPOINT: &str = "E0303";

/// Most specializations of one function for one parent context.
const MAX_POLY: usize = 8;
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
    /// The contexts each call node called.
    pub calls: HashMap<NodeId, Vec<CtxId>>,
    pub mono: bool,
    evaluated: bool,
    callers: HashSet<CtxId>,
    children: HashSet<CtxId>,
    /// Where each argument of a monovariant context first came from (for join errors).
    arg_sources: Vec<Option<(Abs, Span)>>,
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
    pub calls: HashMap<NodeId, Vec<CtxId>>,
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

pub struct Engine<'m> {
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
    /// Call nodes being evaluated, outermost first (for error notes).
    stack: Vec<(CtxId, NodeId)>,
    pub errors: Vec<Diagnostic>,
    reported: HashSet<(String, u32, u32)>,
    steps: usize,
}

impl<'m> Engine<'m> {
    pub fn new(module: &'m Module, analysis: Analysis) -> Engine<'m> {
        Engine {
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
            stack: Vec::new(),
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
                self.add_mono_args(c, &vec![Abs::Any; n], Span::NONE);
                if !self.ctxs[c.0 as usize].evaluated {
                    self.evaluate(c);
                }
            }
            self.drain();
        }
        let out = self.ctxs[root.0 as usize].result.clone();
        self.escape(&out);
        self.drain();
        root
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
            calls: HashMap::new(),
            mono,
            evaluated: false,
            callers: HashSet::new(),
            children: HashSet::new(),
            arg_sources: vec![None; n],
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

    fn report(&mut self, mut d: Diagnostic) {
        let key = (d.message.clone(), d.span.start, d.span.end);
        if !self.reported.insert(key) {
            return;
        }
        for &(c, call) in self.stack.iter().rev() {
            let function = &self.module.graph(self.ctx(c).graph).function;
            let span = self.module.node(call).span;
            d.notes.push(format!(
                "called from {} in {}",
                self.module.sources.describe(span),
                function
            ));
        }
        self.errors.push(d);
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
        if matches!(r, Abs::Any) && (contains_func(a) || contains_func(b)) {
            self.escape(a);
            self.escape(b);
        }
        Ok(self.widen(r))
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
            Const::Tensor(t) => rules::from_value(&anfora_vm::Value::Tensor(t.clone())),
            other => {
                let v = anfora_vm::value::from_const(other, &mut |_| anfora_vm::Value::None);
                rules::from_value(&v)
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
                    result = match self.join(&result, &r) {
                        Ok(r) => r,
                        Err(e) => {
                            self.join_error(c, e, "gives");
                            Abs::Any
                        }
                    };
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

    fn call_func(&mut self, c: CtxId, n: NodeId, f: &Func, args: Vec<Abs>, direct: bool) -> Abs {
        match f {
            Func::Prim(Prim::CallKw) => self.call_kw(c, n, args),
            Func::Prim(p) => {
                let r = if *p == Prim::Switch {
                    self.switch(&args)
                } else {
                    match rules::infer_prim(*p, &args) {
                        Ok(r) => r,
                        Err(RuleError(msg)) => {
                            let span = self.module.node(n).span;
                            self.report(
                                Diagnostic::error(SHAPE_ERROR, format!("{}: {msg}", p.python_name()), span)
                                    .with_label("here")
                                    .with_hint("tensor shapes and dtypes are checked when compiling, before the program runs"),
                            );
                            Abs::Any
                        }
                    }
                };
                if passes_values(*p) && contains_any(&r) {
                    for a in &args {
                        self.escape(a);
                    }
                }
                r
            }
            Func::Closure { graph, ctx } => self.call_closure(c, n, *graph, *ctx, args, direct),
            Func::Partial(inner, bound) => {
                let mut all = bound.to_vec();
                all.extend(args);
                self.call_func(c, n, inner, all, false)
            }
            Func::Method(m, t) => match rules::method(*m, t, &args) {
                Ok(r) => r,
                Err(RuleError(msg)) => {
                    let span = self.module.node(n).span;
                    self.report(
                        Diagnostic::error(SHAPE_ERROR, format!("Tensor.{}: {msg}", m.name()), span)
                            .with_label("here")
                            .with_hint("tensor shapes and dtypes are checked when compiling, before the program runs"),
                    );
                    Abs::Any
                }
            },
        }
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
                            self.call_func(c, n, f, bound, false)
                        }
                        // TypeError at run time.
                        Err(_) => Abs::Bottom,
                    }
                }
                None => {
                    // Tensor methods take keywords too.
                    if let Func::Method(m, t) = f {
                        let mut bound = positional.clone();
                        if !kw.is_empty()
                            && matches!(m.name(), "sum" | "mean" | "max" | "min" | "prod")
                        {
                            let axis = names
                                .iter()
                                .position(|k| k == "axis")
                                .map(|j| kw[j].clone());
                            let keep = names
                                .iter()
                                .position(|k| k == "keepdims")
                                .map(|j| kw[j].clone());
                            while bound.len() < 2 {
                                bound.push(Abs::Bottom);
                            }
                            if bound[0].is_bottom() {
                                bound[0] = axis.unwrap_or(Abs::None);
                            }
                            if bound[1].is_bottom() {
                                bound[1] = keep.unwrap_or(Abs::Bool(Some(false)));
                            }
                        }
                        rules::method(*m, t, &bound).unwrap_or(Abs::Any)
                    } else {
                        Abs::Any
                    }
                }
            };
            result = result.join(&r).unwrap_or(Abs::Any);
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
            match &graph.signature {
                Some(sig) if !direct => match sig.bind(args.len(), &[]) {
                    Ok(sources) => sources
                        .into_iter()
                        .map(|s| match s {
                            anfora_ir::ArgSource::Positional(i) => args[i].clone(),
                            anfora_ir::ArgSource::Default(k) => self.constant(c, &k),
                            anfora_ir::ArgSource::Keyword(_) => Abs::Any,
                        })
                        .collect(),
                    Err(_) => return Abs::Bottom,
                },
                _ => return Abs::Bottom,
            }
        } else {
            args
        };
        let kind = graph.kind;
        let recursive = self
            .in_progress
            .iter()
            .any(|&x| self.ctx(x).graph == h && self.ctx(x).parent == pc);
        let mono = matches!(kind, GraphKind::Join | GraphKind::LoopHeader)
            || !direct
            || recursive
            || self.generic.contains(&(h, pc))
            || self.poly_count.get(&(h, pc)).copied().unwrap_or(0) >= MAX_POLY;
        let target = if mono {
            let t = self.mono_context(h, pc);
            let broaden = kind == GraphKind::LoopHeader || recursive || kind == GraphKind::Function;
            let args: Vec<Abs> = if self.generic.contains(&(h, pc)) {
                vec![Abs::Any; args.len()]
            } else if broaden {
                args.iter().map(Abs::broaden).collect()
            } else {
                args
            };
            let span = self.module.node(n).span;
            self.add_mono_args(t, &args, span);
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
        if !self.ctx(target).evaluated && !self.in_progress.contains(&target) {
            self.stack.push((c, n));
            self.evaluate(target);
            self.stack.pop();
        }
        self.ctx(target).result.clone()
    }

    /// Joins `args` into a monovariant context's arguments; re-evaluates it if they grew. The
    /// phis of join blocks and loop headers must agree on tensors; the arguments of functions
    /// widen to unknown dimensions instead.
    fn add_mono_args(&mut self, t: CtxId, args: &[Abs], span: Span) {
        let strict = matches!(
            self.module.graph(self.ctx(t).graph).kind,
            GraphKind::Join | GraphKind::LoopHeader
        );
        let mut changed = false;
        for (i, a) in args.iter().enumerate() {
            let old = self.ctx(t).args.get(i).cloned().unwrap_or(Abs::Bottom);
            let new = if strict {
                match self.join(&old, a) {
                    Ok(r) => r,
                    Err(_) => {
                        self.phi_join_error(t, i, a, span);
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
            if self.ctx(t).arg_sources.get(i).is_some_and(|s| s.is_none()) && !a.is_bottom() {
                self.ctx_mut(t).arg_sources[i] = Some((a.clone(), span));
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

    fn phi_join_error(&mut self, t: CtxId, i: usize, a: &Abs, span: Span) {
        let g = self.ctx(t).graph;
        let graph = self.module.graph(g);
        let var = graph
            .params
            .get(i)
            .and_then(|&p| self.module.node(p).name.clone())
            .map(|n| n.trim_start_matches('ф').to_string())
            .unwrap_or_default();
        let var = if var.starts_with('.') {
            "the value".to_string()
        } else {
            format!("'{var}'")
        };
        let (first, first_span) = self.ctx(t).arg_sources[i]
            .clone()
            .unwrap_or((Abs::Any, Span::NONE));
        let (what, hint) = if graph.kind == GraphKind::LoopHeader {
            (
                format!("{var} changes from {first} to {a} between loop iterations"),
                "a tensor carried through a loop must keep its dtype and shape",
            )
        } else {
            (
                format!("{var} is {first} on one path and {a} on another"),
                "the branches of an `if` must give tensors of the same dtype and shape",
            )
        };
        let mut d = Diagnostic::error(JOIN_ERROR, what, span)
            .with_label(format!("{a} here"))
            .with_hint(hint);
        if !first_span.is_none() {
            d = d.with_related(first_span, format!("{first} here"));
        }
        self.report(d);
    }

    fn join_error(&mut self, c: CtxId, e: JoinError, verb: &str) {
        let g = self.ctx(c).graph;
        let span = self.module.graph(g).span;
        let function = self.module.graph(g).function.clone();
        self.report(
            Diagnostic::error(
                JOIN_ERROR,
                format!(
                    "the branches of '{function}' {verb} tensors of different dtypes or shapes: {} and {}",
                    e.left, e.right
                ),
                span,
            )
            .with_label("in this function")
            .with_hint("the branches of an `if` must give tensors of the same dtype and shape"),
        );
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
                self.add_mono_args(t, &vec![Abs::Any; n], Span::NONE);
            }
        }
    }
}

/// Primitives whose result can hold their arguments' values (so a function inside an argument
/// may flow to the result).
fn passes_values(p: Prim) -> bool {
    matches!(
        p,
        Prim::GetItem
            | Prim::TupleGetItem
            | Prim::Unpack
            | Prim::Min
            | Prim::Max
            | Prim::TupleType
            | Prim::ListType
            | Prim::Enumerate
            | Prim::Zip
            | Prim::CheckBound
            | Prim::Add
            | Prim::InplaceAdd
            | Prim::Mul
            | Prim::InplaceMul
    )
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

//! Calls: of primitives, closures (polyvariant or monovariant contexts), partial applications
//! and tensor methods, with positional and keyword arguments bound as the VM binds them.

use std::sync::Arc;

use anfora_ir::{ArgSource, Const, GraphId, GraphKind, NodeId, Prim, Signature};
use anfora_ops::abs::{Abs, CtxId, Func, RuleError, TensorAbs};
use anfora_ops::call::{binds_arguments, infer_prim, not_constant, op_label};
use anfora_ops::python::method_abs;
use anfora_ops::value::Method;

use super::{Interpreter, Key, MAX_POLY, MAX_UNROLL, contains_any, plain_constant};

impl Interpreter<'_> {
    pub(super) fn eval_apply(&mut self, c: CtxId, n: NodeId) -> Abs {
        let inputs = self.module.inputs(n).to_vec();
        let callee = self.operand(c, inputs[0]);
        let is_switch = self.module.callee_prim(n) == Some(Prim::Switch);
        // The function a keyword or star call calls is called, not used as a value.
        let binds = self.module.callee_prim(n).is_some_and(|p| {
            matches!(p, Prim::CallKw | Prim::CallStar | Prim::CallDict) || binds_arguments(p)
        });
        let mut args = Vec::with_capacity(inputs.len() - 1);
        for (k, &i) in inputs.iter().enumerate().skip(1) {
            let called = binds && k == 1;
            if !is_switch && !called && !self.module.is_apply(i) && !self.module.is_param(i) {
                self.note_value_use(c, i);
            }
            args.push(self.operand(c, i));
        }
        // In an unrolled iteration, the block a Switch chooses (the loop's body or exit, a
        // branch) is called as named, so that it is specialized for the iteration too.
        let direct = self.module.constant(inputs[0]).is_some()
            || (is_switch_call(self.module, inputs[0]) && self.unrolled.contains(&c));
        self.call(c, n, &callee, args, direct)
    }

    fn call(&mut self, c: CtxId, n: NodeId, callee: &Abs, args: Vec<Abs>, direct: bool) -> Abs {
        match callee {
            Abs::Bottom => Abs::Bottom,
            Abs::Func(fs) => self.call_each(c, n, fs, |cx, f| {
                cx.call_func(c, n, f, args.clone(), direct)
            }),
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

    /// Calls each of the functions `fs` with `call`, and joins what they give.
    fn call_each(
        &mut self,
        c: CtxId,
        n: NodeId,
        fs: &[Func],
        mut call: impl FnMut(&mut Self, &Func) -> Abs,
    ) -> Abs {
        let mut result = Abs::Bottom;
        for f in fs {
            let r = call(self, f);
            result = self.join_result(c, n, &result, f, r);
        }
        result
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
            Func::Prim(Prim::CallStar) => self.call_star(c, n, args),
            Func::Prim(Prim::CallDict) => self.call_dict(c, n, args),
            Func::Prim(p) if binds_arguments(*p) => self.bind_args(c, n, *p, args),
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
            Func::Closure { graph, ctx } => {
                self.call_closure(c, n, (*graph, *ctx), args, direct, direct)
            }
            Func::Partial(inner, bound) => {
                let mut all = bound.to_vec();
                all.extend(args);
                self.call_func(c, n, inner, all, false)
            }
            Func::Method(m, t) => self.call_method(c, n, *m, t, &args),
        }
    }

    /// Calls tensor method `m` of `t` with arguments bound as [`bind_method`] binds them.
    fn call_method(
        &mut self,
        c: CtxId,
        n: NodeId,
        m: Method,
        t: &Arc<TensorAbs>,
        args: &[Abs],
    ) -> Abs {
        match method_abs(m, t, args) {
            Ok(r) => r,
            Err(RuleError(msg)) => self.shape_error(c, n, m.name(), &msg),
        }
    }

    /// Calls primitive `p` with arguments bound to its signature.
    fn call_prim(&mut self, c: CtxId, n: NodeId, p: Prim, args: Vec<Abs>) -> Abs {
        if p == Prim::GetAttr
            && let Some(r) = self.object_attribute(c, n, &args)
        {
            return r;
        }
        if p == Prim::AttrGrad {
            return self.attr_grad(&args);
        }
        if let Some(msg) = not_constant(p, &args) {
            let operation = op_label(p);
            self.ctx_mut(c).shape_errors.push((n, operation, msg, true));
            return Abs::Bottom;
        }
        let r = if p == Prim::Switch {
            self.switch(&args)
        } else if p == Prim::MakeCell {
            self.make_cell(c, n, &args[0])
        } else if p == Prim::CellGet {
            self.cell_get(c, n, &args[0])
        } else if p == Prim::CellSet {
            self.cell_set(c, n, &args[0], &args[1])
        } else {
            match infer_prim(p, &args) {
                Ok(r) => r,
                Err(RuleError(msg)) => self.shape_error(c, n, &op_label(p), &msg),
            }
        };
        let attrs = &p.def().attrs;
        if attrs.passes_values != 0 && contains_any(&r) {
            for (i, a) in args.iter().enumerate() {
                if attrs.passes(i) {
                    self.escape(a);
                }
            }
        }
        r
    }

    /// E0301 at call node `n`: `operation: message`, if the operation still fails once the
    /// analysis is done. The failing operation gives no value (`Bottom`, as an operation that
    /// always raises): an unknown value (`Any`) would flow on into the loop or recursion that
    /// led here and could make the operation's own arguments unknown in the next round, hiding
    /// the error.
    pub(super) fn shape_error(&mut self, c: CtxId, n: NodeId, operation: &str, msg: &str) -> Abs {
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

    /// `CallStar(f, names, args, kwvalues...)`: the items of the tuple `args` are the positional
    /// arguments; its length must be known (a tuple abstract always has one).
    fn call_star(&mut self, c: CtxId, n: NodeId, args: Vec<Abs>) -> Abs {
        let (Some(Abs::Tuple(names)), Some(star)) = (args.get(1), args.get(2)) else {
            return Abs::Bottom;
        };
        let positional = match star {
            Abs::Tuple(items) => items.clone(),
            Abs::Bottom => return Abs::Bottom,
            _ => {
                for a in &args {
                    self.escape(a);
                }
                return self.shape_error(
                    c,
                    n,
                    "star-arguments",
                    "their number is not known at compile time (a tuple whose length changes \
                     between calls, as in a recursion that shortens it); pass the tuple as one \
                     argument instead",
                );
            }
        };
        let names = keyword_names(names);
        let positional = positional.to_vec();
        let kw = args[3..].to_vec();
        let Abs::Func(fs) = &args[0] else {
            for a in &args {
                self.escape(a);
            }
            return Abs::Any;
        };
        // A function named at the call (`f(*t)` of a global or nested `def`) is specialized for
        // each call's arguments, as a direct call is; its arguments are bound here all the same.
        let direct = self.module.constant(self.module.inputs(n)[1]).is_some();
        if names.is_empty() {
            return self.call_each(c, n, fs, |cx, f| match f {
                Func::Closure { graph, ctx } => {
                    cx.call_closure(c, n, (*graph, *ctx), positional.clone(), direct, false)
                }
                _ => cx.call_func(c, n, f, positional.clone(), false),
            });
        }
        self.call_each(c, n, fs, |cx, f| {
            cx.call_with_keywords(c, n, f, &positional, (&names, &kw), direct)
        })
    }

    /// `CallDict(f, args, kwargs)`: the items of the tuple `args` are the positional arguments,
    /// those of the dict `kwargs` the keyword arguments (both known at compile time).
    fn call_dict(&mut self, c: CtxId, n: NodeId, args: Vec<Abs>) -> Abs {
        let (positional, kwargs) = match (&args[1], &args[2]) {
            (Abs::Tuple(p), Abs::Dict(d)) => (p.to_vec(), d.clone()),
            (Abs::Bottom, _) | (_, Abs::Bottom) => return Abs::Bottom,
            _ => {
                for a in &args {
                    self.escape(a);
                }
                return self.shape_error(
                    c,
                    n,
                    "`**` arguments",
                    "the keys of the dict (or the number of star-arguments) are not known at \
                     compile time; pass the keyword arguments one by one",
                );
            }
        };
        let names: Vec<String> = kwargs.iter().map(|(k, _)| k.to_string()).collect();
        let kw: Vec<Abs> = kwargs.iter().map(|(_, a)| a.clone()).collect();
        let Abs::Func(fs) = &args[0] else {
            for a in &args {
                self.escape(a);
            }
            return Abs::Any;
        };
        let direct = self.module.constant(self.module.inputs(n)[1]).is_some();
        self.call_each(c, n, fs, |cx, f| {
            cx.call_with_keywords(c, n, f, &positional, (&names, &kw), direct)
        })
    }

    /// `CallKw(f, names, args...)` with a known callee: bind keywords, then call.
    fn call_kw(&mut self, c: CtxId, n: NodeId, args: Vec<Abs>) -> Abs {
        let Some(Abs::Tuple(names)) = args.get(1).cloned() else {
            return Abs::Any;
        };
        let names = keyword_names(&names);
        let split = args.len() - names.len();
        let (positional, kw) = (&args[2..split], &args[split..]);
        let Abs::Func(fs) = &args[0] else {
            for a in &args {
                self.escape(a);
            }
            return Abs::Any;
        };
        self.call_each(c, n, fs, |cx, f| {
            cx.call_with_keywords(c, n, f, positional, (&names, kw), false)
        })
    }

    /// Calls `f` with `positional` arguments and keyword arguments `names` = `kw`.
    fn call_with_keywords(
        &mut self,
        c: CtxId,
        n: NodeId,
        f: &Func,
        positional: &[Abs],
        (names, kw): (&[String], &[Abs]),
        direct: bool,
    ) -> Abs {
        let sig = match f {
            Func::Prim(p) => Some(p.signature().clone()),
            Func::Closure { graph, .. } => self.module.graph(*graph).signature.clone(),
            // Tensor methods take keywords too.
            Func::Method(m, t) => {
                return match bind_method(*m, positional, names, kw) {
                    Some(bound) => self.call_method(c, n, *m, t, &bound),
                    // TypeError at run time.
                    None => Abs::Bottom,
                };
            }
            Func::Partial(..) => None,
        };
        let Some(sig) = sig else {
            return Abs::Any;
        };
        let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        let Ok(sources) = sig.bind(positional.len(), &refs) else {
            // TypeError at run time.
            return Abs::Bottom;
        };
        let bound = pick_args(sources, positional, (&refs, kw), &mut |k| {
            self.constant(c, k)
        });
        match f {
            Func::Prim(p) => self.call_prim(c, n, *p, bound),
            Func::Closure { graph, ctx } => {
                self.call_closure(c, n, (*graph, *ctx), bound, direct, true)
            }
            _ => self.call_func(c, n, f, bound, false),
        }
    }

    fn call_closure(
        &mut self,
        c: CtxId,
        n: NodeId,
        (h, pc): (GraphId, Option<CtxId>),
        args: Vec<Abs>,
        direct: bool,
        bound: bool,
    ) -> Abs {
        let graph = self.module.graph(h);
        let packs = graph.signature.as_ref().is_some_and(|s| s.packs);
        // Calls through values are bound at run time: fill defaults (and pack `*args`) here.
        let args = if args.len() != graph.params.len() || (packs && !bound) {
            match graph.signature.clone() {
                Some(sig) if !bound => {
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
        // A block (a branch, a join) without free variables still belongs to one
        // specialization of its function: keyed by it, two specializations (a function called
        // with two shapes) do not share one join, whose phi would mix their arguments.
        let pc = match pc {
            None if is_block(kind) => Some(self.owner_context(c, false)),
            // A loop's header, called from before the loop and from its own body: keyed by
            // the function around both.
            None if kind == GraphKind::LoopHeader => Some(self.owner_context(c, true)),
            pc => pc,
        };
        // A block an unrolled iteration runs is specialized for it too: in the grad stage's
        // loops (closed graphs after lambda lifting) it would otherwise be a recursive call.
        let block = is_block(kind);
        let unroll =
            self.unrolls(c, h, pc, &args) || (direct && block && self.unrolled.contains(&c));
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
            let t = self.context(key, h, pc, args, false);
            if unroll {
                self.unrolled.insert(t);
            }
            t
        };
        self.ctx_mut(c).calls.entry(n).or_default().push(target);
        self.ctx_mut(target).callers.insert(c);
        // The first call reaching a context created after the caller is where it comes from
        // (origins point to older contexts, so their chains end).
        if self.ctx(target).origin.is_none() && target > c {
            self.ctx_mut(target).origin = Some((c, n));
            self.ancestry.set_origin(target, c);
        }
        if !self.ctx(target).evaluated && !self.ancestry.is_running(target) {
            self.evaluate(target);
        }
        self.ctx(target).result.clone()
    }

    /// The context of the function (or, unless `past_loops`, loop header) whose blocks `c`
    /// runs: `c` itself or the nearest enclosing context that is not a block.
    fn owner_context(&self, mut c: CtxId, past_loops: bool) -> CtxId {
        loop {
            let kind = self.module.graph(self.ctx(c).graph).kind;
            let inner = is_block(kind) || (past_loops && kind == GraphKind::LoopHeader);
            match self.ctx(c).parent {
                Some(p) if inner => c = p,
                _ => return c,
            }
        }
    }

    /// Whether a call of loop header `h` is specialized per iteration (unrolled): the loop
    /// walks short tuples (or lists) whose items differ in type, such as a network's
    /// Parameters, layers or gradients, or that hold strings (names, a dict's keys). A loop
    /// would join those into unknowns; each iteration sees its own items instead.
    fn unrolls(&mut self, c: CtxId, h: GraphId, pc: Option<CtxId>, args: &[Abs]) -> bool {
        if self.module.graph(h).iterates.is_empty()
            || self.poly_count.get(&(h, pc)).copied().unwrap_or(0) >= MAX_UNROLL
        {
            return false;
        }
        let graph = self.module.graph(h);
        let (seqs, params) = (graph.iterates.clone(), graph.params.clone());
        let from = pc.unwrap_or(c);
        // A sequence is a node of the enclosing graph, or (in a lifted loop) a parameter.
        let sequences: Vec<Abs> = (seqs.iter())
            .map(|&s| match params.iter().position(|&p| p == s) {
                Some(j) => args.get(j).cloned().unwrap_or(Abs::Any),
                None => self.operand(from, s),
            })
            .collect();
        sequences.into_iter().any(|s| match s {
            Abs::Tuple(items) | Abs::List(items) if items.len() <= MAX_UNROLL => {
                let first = items.first().map(Abs::broaden);
                // Strings too: names, such as a dict's keys, each read as a constant.
                items.iter().any(|x| Some(x.broaden()) != first) || items.iter().any(holds_name)
            }
            _ => false,
        })
    }

    /// Whether calling graph `h` (with parent context `pc`) from context `c` is a recursive
    /// call: an instance of `h` is being evaluated, or is among the calls that led to `c`. (The
    /// chain of first calls does not depend on the order contexts are evaluated in, so a
    /// context re-evaluated on its own still sees its recursive calls as recursive.)
    fn is_recursive_call(&self, c: CtxId, h: GraphId, pc: Option<CtxId>) -> bool {
        self.ancestry.instance_running((h, pc)) || self.ancestry.on_chain(c, (h, pc))
    }
}

/// Whether `callee` is a Switch between two graph constants.
fn is_switch_call(m: &anfora_ir::Module, callee: NodeId) -> bool {
    m.callee_prim(callee) == Some(Prim::Switch)
        && m.inputs(callee).len() == 4
        && m.inputs(callee)[2..]
            .iter()
            .all(|&b| m.constant(b).and_then(Const::as_graph).is_some())
}

/// Binds the positional arguments of a call through a value to `sig` (defaults filled in);
/// `None` when Python would raise TypeError.
fn bind_positional(
    sig: &Signature,
    args: Vec<Abs>,
    constant: &mut dyn FnMut(&Const) -> Abs,
) -> Option<Vec<Abs>> {
    let sources = sig.bind(args.len(), &[]).ok()?;
    Some(pick_args(sources, &args, (&[], &[]), constant))
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
    // The tensor is the first parameter of the reduction: a placeholder stands for it.
    let sources = reduction
        .signature()
        .bind(positional.len() + 1, &refs)
        .ok()?;
    let with_tensor: Vec<Abs> = std::iter::once(Abs::None)
        .chain(positional.iter().cloned())
        .collect();
    let mut bound = pick_args(sources, &with_tensor, (&refs, kw), &mut plain_constant);
    bound.remove(0);
    Some(bound)
}

/// The arguments a binding (`Signature::bind`) picks: positional ones, keyword ones and the
/// defaults, through `default`, and the `*args` tuple.
pub(super) fn pick_args(
    sources: Vec<ArgSource>,
    positional: &[Abs],
    keywords: (&[&str], &[Abs]),
    default: &mut dyn FnMut(&Const) -> Abs,
) -> Vec<Abs> {
    let mut dict = |items: Vec<(Arc<str>, Abs)>| Abs::Dict(Arc::from(items));
    sources
        .into_iter()
        .map(|s| s.pick(positional, keywords, default, &mut Abs::tuple, &mut dict))
        .collect()
}

/// A string constant, or a pair that starts with one (`d.items()`'s).
fn holds_name(a: &Abs) -> bool {
    match a {
        Abs::Str(Some(_)) => true,
        Abs::Tuple(t) => matches!(t.first(), Some(Abs::Str(Some(_)))),
        _ => false,
    }
}

/// The keyword names of a `CallKw` or `CallStar`, from their constant tuple's abstracts.
pub(super) fn keyword_names(names: &[Abs]) -> Vec<String> {
    names
        .iter()
        .map(|a| match a {
            Abs::Str(Some(s)) => s.to_string(),
            _ => String::new(),
        })
        .collect()
}

/// Whether graphs of this kind are blocks of a function (branches, joins, loop bodies).
fn is_block(kind: GraphKind) -> bool {
    !matches!(
        kind,
        GraphKind::Function | GraphKind::Lambda | GraphKind::LoopHeader | GraphKind::ModuleInit
    )
}

//! Which names own their object where an in-place update runs.
//!
//! numpy's `x += v` and `x[i] = v` change the array itself, so every other name, tuple,
//! view or caller holding it sees the change. anfora compiles such an update as a new value
//! bound to `x`, which is exact only when nothing else can hold the old object: the name
//! *owns* it. This forward analysis over a function's statements finds where that holds:
//!
//! * a name owns its object after it is bound to a fresh value: the result of an operator, of
//!   a primitive that does not return a view (`ops.zeros`, `ops.exp`, `x.sum()`), a literal or
//!   a display;
//! * it loses it when its value may be held elsewhere: bound to another name, put in a tuple or
//!   list, passed to a function whose result is kept (the function may return it), read
//!   through a view that is kept (`y = x[0]`, `y = x.T`), iterated by `for`, captured by a
//!   nested function, or read by a default value;
//! * function parameters never own their object (the caller holds it), nor do globals or the
//!   variables of enclosing functions;
//! * where paths join, a name owns its object only if it does on every path.
//!
//! Reads that do not keep the value (operands, arguments of primitives that compute a new
//! value, conditions, a call whose result is dropped or consumed at once) leave it owned.
//!
//! `y = x` gives the object a second name when the object is known to be mutable (a tensor
//! made by an `ops` function or a tensor method, arithmetic on one, a list): an update
//! through either rebinds both. Where it is not known to be mutable (an int is rebound by
//! `+=`, only the name updated changes), `y = x` makes neither name own it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

use crate::ast::*;

/// What a call's result is, as far as ownership goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallKind {
    /// A new value that keeps none of the arguments (a primitive that computes); `tensor`: an
    /// anfora function or tensor method, whose result is a tensor.
    Fresh { tensor: bool },
    /// A new container holding the arguments or their items (`list(x)`: `list`, `tuple(x)`).
    Container { list: bool },
    /// Anything else: it may return or keep its arguments (a view, a user function).
    Other,
    /// A function that may update its arguments in place and writes them back to the
    /// caller's variables (`ssa::write_back`), with its parameters' names in order. As
    /// `Other` otherwise.
    Writes(Rc<Writes>),
}

/// Which parameters of a function called by name it writes back to its caller.
#[derive(Debug, PartialEq, Eq)]
pub struct Writes {
    /// Its positional-or-keyword parameters (but a bound `self`), in order.
    pub params: Vec<Name>,
    /// For each, whether the function may update its object in place.
    pub written: Vec<bool>,
}

impl Writes {
    /// The parameters written back, in the order the function returns their objects.
    pub fn names(&self) -> Vec<Name> {
        (self.params.iter().zip(&self.written))
            .filter(|(_, w)| **w)
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// The argument expressions of a call bound to the parameters written back (positional
    /// ones before any `*`, keywords by name), each with its place among [`Writes::names`].
    pub fn bound<'e>(&self, args: &'e [Expr], keywords: &'e [Keyword]) -> Vec<(usize, &'e Expr)> {
        let positional = args
            .iter()
            .take_while(|a| !matches!(a.kind, ExprKind::Starred(_)))
            .take(self.params.len())
            .enumerate();
        let named = keywords
            .iter()
            .filter_map(|k| Some((self.params.iter().position(|p| *p == k.name)?, &k.value)));
        positional
            .chain(named)
            .filter(|(i, _)| self.written[*i])
            .map(|(i, e)| (self.written[..i].iter().filter(|w| **w).count(), e))
            .collect()
    }
}

/// The hidden variable that holds, in a function that writes its arguments back, the object
/// its caller passed as parameter `p` (an apostrophe keeps it apart from Python's names).
pub fn caller_object(p: &Name) -> Name {
    format!("{p}'").into()
}

/// Classifies a call of `func`.
pub type FreshCall<'a> = dyn FnMut(&Expr) -> CallKind + 'a;

/// What is known of an object's type: whether an in-place update changes it (a tensor or a
/// list) or rebinds the name (anything else, or not known).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Tensor,
    List,
    Other,
}

impl Kind {
    fn mutable(self) -> bool {
        self != Kind::Other
    }
}

/// What an expression is: a fresh object (no one else holds it) or not, and its kind.
#[derive(Clone, Copy, Debug)]
struct Value {
    fresh: bool,
    kind: Kind,
}

impl Value {
    const SHARED: Value = Value {
        fresh: false,
        kind: Kind::Other,
    };

    fn fresh(kind: Kind) -> Value {
        Value { fresh: true, kind }
    }
}

/// The names of one owned object and its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Group {
    names: BTreeSet<Name>,
    kind: Kind,
}

/// The owned objects: for each variable that owns its object, the group of variables that
/// share it (itself included; `y = x` makes both names of one mutable object, and an update
/// through either rebinds both).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Owned(BTreeMap<Name, Group>);

impl Owned {
    /// `n` is bound to a fresh object.
    fn insert(&mut self, n: Name, kind: Kind) {
        self.leave(&n);
        let group = Group {
            names: BTreeSet::from([n.clone()]),
            kind,
        };
        self.0.insert(n, group);
    }

    /// `n` is bound to an object it may not own; the other names of its old object keep it.
    fn leave(&mut self, n: &Name) {
        if let Some(group) = self.0.remove(n) {
            for m in group.names.iter().filter(|m| *m != n) {
                if let Some(g) = self.0.get_mut(m) {
                    g.names.remove(n);
                }
            }
        }
    }

    /// `n`'s object may be held by something else: none of its names owns it.
    fn escape(&mut self, n: &Name) {
        if let Some(group) = self.0.remove(n) {
            for m in &group.names {
                self.0.remove(m);
            }
        }
    }

    /// `y = x`: `y` names `x`'s object. Only a mutable object is shared by its names; for
    /// anything else an update rebinds only the name updated, so neither name may own it.
    fn alias(&mut self, y: &Name, x: &Name) {
        if y == x {
            return;
        }
        self.leave(y);
        match self.0.get(x).cloned() {
            Some(mut group) if group.kind.mutable() => {
                group.names.insert(y.clone());
                for m in &group.names {
                    self.0.insert(m.clone(), group.clone());
                }
            }
            Some(_) => self.escape(x),
            None => {}
        }
    }

    fn kind(&self, n: &Name) -> Kind {
        self.0.get(n).map_or(Kind::Other, |g| g.kind)
    }

    /// The names of `n`'s object, if `n` owns it.
    fn group(&self, n: &Name) -> Option<Vec<Name>> {
        self.0.get(n).map(|g| g.names.iter().cloned().collect())
    }

    /// Owned on both paths, with the same names.
    fn intersection(&self, other: &Owned) -> Owned {
        Owned(
            self.0
                .iter()
                .filter(|(n, g)| other.0.get(*n) == Some(g))
                .map(|(n, g)| (n.clone(), g.clone()))
                .collect(),
        )
    }
}

/// For each in-place update statement (keyed by its span's start), the names of the object
/// it updates where the variable owns it (all of them are rebound to the updated value), or
/// `None`.
///
/// Parameters never own their object, except `callers`: those of a function that writes its
/// arguments back, which own it together with their [`caller_object`] (an update through
/// the parameter rebinds that too, so the function can return it). The argument of a call
/// that writes back is a site too, keyed by the argument's span start.
pub fn analyze(
    def: &FunctionDef,
    fresh_call: &mut FreshCall,
    callers: &[Name],
) -> HashMap<u32, Option<Vec<Name>>> {
    let mut a = Analysis {
        fresh_call,
        sites: HashMap::new(),
        breaks: Vec::new(),
        continues: Vec::new(),
    };
    let mut entry = Owned::default();
    for p in callers {
        let group = Group {
            names: BTreeSet::from([p.clone(), caller_object(p)]),
            kind: Kind::Other,
        };
        entry.0.insert(p.clone(), group.clone());
        entry.0.insert(caller_object(p), group);
    }
    a.stmts(&def.body, Some(entry));
    a.sites
}

/// Whether `def` updates parameter `p` in place itself (`p += v`, `p[i] = v`).
pub fn updates_parameter(def: &FunctionDef, p: &Name) -> bool {
    let params = std::slice::from_ref(p);
    fn in_stmts(body: &[Stmt], params: &[Name]) -> bool {
        body.iter().any(|s| match &s.kind {
            StmtKind::AugAssign { target, .. } => target_root(target, params, true),
            // `p = v` rebinds; `p[i] = v` (also inside a tuple target) updates.
            StmtKind::Assign { targets, .. } => {
                targets.iter().any(|t| target_root(t, params, false))
            }
            StmtKind::If { body, orelse, .. } => in_stmts(body, params) || in_stmts(orelse, params),
            StmtKind::While { body, .. } | StmtKind::For { body, .. } => in_stmts(body, params),
            _ => false,
        })
    }
    /// Whether target `t` updates one of `params` (`names`: a bare name counts, as in `p += v`).
    fn target_root(t: &Target, params: &[Name], names: bool) -> bool {
        match t {
            Target::Name(n, _) | Target::Starred(n, _) => names && params.contains(n),
            Target::Item { object, .. } => item_root(object).is_some_and(|n| params.contains(n)),
            Target::Tuple(items, _) => items.iter().any(|i| target_root(i, params, names)),
            Target::Invalid(_) => false,
        }
    }
    anfora_ir::deep(|| in_stmts(&def.body, params))
}

struct Analysis<'a, 'b> {
    fresh_call: &'a mut FreshCall<'b>,
    sites: HashMap<u32, Option<Vec<Name>>>,
    /// The states at the `break`s and `continue`s of each enclosing loop.
    breaks: Vec<Vec<Owned>>,
    continues: Vec<Vec<Owned>>,
}

fn meet(a: Option<Owned>, b: Option<Owned>) -> Option<Owned> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.intersection(&b)),
        (a, None) => a,
        (None, b) => b,
    }
}

impl Analysis<'_, '_> {
    /// The state after `body`, `None` where no path reaches its end.
    fn stmts(&mut self, body: &[Stmt], mut state: Option<Owned>) -> Option<Owned> {
        for s in body {
            let st = state?;
            state = self.stmt(s, st);
        }
        state
    }

    fn stmt(&mut self, s: &Stmt, st: Owned) -> Option<Owned> {
        anfora_ir::deep(|| self.stmt_inner(s, st))
    }

    fn stmt_inner(&mut self, s: &Stmt, mut st: Owned) -> Option<Owned> {
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                // `y = x` (and `a = b = x`): more names of x's object.
                if let ExprKind::Name(x) = &value.kind
                    && targets.iter().all(|t| matches!(t, Target::Name(..)))
                {
                    for t in targets {
                        if let Target::Name(y, _) = t {
                            st.alias(y, x);
                        }
                    }
                    return Some(st);
                }
                let v = self.expr(value, true, &mut st);
                // `a = b = v`: the names share one object.
                let mut first: Option<&Name> = None;
                for t in targets {
                    match (t, first) {
                        (Target::Name(y, _), Some(x)) => st.alias(y, x),
                        (Target::Name(y, _), None) => {
                            self.bind(t, v, Some(value), &mut st);
                            first = Some(y);
                        }
                        _ => {
                            let v = if targets.len() == 1 { v } else { Value::SHARED };
                            self.bind(t, v, Some(value), &mut st);
                        }
                    }
                }
            }
            StmtKind::AugAssign { target, value, .. } => {
                self.expr(value, false, &mut st);
                self.update(target, &mut st, s.span.start);
            }
            StmtKind::AttrAssign { object, value, .. } => {
                self.expr(value, false, &mut st);
                self.expr(object, false, &mut st);
            }
            StmtKind::FunctionDef(def) => {
                self.function(def, &mut st);
                st.leave(&def.name);
            }
            StmtKind::Return(v) => {
                if let Some(v) = v {
                    self.expr(v, true, &mut st);
                }
                return None;
            }
            StmtKind::Expr(e) => {
                self.expr(e, false, &mut st);
            }
            StmtKind::Assert { test, msg } => {
                self.expr(test, false, &mut st);
                if let Some(m) = msg {
                    self.expr(m, false, &mut st);
                }
            }
            StmtKind::If { test, body, orelse } => {
                self.expr(test, false, &mut st);
                let t = self.stmts(body, Some(st.clone()));
                let f = self.stmts(orelse, Some(st));
                return meet(t, f);
            }
            StmtKind::While { test, body } => return self.while_loop(test, body, st),
            StmtKind::For { target, iter, body } => return self.for_loop(target, iter, body, st),
            StmtKind::Break => {
                if let Some(b) = self.breaks.last_mut() {
                    b.push(st);
                }
                return None;
            }
            StmtKind::Continue => {
                if let Some(c) = self.continues.last_mut() {
                    c.push(st);
                }
                return None;
            }
            StmtKind::Declare(n) => {
                st.leave(n);
            }
            StmtKind::Import(_)
            | StmtKind::Nonlocal(_)
            | StmtKind::Pass
            | StmtKind::MainGuard
            | StmtKind::Invalid => {}
        }
        Some(st)
    }

    /// A loop whose head is reached with `entry`: the state at the head is the meet of the
    /// entry and every back edge, iterated until it no longer shrinks. `run` runs the test and
    /// the body from the head's state and gives (the state leaving through the test, the state
    /// at the end of the body).
    fn loop_fixpoint(
        &mut self,
        entry: Owned,
        mut run: impl FnMut(&mut Self, Owned) -> (Owned, Option<Owned>),
    ) -> Option<Owned> {
        let mut head = entry.clone();
        loop {
            self.breaks.push(Vec::new());
            self.continues.push(Vec::new());
            let (exit, end) = run(self, head.clone());
            let breaks = self.breaks.pop().unwrap_or_default();
            let continues = self.continues.pop().unwrap_or_default();
            let back = continues.into_iter().map(Some).fold(end, meet);
            let next = meet(Some(entry.clone()), back).unwrap_or_default();
            if next == head {
                return breaks.into_iter().map(Some).fold(Some(exit), meet);
            }
            head = next;
        }
    }

    fn while_loop(&mut self, test: &Expr, body: &[Stmt], st: Owned) -> Option<Owned> {
        self.loop_fixpoint(st, |a, mut head| {
            a.expr(test, false, &mut head);
            let end = a.stmts(body, Some(head.clone()));
            (head, end)
        })
    }

    fn for_loop(
        &mut self,
        target: &Target,
        iter: &Expr,
        body: &[Stmt],
        mut st: Owned,
    ) -> Option<Owned> {
        // The items of a tensor are views of it, those of a tuple are shared: the sequence
        // is kept, and the target never owns its item.
        self.expr(iter, true, &mut st);
        self.loop_fixpoint(st, |a, head| {
            let mut inner = head.clone();
            a.bind(target, Value::SHARED, None, &mut inner);
            let end = a.stmts(body, Some(inner));
            (head, end)
        })
    }

    /// Binds a target to value `v` (written as `expr`, whose items a tuple target unpacks when
    /// it is a display).
    fn bind(&mut self, t: &Target, v: Value, expr: Option<&Expr>, st: &mut Owned) {
        match t {
            Target::Name(n, _) => {
                if v.fresh {
                    st.insert(n.clone(), v.kind);
                } else {
                    st.leave(n);
                }
            }
            Target::Tuple(items, _) => {
                let parts = match expr.map(|e| &e.kind) {
                    Some(ExprKind::Tuple(p) | ExprKind::List(p)) if p.len() == items.len() => {
                        Some(p)
                    }
                    _ => None,
                };
                for (i, item) in items.iter().enumerate() {
                    match parts {
                        Some(p) if v.fresh => {
                            let part = self.classify(&p[i], st);
                            self.bind(item, part, Some(&p[i]), st);
                        }
                        _ => self.bind(item, Value::SHARED, None, st),
                    }
                }
            }
            // A new list of the items (which others may hold).
            Target::Starred(n, _) => st.insert(n.clone(), Kind::List),
            // Keyed by the item's own span, where the lowering looks it up (inside a tuple
            // target it is not the statement's).
            Target::Item { span, .. } => self.update(t, st, span.start),
            Target::Invalid(_) => {}
        }
    }

    /// An in-place update of a name (`x += v`) or of an item of it (`x[i] = v`): records
    /// whether the name owns its object. The object stays the name's.
    fn update(&mut self, t: &Target, st: &mut Owned, at: u32) {
        match t {
            Target::Name(n, _) => {
                self.sites.insert(at, st.group(n));
            }
            Target::Item { object, index, .. } => {
                self.expr(index, false, st);
                let group = item_root(object).and_then(|n| st.group(n));
                // The object expression reads views of the root, which it does not keep.
                self.expr(object, false, st);
                let group = match self.sites.get(&at) {
                    Some(prev) => prev.clone().and(group),
                    None => group,
                };
                self.sites.insert(at, group);
            }
            Target::Tuple(items, _) => items.iter().for_each(|i| self.update(i, st, at)),
            Target::Starred(..) | Target::Invalid(_) => {}
        }
    }

    /// What `e` is, without recording its reads (they were, when the whole value was walked).
    fn classify(&mut self, e: &Expr, st: &Owned) -> Value {
        let mut scratch = st.clone();
        self.expr(e, true, &mut scratch)
    }

    /// Walks `e`, whose value is `kept` (bound, stored, returned) or consumed at once, and
    /// removes from `st` every name whose object it may keep. Returns what `e` is.
    fn expr(&mut self, e: &Expr, kept: bool, st: &mut Owned) -> Value {
        anfora_ir::deep(|| self.expr_inner(e, kept, st))
    }

    fn expr_inner(&mut self, e: &Expr, kept: bool, st: &mut Owned) -> Value {
        match &e.kind {
            ExprKind::Name(n) => {
                let kind = st.kind(n);
                if kept {
                    st.escape(n);
                }
                Value { fresh: false, kind }
            }
            ExprKind::Literal(_) => Value::fresh(Kind::Other),
            ExprKind::Invalid => Value::SHARED,
            // A dict keeps its values (no statement changes a dict in place).
            ExprKind::Dict(items) => {
                for (_, v) in items {
                    self.expr(v, true, st);
                }
                Value::fresh(Kind::Other)
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                for i in items {
                    self.expr(i, true, st);
                }
                let list = matches!(e.kind, ExprKind::List(_));
                Value::fresh(if list { Kind::List } else { Kind::Other })
            }
            ExprKind::BinOp { left, right, .. } => {
                let (a, b) = (self.expr(left, false, st), self.expr(right, false, st));
                Value::fresh(match (a.kind, b.kind) {
                    (Kind::Tensor, _) | (_, Kind::Tensor) => Kind::Tensor,
                    (Kind::List, _) | (_, Kind::List) => Kind::List,
                    _ => Kind::Other,
                })
            }
            ExprKind::UnaryOp { operand, .. } => {
                let a = self.expr(operand, false, st);
                let tensor = a.kind == Kind::Tensor;
                Value::fresh(if tensor { Kind::Tensor } else { Kind::Other })
            }
            ExprKind::Compare {
                left, comparators, ..
            } => {
                let mut tensor = self.expr(left, false, st).kind == Kind::Tensor;
                for c in comparators {
                    tensor |= self.expr(c, false, st).kind == Kind::Tensor;
                }
                Value::fresh(if tensor { Kind::Tensor } else { Kind::Other })
            }
            // The result is one of the operands.
            ExprKind::BoolOp { values, .. } => {
                for v in values {
                    self.expr(v, kept, st);
                }
                Value::SHARED
            }
            ExprKind::IfExp { test, body, orelse } => {
                self.expr(test, false, st);
                let a = self.expr(body, kept, st);
                let b = self.expr(orelse, kept, st);
                Value {
                    fresh: a.fresh && b.fresh,
                    kind: if a.kind == b.kind {
                        a.kind
                    } else {
                        Kind::Other
                    },
                }
            }
            ExprKind::Call {
                func,
                args,
                keywords,
            } => {
                let call = (self.fresh_call)(func);
                if let CallKind::Writes(writes) = &call {
                    // Each variable passed is updated in place by the call, as by `x += v`.
                    for (_, a) in writes.bound(args, keywords) {
                        if let ExprKind::Name(n) = &a.kind {
                            self.sites.insert(a.span.start, st.group(n));
                        }
                    }
                }
                let keep_args = !matches!(call, CallKind::Fresh { .. }) && kept;
                self.expr(func, keep_args, st);
                for a in args {
                    self.expr(a, keep_args, st);
                }
                for k in keywords {
                    self.expr(&k.value, keep_args, st);
                }
                match call {
                    CallKind::Fresh { tensor: true } => Value::fresh(Kind::Tensor),
                    CallKind::Fresh { tensor: false } | CallKind::Container { list: false } => {
                        Value::fresh(Kind::Other)
                    }
                    CallKind::Container { list: true } => Value::fresh(Kind::List),
                    CallKind::Other | CallKind::Writes(_) => Value::SHARED,
                }
            }
            ExprKind::Attribute { value, attr } => {
                let plain = matches!(&**attr, "shape" | "dtype" | "ndim" | "size");
                self.expr(value, kept && !plain, st);
                if plain {
                    Value::fresh(Kind::Other)
                } else {
                    Value::SHARED
                }
            }
            ExprKind::Subscript { value, index } => {
                self.expr(value, kept, st);
                self.expr(index, false, st);
                Value::SHARED
            }
            ExprKind::Slice { lower, upper, step } => {
                for part in [lower, upper, step].into_iter().flatten() {
                    self.expr(part, false, st);
                }
                Value::fresh(Kind::Other)
            }
            ExprKind::Lambda(def) => {
                self.function(def, st);
                Value::fresh(Kind::Other)
            }
            // The items are passed: the argument is kept as the call keeps its arguments.
            ExprKind::Starred(v) => self.expr(v, kept, st),
        }
    }

    /// Creating a nested function keeps its defaults and everything its body reads.
    fn function(&mut self, def: &FunctionDef, st: &mut Owned) {
        for p in &def.params {
            if let Some(d) = &p.default {
                self.expr(d, true, st);
            }
        }
        crate::flow::function_captures(def, &mut |n| {
            st.escape(n);
        });
    }
}

/// The variable an item target updates (`x` of `x[i] = v`); `None` for an attribute
/// (`self.w[i] = v`), which is a Parameter write.
pub fn item_root(object: &Expr) -> Option<&Name> {
    match &object.kind {
        ExprKind::Name(n) => Some(n),
        // `x[i][j] = v` updates `x` through the view `x[i]`.
        ExprKind::Subscript { value, .. } => item_root(value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether each in-place update of `src`'s first function, in source order, owns its
    /// object; calls of `ops.*` are fresh, other calls are not.
    fn owned(src: &str) -> Vec<bool> {
        let f = &crate::py_ast::first_function(src);
        let mut fresh = |e: &Expr| match &e.kind {
            ExprKind::Attribute { value, .. } if matches!(&value.kind, ExprKind::Name(n) if &**n == "ops") => {
                CallKind::Fresh { tensor: true }
            }
            ExprKind::Name(n) if &**n == "list" => CallKind::Container { list: true },
            _ => CallKind::Other,
        };
        let mut sites: Vec<(u32, bool)> = analyze(f, &mut fresh, &[])
            .into_iter()
            .map(|(at, g)| (at, g.is_some()))
            .collect();
        sites.sort();
        sites.into_iter().map(|(_, o)| o).collect()
    }

    #[test]
    fn fresh_values_are_owned_and_arguments_are_not() {
        assert_eq!(owned("def f(x):\n    x += 1\n"), [false]);
        assert_eq!(
            owned("def f(x):\n    y = x * 2\n    y += 1\n    y[0] = 3\n"),
            [true, true]
        );
        assert_eq!(
            owned("def f():\n    y = ops.zeros(3)\n    y += 1\n"),
            [true]
        );
        assert_eq!(owned("def f(x):\n    y = g(x)\n    y += 1\n"), [false]);
        // A new list keeps the items of its argument: the list is owned, the argument is not.
        assert_eq!(
            owned("def f(x):\n    x = x * 1\n    y = list(x)\n    y[0] = 1\n    x += 1\n"),
            [true, false]
        );
    }

    #[test]
    fn aliases_views_tuples_and_captures_take_ownership_away() {
        // Another name of the object is updated with it; a tuple, a view or a closure is not.
        assert_eq!(
            owned("def f(x):\n    y = ops.zeros(3)\n    z = y\n    y += 1\n"),
            [true]
        );
        // An object not known to be mutable (an int is rebound by `+=`) is owned by no name
        // once it has two.
        assert_eq!(
            owned("def f(x):\n    y = x + 0\n    z = y\n    y += 1\n"),
            [false]
        );
        assert_eq!(
            owned("def f(x):\n    y = [x]\n    z = y\n    y[0] = 1\n"),
            [true]
        );
        assert_eq!(owned("def f(x):\n    y = x\n    y += 1\n"), [false]);
        assert_eq!(
            owned("def f(x):\n    y = x + 0\n    r = y[0]\n    y += 1\n"),
            [false]
        );
        assert_eq!(
            owned("def f(x):\n    y = x + 0\n    t = (y, 1)\n    y += 1\n"),
            [false]
        );
        assert_eq!(
            owned("def f(x):\n    y = x + 0\n    g = lambda: y\n    y += 1\n"),
            [false]
        );
        assert_eq!(
            owned("def f(x):\n    y = x + 0\n    for r in y:\n        pass\n    y += 1\n"),
            [false]
        );
        // Reads that keep nothing leave it owned.
        assert_eq!(
            owned("def f(x):\n    y = x + 0\n    s = y[0] * 2\n    print(y)\n    y += h(y)\n"),
            [true]
        );
        assert_eq!(
            owned("def f(x):\n    a, b = ops.zeros(2), x\n    a += 1\n    b += 1\n"),
            [true, false]
        );
    }

    #[test]
    fn paths_and_loops_meet() {
        assert_eq!(
            owned("def f(x, c):\n    y = x + 0\n    if c:\n        y = x\n    y += 1\n"),
            [false]
        );
        assert_eq!(
            owned(
                "def f(x, n):\n    y = x + 0\n    for i in range(n):\n        y += 1\n        z = y\n"
            ),
            [false]
        );
        assert_eq!(
            owned(
                "def f(x, n):\n    acc = ops.zeros(3)\n    for i in range(n):\n        acc += x[i]\n    return acc\n"
            ),
            [true]
        );
    }
}

//! Facts about how a function's statements use its names, for the checks that decide whether
//! compiling a closure's capture or an in-place update as a plain SSA value is exact:
//! where a name is read (and whether only as the callee of a call), and whether it is live
//! after a statement (backward liveness over the structured statements, with `break`,
//! `continue` and `return`).

use std::collections::HashMap;

use crate::ast::*;

/// How a function body (not counting nested function bodies) uses one name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Uses {
    /// Reads as the callee of a call: `g(...)`.
    pub calls: usize,
    /// Every other read: passed, stored, returned, compared, captured by a nested function.
    pub other: usize,
}

/// Calls `f(name, is_callee)` for every read of a name in `e`, in evaluation order. A nested
/// lambda's body counts as reads that are not calls (it captures them).
pub fn expr_reads(e: &Expr, f: &mut dyn FnMut(&Name, bool)) {
    anfora_ir::deep(|| expr_reads_inner(e, f))
}

fn expr_reads_inner(e: &Expr, f: &mut dyn FnMut(&Name, bool)) {
    match &e.kind {
        ExprKind::Name(n) => f(n, false),
        ExprKind::Literal(_) | ExprKind::Invalid => {}
        ExprKind::Tuple(items) | ExprKind::List(items) => {
            items.iter().for_each(|i| expr_reads(i, f));
        }
        ExprKind::Dict(items) => items.iter().for_each(|(_, v)| expr_reads(v, f)),
        ExprKind::BinOp { left, right, .. } => {
            expr_reads(left, f);
            expr_reads(right, f);
        }
        ExprKind::UnaryOp { operand, .. } | ExprKind::Starred(operand) => expr_reads(operand, f),
        ExprKind::BoolOp { values, .. } => values.iter().for_each(|v| expr_reads(v, f)),
        ExprKind::Compare {
            left, comparators, ..
        } => {
            expr_reads(left, f);
            comparators.iter().for_each(|c| expr_reads(c, f));
        }
        ExprKind::IfExp { test, body, orelse } => {
            expr_reads(test, f);
            expr_reads(body, f);
            expr_reads(orelse, f);
        }
        ExprKind::Call {
            func,
            args,
            keywords,
        } => {
            match &func.kind {
                ExprKind::Name(n) => f(n, true),
                _ => expr_reads(func, f),
            }
            args.iter().for_each(|a| expr_reads(a, f));
            keywords.iter().for_each(|k| expr_reads(&k.value, f));
        }
        ExprKind::Attribute { value, .. } => expr_reads(value, f),
        ExprKind::Subscript { value, index } => {
            expr_reads(value, f);
            expr_reads(index, f);
        }
        ExprKind::Slice { lower, upper, step } => {
            for part in [lower, upper, step].into_iter().flatten() {
                expr_reads(part, f);
            }
        }
        ExprKind::Lambda(def) => function_reads(def, f),
    }
}

/// The reads a nested function makes of names outside it when created (its defaults) or when
/// run (everything its body mentions, counted as captures, never as calls).
fn function_reads(def: &FunctionDef, f: &mut dyn FnMut(&Name, bool)) {
    for p in &def.params {
        if let Some(d) = &p.default {
            expr_reads(d, f);
        }
    }
    let mut capture = |n: &Name, _: bool| f(n, false);
    stmts_reads(&def.body, &mut capture);
}

/// Every name a nested function reads when it runs (captured or not: a superset of its free
/// variables).
pub fn function_captures(def: &FunctionDef, f: &mut dyn FnMut(&Name)) {
    stmts_reads(&def.body, &mut |n, _| f(n));
}

/// Every name read anywhere in `body`, nested functions included.
fn stmts_reads(body: &[Stmt], f: &mut dyn FnMut(&Name, bool)) {
    for s in body {
        stmt_reads(s, f);
        match &s.kind {
            StmtKind::For { body, .. } | StmtKind::While { body, .. } => stmts_reads(body, f),
            StmtKind::If { body, orelse, .. } => {
                stmts_reads(body, f);
                stmts_reads(orelse, f);
            }
            _ => {}
        }
    }
}

/// The reads of one statement itself (its expressions; a `def`'s defaults and captures; a
/// compound statement's header, not its body).
pub fn stmt_reads(s: &Stmt, f: &mut dyn FnMut(&Name, bool)) {
    match &s.kind {
        StmtKind::FunctionDef(def) => function_reads(def, f),
        StmtKind::Return(v) => {
            if let Some(v) = v {
                expr_reads(v, f);
            }
        }
        StmtKind::Assign { targets, value } => {
            expr_reads(value, f);
            targets.iter().for_each(|t| target_reads(t, f));
        }
        StmtKind::AugAssign { target, value, .. } => {
            match target {
                Target::Name(n, _) => f(n, false),
                other => target_reads(other, f),
            }
            expr_reads(value, f);
        }
        StmtKind::AttrAssign { object, value, .. } => {
            expr_reads(value, f);
            expr_reads(object, f);
        }
        StmtKind::For { iter, .. } => expr_reads(iter, f),
        StmtKind::While { test, .. } | StmtKind::If { test, .. } => expr_reads(test, f),
        StmtKind::Assert { test, msg } => {
            expr_reads(test, f);
            if let Some(m) = msg {
                expr_reads(m, f);
            }
        }
        StmtKind::Expr(e) => expr_reads(e, f),
        StmtKind::Declare(_)
        | StmtKind::Nonlocal(_)
        | StmtKind::Pass
        | StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Import(_)
        | StmtKind::MainGuard
        | StmtKind::Invalid => {}
    }
}

/// Item targets read the object and the index before the store.
fn target_reads(t: &Target, f: &mut dyn FnMut(&Name, bool)) {
    match t {
        Target::Tuple(items, _) => items.iter().for_each(|i| target_reads(i, f)),
        Target::Item { object, index, .. } => {
            expr_reads(object, f);
            expr_reads(index, f);
        }
        Target::Name(..) | Target::Starred(..) | Target::Invalid(_) => {}
    }
}

/// How `body` (a whole function body, with its nested statements but not nested functions'
/// bodies, whose reads count as `other`) uses each name.
pub fn uses(body: &[Stmt]) -> HashMap<Name, Uses> {
    let mut out: HashMap<Name, Uses> = HashMap::new();
    let mut count = |n: &Name, call: bool| {
        let u = out.entry(n.clone()).or_default();
        if call {
            u.calls += 1;
        } else {
            u.other += 1;
        }
    };
    stmts_reads(body, &mut count);
    out
}

/// The variable the nested function `child` is bound to where it is created: `def g` or
/// `g = lambda ...`, anywhere in `body`.
pub fn binding_name(body: &[Stmt], child: &std::rc::Rc<FunctionDef>) -> Option<Name> {
    body.iter().find_map(|s| match &s.kind {
        StmtKind::FunctionDef(d) if std::rc::Rc::ptr_eq(d, child) => Some(d.name.clone()),
        StmtKind::Assign { targets, value } => match (targets.as_slice(), &value.kind) {
            ([Target::Name(n, _)], ExprKind::Lambda(d)) if std::rc::Rc::ptr_eq(d, child) => {
                Some(n.clone())
            }
            _ => None,
        },
        StmtKind::For { body, .. } | StmtKind::While { body, .. } => binding_name(body, child),
        StmtKind::If { body, orelse, .. } => {
            binding_name(body, child).or_else(|| binding_name(orelse, child))
        }
        _ => None,
    })
}

/// Whether statement `s` binds `name` (as a whole: an item assignment does not).
fn binds(s: &Stmt, name: &Name) -> bool {
    match &s.kind {
        StmtKind::FunctionDef(def) => &def.name == name,
        StmtKind::Assign { targets, .. } => targets.iter().any(|t| target_binds(t, name)),
        StmtKind::AugAssign { target, .. } => target_binds(target, name),
        _ => false,
    }
}

pub fn target_binds(t: &Target, name: &Name) -> bool {
    match t {
        Target::Name(n, _) | Target::Starred(n, _) => n == name,
        Target::Tuple(items, _) => items.iter().any(|i| target_binds(i, name)),
        Target::Item { .. } | Target::Invalid(_) => false,
    }
}

fn reads(s: &Stmt, name: &Name) -> bool {
    let mut found = false;
    stmt_reads(s, &mut |n, _| found |= n == name);
    found
}

/// Liveness of one name: for every statement, whether the name may be read after the
/// statement (for a `for`, after its target is assigned) before it is bound again.
pub struct Liveness {
    name: Name,
    /// Keyed by the statement's span start.
    after: HashMap<u32, bool>,
}

#[derive(Clone, Copy)]
struct Exits {
    brk: bool,
    cont: bool,
}

impl Liveness {
    pub fn of(body: &[Stmt], name: &Name) -> Liveness {
        let mut l = Liveness {
            name: name.clone(),
            after: HashMap::new(),
        };
        let none = Exits {
            brk: false,
            cont: false,
        };
        l.stmts(body, false, none);
        l
    }

    /// Whether the name is live right after the statement starting at `at` (for a `for`,
    /// right after the target is assigned at the top of an iteration).
    pub fn live_after(&self, at: u32) -> bool {
        self.after.get(&at).copied().unwrap_or(true)
    }

    fn stmts(&mut self, body: &[Stmt], out: bool, exits: Exits) -> bool {
        body.iter()
            .rev()
            .fold(out, |live, s| self.stmt(s, live, exits))
    }

    fn stmt(&mut self, s: &Stmt, out: bool, exits: Exits) -> bool {
        anfora_ir::deep(|| self.stmt_inner(s, out, exits))
    }

    fn stmt_inner(&mut self, s: &Stmt, out: bool, exits: Exits) -> bool {
        let read = reads(s, &self.name);
        let live = match &s.kind {
            StmtKind::Return(_) => false,
            StmtKind::Break => exits.brk,
            StmtKind::Continue => exits.cont,
            StmtKind::If { body, orelse, .. } => {
                let t = self.stmts(body, out, exits);
                let f = self.stmts(orelse, out, exits);
                self.after.insert(s.span.start, out);
                return read || t || f;
            }
            StmtKind::While { body, .. } => {
                let head = self.fixpoint(out, |l, head| {
                    let inner = Exits {
                        brk: out,
                        cont: head,
                    };
                    let body_in = l.stmts(body, head, inner);
                    read || out || body_in
                });
                self.after.insert(s.span.start, out);
                return head;
            }
            StmtKind::For { target, body, .. } => {
                let assigns = target_binds(target, &self.name);
                let mut top = false;
                let head = self.fixpoint(out, |l, head| {
                    let inner = Exits {
                        brk: out,
                        cont: head,
                    };
                    top = l.stmts(body, head, inner);
                    out || (!assigns && top)
                });
                self.after.insert(s.span.start, top);
                return read || head;
            }
            _ if binds(s, &self.name) => false,
            _ => out,
        };
        // Assignments are keyed by their end (where they take effect), `def`s by their start.
        self.after.insert(s.span.start, out);
        self.after.insert(s.span.end, out);
        read || live
    }

    /// Iterates a loop's liveness at its head from "dead" until it no longer changes.
    fn fixpoint(&mut self, out: bool, mut step: impl FnMut(&mut Self, bool) -> bool) -> bool {
        let mut head = out;
        loop {
            let next = step(self, head);
            if next == head {
                return head;
            }
            head = next;
        }
    }
}

/// What [`calls`] calls for each call: the callee, the arguments and the keywords.
pub type OnCall<'a> = dyn FnMut(&Expr, &[Expr], &[Keyword]) + 'a;

/// Calls `f(callee, args, keywords)` for every call in `body`, nested statements and
/// expressions included (not the bodies of nested functions, which are functions of their
/// own).
pub fn calls(body: &[Stmt], f: &mut OnCall) {
    let mut visit = |e: &Expr| expr_calls(e, f);
    for s in body {
        stmt_exprs(s, &mut visit);
    }
}

/// Calls `f` for every lambda in `body`'s expressions (not inside nested functions' bodies,
/// nor lambdas inside lambdas).
pub fn lambdas(body: &[Stmt], f: &mut dyn FnMut(&std::rc::Rc<FunctionDef>)) {
    fn visit(e: &Expr, f: &mut dyn FnMut(&std::rc::Rc<FunctionDef>)) {
        anfora_ir::deep(|| {
            if let ExprKind::Lambda(d) = &e.kind {
                f(d);
            }
            expr_children(e, &mut |c| visit(c, f));
        })
    }
    for s in body {
        stmt_exprs(s, &mut |e| visit(e, f));
    }
}

fn expr_calls(e: &Expr, f: &mut OnCall) {
    anfora_ir::deep(|| {
        if let ExprKind::Call {
            func,
            args,
            keywords,
        } = &e.kind
        {
            f(func, args, keywords);
        }
        expr_children(e, &mut |c| expr_calls(c, f));
    })
}

/// The expressions of an assignment target (the object and index of its items).
fn target_exprs(t: &Target, f: &mut dyn FnMut(&Expr)) {
    match t {
        Target::Item { object, index, .. } => {
            f(object);
            f(index);
        }
        Target::Tuple(items, _) => items.iter().for_each(|i| target_exprs(i, f)),
        Target::Name(..) | Target::Starred(..) | Target::Invalid(_) => {}
    }
}

/// The expressions of statement `s`, and those of the statements nested in it.
fn stmt_exprs(s: &Stmt, f: &mut dyn FnMut(&Expr)) {
    let target = target_exprs;
    match &s.kind {
        StmtKind::Return(Some(e)) | StmtKind::Expr(e) => f(e),
        StmtKind::Assign { targets, value } => {
            f(value);
            targets.iter().for_each(|t| target(t, f));
        }
        StmtKind::AugAssign {
            target: t, value, ..
        } => {
            target(t, f);
            f(value);
        }
        StmtKind::AttrAssign { object, value, .. } => {
            f(value);
            f(object);
        }
        StmtKind::Assert { test, msg } => {
            f(test);
            if let Some(m) = msg {
                f(m);
            }
        }
        StmtKind::If { test, body, orelse } => {
            f(test);
            body.iter().chain(orelse).for_each(|s| stmt_exprs(s, f));
        }
        StmtKind::While { test, body } => {
            f(test);
            body.iter().for_each(|s| stmt_exprs(s, f));
        }
        StmtKind::For { iter, body, .. } => {
            f(iter);
            body.iter().for_each(|s| stmt_exprs(s, f));
        }
        _ => {}
    }
}

/// The direct subexpressions of `e` (a lambda's defaults, not its body).
fn expr_children(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    match &e.kind {
        ExprKind::Name(_) | ExprKind::Literal(_) | ExprKind::Invalid => {}
        ExprKind::Tuple(items) | ExprKind::List(items) => items.iter().for_each(f),
        ExprKind::Dict(items) => items.iter().for_each(|(_, v)| f(v)),
        ExprKind::BinOp { left, right, .. } => {
            f(left);
            f(right);
        }
        ExprKind::UnaryOp { operand, .. } | ExprKind::Starred(operand) => f(operand),
        ExprKind::BoolOp { values, .. } => values.iter().for_each(f),
        ExprKind::Compare {
            left, comparators, ..
        } => {
            f(left);
            comparators.iter().for_each(f);
        }
        ExprKind::IfExp { test, body, orelse } => {
            f(test);
            f(body);
            f(orelse);
        }
        ExprKind::Call {
            func,
            args,
            keywords,
        } => {
            f(func);
            args.iter().for_each(&mut *f);
            keywords.iter().for_each(|k| f(&k.value));
        }
        ExprKind::Attribute { value, .. } => f(value),
        ExprKind::Subscript { value, index } => {
            f(value);
            f(index);
        }
        ExprKind::Slice { lower, upper, step } => {
            [lower, upper, step]
                .into_iter()
                .flatten()
                .for_each(|p| f(p));
        }
        ExprKind::Lambda(def) => def
            .params
            .iter()
            .filter_map(|p| p.default.as_ref())
            .for_each(f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn function(src: &str) -> std::rc::Rc<FunctionDef> {
        crate::py_ast::first_function(src)
    }

    /// The statement starting on 1-based `line` (searching nested bodies).
    fn at_line(src: &str, line: usize) -> u32 {
        let start: usize = src.lines().take(line - 1).map(|l| l.len() + 1).sum();
        let indent = src.lines().nth(line - 1).unwrap().len()
            - src.lines().nth(line - 1).unwrap().trim_start().len();
        (start + indent) as u32
    }

    #[test]
    fn liveness_sees_reads_before_rebinding_through_loops_and_branches() {
        let src = "def f(n):\n    g = 1\n    for i in range(n):\n        g = 2\n        t = g\n    if n:\n        return g\n    g = 3\n    return 0\n";
        let f = function(src);
        let live = Liveness::of(&f.body, &Arc::from("g"));
        // After `g = 1`: the loop may not run, and `return g` reads it.
        assert!(live.live_after(at_line(src, 2)));
        // After the loop target is assigned, `g = 2` comes first.
        assert!(!live.live_after(at_line(src, 3)));
        // After `g = 3` nothing reads it.
        assert!(!live.live_after(at_line(src, 8)));
    }

    #[test]
    fn liveness_of_while_loops_follows_the_back_edge() {
        let src = "def f(n):\n    j = 0\n    while j < n:\n        h = 1\n        j += 1\n        n = n + h\n    return n\n";
        let f = function(src);
        let live = Liveness::of(&f.body, &Arc::from("h"));
        assert!(live.live_after(at_line(src, 5)));
        let src2 =
            "def f(n):\n    j = 0\n    while j < n:\n        j += 1\n        h = 1\n    return h\n";
        let f2 = function(src2);
        let live2 = Liveness::of(&f2.body, &Arc::from("h"));
        // `h` is read after the loop, and `j += 1` may be the last statement of the body.
        assert!(!live2.live_after(at_line(src2, 4)));
        assert!(live2.live_after(at_line(src2, 5)));
    }

    #[test]
    fn uses_tell_calls_from_other_reads() {
        let f = function(
            "def f(x):\n    g = lambda: x\n    y = g() + g()\n    h = (g,)\n    return y\n",
        );
        let u = uses(&f.body);
        assert_eq!(u[&Arc::from("g")], Uses { calls: 2, other: 1 });
        assert_eq!(u[&Arc::from("x")], Uses { calls: 0, other: 1 });
    }

    #[test]
    fn binding_name_finds_defs_and_lambdas_in_nested_statements() {
        let f = function(
            "def f(n):\n    for i in range(n):\n        g = lambda: i\n    def h():\n        return 1\n    return 0\n",
        );
        let StmtKind::For { body, .. } = &f.body[0].kind else {
            panic!()
        };
        let StmtKind::Assign { value, .. } = &body[0].kind else {
            panic!()
        };
        let ExprKind::Lambda(lam) = &value.kind else {
            panic!()
        };
        assert_eq!(binding_name(&f.body, lam).as_deref(), Some("g"));
        let StmtKind::FunctionDef(h) = &f.body[1].kind else {
            panic!()
        };
        assert_eq!(binding_name(&f.body, h).as_deref(), Some("h"));
    }
}

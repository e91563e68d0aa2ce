//! Closures that read variables their creator assigns later, or assign them (`nonlocal`).
//!
//! Python reads a captured variable when the closure runs, from a cell the enclosing function
//! shares with it. A closure that is only ever called by its name, in the function that
//! creates it, can do without the cell: every call passes the variable's current value, and a
//! closure that assigns it (`nonlocal`) returns the new value with its result, which the call
//! writes back. Such a closure gets one keyword-only parameter per variable; the call sites
//! pass them and unpack the result. That is exactly Python's late binding, since no one but
//! the enclosing function can call the closure, and nothing else can assign the variable
//! between the call's start and its end.
//!
//! A closure that is passed, stored, returned or called from another nested function keeps
//! its by-value capture, checked by the late-binding rule (E0202); `nonlocal` in one is
//! refused (E0104).

use std::collections::HashMap;
use std::rc::Rc;

use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, NodeId, Prim, Span};

use super::Lowerer;
use crate::ast::*;
use crate::codes;
use crate::flow::{self, Liveness};
use crate::scope::ScopeInfo;

/// How a nested function is called with its variables passed.
pub(super) struct Conversion {
    /// The variable the function is bound to.
    pub var: Name,
    /// The variables of the enclosing function passed at each call (keyword-only parameters).
    pub hidden: Vec<Name>,
    /// Those it assigns (`nonlocal`): its result is `(value, *outs)`.
    pub outs: Vec<Name>,
    /// The function with the extra parameters.
    pub def: Rc<FunctionDef>,
    /// The function as written (its statement in the enclosing function's body).
    pub original: Rc<FunctionDef>,
}

impl Lowerer<'_> {
    /// Decides, for each function nested in the current one, whether it is converted; reports
    /// `nonlocal` statements that cannot be.
    pub(super) fn plan_conversions(
        &mut self,
        cells: &[Name],
    ) -> HashMap<*const FunctionDef, Rc<Conversion>> {
        let def = self.fun().def.clone();
        let uses = flow::uses(&def.body);
        let mut plan = HashMap::new();
        for (child, var) in nested_functions(&def.body) {
            let child_info = ScopeInfo::of(&child);
            let mut outs = self.nonlocal_outs(&child_info);
            // Variables in cells are shared through them, not passed.
            outs.retain(|n| !cells.contains(n));
            let direct = uses.get(&var).is_none_or(|u| u.other == 0)
                && self
                    .fun()
                    .info
                    .sites
                    .get(&var)
                    .is_some_and(|s| s.len() == 1);
            let mut late = if direct {
                self.late_bound(&child, &child_info, &var)
            } else {
                Vec::new()
            };
            late.retain(|n| !cells.contains(n));
            if !direct && !outs.is_empty() {
                self.nonlocal_refused(&child_info, &var);
                continue;
            }
            if late.is_empty() && outs.is_empty() {
                continue;
            }
            let mut hidden = late;
            for o in &outs {
                if !hidden.contains(o) {
                    hidden.push(o.clone());
                }
            }
            let mut converted = (*child).clone();
            converted.params.extend(hidden.iter().map(|n| ParamDef {
                name: n.clone(),
                kind: ParamKind::KeywordOnly,
                default: None,
                span: child.head_span,
            }));
            let conv = Conversion {
                var,
                hidden,
                outs,
                def: Rc::new(converted),
                original: child.clone(),
            };
            plan.insert(Rc::as_ptr(&child), Rc::new(conv));
        }
        plan
    }

    /// The variables of the current function that `child`, bound to `var`, reads and that a
    /// by-value capture would get wrong.
    fn late_bound(&self, child: &FunctionDef, child_info: &ScopeInfo, var: &Name) -> Vec<Name> {
        let info = &self.fun().info;
        let mut names = Vec::new();
        flow::function_captures(child, &mut |n| {
            let own = child_info.locals.contains(n) && !is_nonlocal(child_info, n);
            if info.locals.contains(n) && !own && !names.contains(n) {
                names.push(n.clone());
            }
        });
        let body = &self.fun().def.body;
        names.retain(|n| {
            !info.capture_is_exact(n, child.span.start) && !dead_at_sites(body, info, var, n, child)
        });
        names
    }

    /// The `nonlocal` names of a nested function, which must be variables of the current one.
    fn nonlocal_outs(&mut self, child_info: &ScopeInfo) -> Vec<Name> {
        let mut outs = Vec::new();
        for (n, span) in child_info.nonlocals.clone() {
            if self.fun().info.locals.contains(&n) {
                if !outs.contains(&n) {
                    outs.push(n);
                }
                continue;
            }
            let outer = self
                .fns
                .iter()
                .rev()
                .skip(1)
                .any(|f| f.info.locals.contains(&n));
            let (message, hint) = if outer {
                (
                    format!("`nonlocal {n}` names a variable two or more functions out"),
                    "declare it `nonlocal` in each function in between, or pass it as an argument",
                )
            } else {
                (
                    format!("no binding for nonlocal '{n}' found"),
                    "assign the variable in the enclosing function",
                )
            };
            self.error(
                Diagnostic::error(codes::GLOBAL, message, span)
                    .with_label("declared here")
                    .with_hint(hint),
            );
        }
        outs
    }

    fn nonlocal_refused(&mut self, child_info: &ScopeInfo, var: &Name) {
        let Some((n, span)) = child_info.nonlocals.first().cloned() else {
            return;
        };
        self.error(
            Diagnostic::error(
                codes::GLOBAL,
                format!("`nonlocal {n}` in '{var}', which is used other than by calling it by name"),
                span,
            )
            .with_label("declared here")
            .with_hint(format!(
                "anfora supports `nonlocal` in a nested function that its enclosing function only calls (`{var}(...)`): not passed, stored, returned or called from another nested function; return the new value instead"
            )),
        );
    }

    /// The conversion of the nested function bound to `var` in the current function, if any.
    pub(super) fn conversion_of_var(&self, var: &Name) -> Option<Rc<Conversion>> {
        self.fun().convs.values().find(|c| &c.var == var).cloned()
    }

    /// A call of a converted function by its name: the variables are passed by keyword, and
    /// those it assigns are written back from its result.
    pub(super) fn converted_call(
        &mut self,
        conv: &Conversion,
        callee: NodeId,
        args: &[Expr],
        keywords: &[Keyword],
        span: Span,
    ) -> NodeId {
        let r = if super::expr::unpacks(keywords) {
            self.dict_call(callee, args, keywords, &conv.hidden, span)
        } else if args.iter().any(|a| matches!(a.kind, ExprKind::Starred(_))) {
            self.star_call(callee, args, keywords, &conv.hidden, span)
        } else {
            let mut inputs = vec![callee];
            inputs.extend(args.iter().map(|a| self.value(a)));
            let mut names: Vec<Const> = keywords
                .iter()
                .map(|k| Const::Str(k.name.clone()))
                .collect();
            for k in keywords {
                let v = self.value(&k.value);
                inputs.push(v);
            }
            let b = self.cur_block();
            for n in &conv.hidden {
                names.push(Const::Str(n.clone()));
                // Unassigned is passed as it is: the closure raises only if it reads it.
                let v = self.read(b, n);
                inputs.push(v);
            }
            let names = self.konst(Const::tuple(names));
            inputs.insert(1, names);
            let call_kw = self.konst(Const::Prim(Prim::CallKw));
            inputs.insert(0, call_kw);
            self.apply(inputs, span)
        };
        if conv.outs.is_empty() {
            return r;
        }
        let value = self.item(r, 0, span);
        for (k, n) in conv.outs.iter().enumerate() {
            let v = self.item(r, k + 1, span);
            self.maybe_unbound.insert(v);
            self.bind(n, v, span);
        }
        value
    }

    pub(super) fn item(&mut self, t: NodeId, i: usize, span: Span) -> NodeId {
        let k = self.konst(Const::Int(i as i64));
        self.prim(Prim::TupleGetItem, &[t, k], span)
    }

    /// The result of the current function: `v`, with the variables it assigns for its caller
    /// when it is a converted function.
    pub(super) fn with_outs(&mut self, v: NodeId, span: Span) -> NodeId {
        let outs: Vec<Name> = self
            .fun()
            .conv
            .as_ref()
            .map_or(Vec::new(), |c| c.outs.clone());
        // A function that writes its arguments back (a global function or a method, never
        // converted) returns `(v, objects)` (`write_back`), the pair a gradient's `has_aux`
        // takes apart.
        let write_back = self.fun().write_back.clone();
        if !write_back.is_empty() {
            debug_assert!(
                outs.is_empty(),
                "a converted function writing arguments back"
            );
            let b = self.cur_block();
            let objects: Vec<NodeId> = (write_back.iter())
                .map(|n| self.read(b, &crate::ownership::caller_object(n)))
                .collect();
            let objects = self.prim(Prim::MakeTuple, &objects, span);
            return self.prim(Prim::MakeTuple, &[v, objects], span);
        }
        if outs.is_empty() {
            return v;
        }
        let b = self.cur_block();
        let mut items = vec![v];
        for n in &outs {
            items.push(self.read(b, n));
        }
        self.prim(Prim::MakeTuple, &items, span)
    }
}

fn is_nonlocal(info: &ScopeInfo, n: &Name) -> bool {
    info.nonlocals.iter().any(|(m, _)| m == n)
}

/// The functions nested directly in `body` (not in nested functions) that are bound to a
/// variable where they are created: `def g` and `g = lambda ...`.
fn nested_functions(body: &[Stmt]) -> Vec<(Rc<FunctionDef>, Name)> {
    let mut out = Vec::new();
    collect_nested(body, &mut out);
    out
}

fn collect_nested(body: &[Stmt], out: &mut Vec<(Rc<FunctionDef>, Name)>) {
    for s in body {
        match &s.kind {
            StmtKind::FunctionDef(d) => out.push((d.clone(), d.name.clone())),
            StmtKind::Assign { targets, value } => {
                if let ([Target::Name(n, _)], ExprKind::Lambda(d)) =
                    (targets.as_slice(), &value.kind)
                {
                    out.push((d.clone(), n.clone()));
                }
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } => collect_nested(body, out),
            StmtKind::If { body, orelse, .. } => {
                collect_nested(body, out);
                collect_nested(orelse, out);
            }
            _ => {}
        }
    }
}

/// Whether `var`, which holds the nested function `child` and is only ever called, is dead
/// after every assignment of `name` that may run after `child` is created: then no call can
/// see the new value, and capturing the value at creation is exact.
pub(super) fn dead_at_sites(
    body: &[Stmt],
    info: &ScopeInfo,
    var: &Name,
    name: &Name,
    child: &FunctionDef,
) -> bool {
    let live = Liveness::of(body, var);
    info.later_sites(name, child.span.start)
        .all(|at| !live.live_after(at))
}

//! Reads of names: locals (through the SSA construction), variables of enclosing functions,
//! and globals, which the resolve stage binds.

use std::rc::Rc;

use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, NodeId, Prim, Span};

use super::{IterKind, Lowerer, Val};
use crate::ast::*;
use crate::ownership::CallKind;
use crate::{Resolved, codes};

impl Lowerer<'_> {
    /// The value of a name, as a node (diagnosing namespaces and iterators used as values).
    pub(super) fn load(&mut self, name: &Name, span: Span) -> NodeId {
        match self.load_name(name, span) {
            Val::Node(n) => n,
            other => self.require_node(other, span),
        }
    }

    pub(super) fn load_name(&mut self, name: &Name, span: Span) -> Val {
        if let Some((cell, free)) = self.cell_of(name) {
            return Val::Node(self.read_cell(cell, free, name, span));
        }
        let depth = self.fns.len() - 1;
        if self.fns[depth].info.locals.contains(name) {
            let b = self.cur_block();
            let v = self.read(b, name);
            // A variable a converted closure receives is its creator's (a free variable).
            let passed = self.fns[depth]
                .conv
                .as_ref()
                .is_some_and(|c| c.hidden.contains(name));
            return Val::Node(self.check_bound(v, name, passed, span));
        }
        for e in (0..depth).rev() {
            if !self.fns[e].info.locals.contains(name) {
                continue;
            }
            let child = Rc::as_ptr(&self.fns[e + 1].def);
            let child_start = self.fns[e + 1].def.span.start;
            let info = &self.fns[e].info;
            // A name bound only by a `def`: the function itself (recursion) or a sibling
            // defined right after (mutual recursion) is the graph, whatever runs when.
            if let Some(d) = info.sole_def(name)
                && (d == child || info.adjacent_defs(child, d))
            {
                let g = self.fns[e].nested[&d];
                return Val::Node(self.konst_at(Const::Graph(g), span));
            }
            if info.capture_is_exact(name, child_start)
                || (depth == e + 1 && self.closure_dead_at_sites(e, name))
            {
                let b = self.fns[e]
                    .current
                    .expect("enclosing function paused in a block");
                let v = self.read(b, name);
                return Val::Node(self.check_bound(v, name, true, span));
            }
            let child_def = self.fns[e + 1].def.clone();
            let what = if child_def.is_lambda {
                "a lambda".to_string()
            } else {
                format!("function '{}'", child_def.name)
            };
            self.error(
                Diagnostic::error(
                    codes::LATE_BINDING,
                    format!(
                        "{what} reads '{name}', which its enclosing function assigns after {} is created",
                        if child_def.is_lambda { "the lambda" } else { "it" }
                    ),
                    span,
                )
                .with_label("captured here")
                .with_related(child_def.head_span, "defined here")
                .with_hint(format!(
                    "Python reads '{name}' when the inner function runs, anfora when it is created; pass '{name}' as an argument (or assign it only before the definition)"
                )),
            );
            return Val::Node(self.none());
        }
        self.load_global(name, span)
    }

    /// The value of a variable read at `span` (its own or a captured one): `v`, checked for
    /// being unassigned where it may be.
    fn check_bound(&mut self, v: NodeId, name: &Name, free: bool, span: Span) -> NodeId {
        // A bound `self` gets a node per use, so that errors point at the use.
        if let Some(c @ Const::HostObject(_)) = self.fe.module.constant(v) {
            let c = c.clone();
            return self.konst_at(c, span);
        }
        let maybe = self.phi_block.contains_key(&v)
            || self.maybe_unbound.contains(&v)
            || matches!(self.fe.module.constant(v), Some(Const::Unbound));
        if !maybe || name.starts_with('.') {
            return v;
        }
        let n = self.konst(Const::Str(name.clone()));
        let f = self.konst(Const::Bool(free));
        let c = self.prim(Prim::CheckBound, &[v, n, f], span);
        self.checks.push(c);
        c
    }

    pub(super) fn is_local_anywhere(&self, name: &Name) -> bool {
        self.fns.iter().any(|f| f.info.locals.contains(name))
    }

    /// A global name: a `Symbol` the resolve stage replaces, or one of the iterator builtins.
    fn load_global(&mut self, name: &Name, span: Span) -> Val {
        if let Some(kind) = self.builtin_iterator(name) {
            return Val::Iter(kind);
        }
        Val::Node(self.konst_at(
            Const::Symbol {
                scope: self.scope.0,
                name: name.clone(),
            },
            span,
        ))
    }

    /// The iterator builtin (`enumerate`, `zip`) `name` stands for here, if any.
    pub(super) fn builtin_iterator(&mut self, name: &Name) -> Option<IterKind> {
        let kind = match &**name {
            "enumerate" => IterKind::Enumerate,
            "zip" => IterKind::Zip,
            _ => return None,
        };
        self.is_builtin(name).then_some(kind)
    }

    /// Whether `name` here means the Python builtin (no local or global shadows it). Only the
    /// builtins that change how code is lowered ask this.
    pub(super) fn is_builtin(&mut self, name: &Name) -> bool {
        !self.is_local_anywhere(name)
            && matches!(
                self.resolver.resolve_global(self.scope, name),
                Resolved::Unknown
            )
    }

    pub(super) fn require_node(&mut self, v: Val, span: Span) -> NodeId {
        match v {
            Val::Node(n) => n,
            Val::Iter(kind) => {
                self.iterator_misuse(kind, span);
                self.none()
            }
        }
    }

    fn iterator_misuse(&mut self, kind: IterKind, span: Span) {
        let name = kind.name();
        self.error(
            Diagnostic::error(
                codes::ITERATOR,
                format!(
                    "`{name}` is only supported in a `for` loop header or inside tuple()/list()"
                ),
                span,
            )
            .with_label("iterator used here")
            .with_hint(format!(
                "write `for ... in {name}(...)`, or `tuple({name}(...))` to get the items"
            )),
        );
    }
}

impl Lowerer<'_> {
    /// Whether a call of `func` computes a fresh value and keeps none of its arguments: a
    /// primitive (through a global name, `ops.name`, `anfora.name` or a tensor method) that
    /// does not return a view. A user function may return its argument, so it is not.
    pub(super) fn call_kind(&mut self, func: &Expr) -> CallKind {
        // An anfora function's result is a tensor; a Python builtin's is not (but `list(x)`).
        let of_prim = |p: Prim, anfora: bool| match (p.views(), p.is_type()) {
            (false, _) => CallKind::Fresh { tensor: anfora },
            // `list(x)`, `tuple(x)`: a new container of x's items.
            (true, true) => CallKind::Container {
                list: p == Prim::ListType,
            },
            (true, false) => CallKind::Other,
        };
        match &func.kind {
            ExprKind::Name(n) => match self.global_prim(n) {
                Some((p, anfora)) => of_prim(p, anfora),
                None => match self.write_back_callee(func) {
                    Some((_, writes)) => CallKind::Writes(writes),
                    None => CallKind::Other,
                },
            },
            ExprKind::Attribute { value, attr } => {
                let ExprKind::Name(base) = &value.kind else {
                    return CallKind::Other;
                };
                if self.is_local_anywhere(base) {
                    // A method of a local tensor; a method's `self` is a Python object whose
                    // methods may return anything (and update their arguments).
                    let is_self = self.fns.iter().any(|f| f.self_name.as_ref() == Some(base));
                    if is_self && let Some((_, writes)) = self.write_back_callee(func) {
                        return CallKind::Writes(writes);
                    }
                    let method = anfora_ops::value::Method::from_name(attr).filter(|_| !is_self);
                    return match method {
                        Some(m) if !m.is_view() => CallKind::Fresh {
                            tensor: m != anfora_ops::value::Method::Item,
                        },
                        _ => CallKind::Other,
                    };
                }
                match self.named_prim(func) {
                    Some(p) => of_prim(p, true),
                    None => CallKind::Other,
                }
            }
            // `grad(f)(x)` of a function that updates `x` in place (`ssa/write_back.rs`).
            ExprKind::Call { .. } => match self.grad_write_back(func) {
                Some((_, _, writes)) => CallKind::Writes(writes),
                None => CallKind::Other,
            },
            _ => CallKind::Other,
        }
    }

    /// The primitive `func` names: a global name, or an attribute of an imported namespace
    /// (`anfora.grad`).
    pub(super) fn named_prim(&mut self, func: &Expr) -> Option<Prim> {
        match &func.kind {
            ExprKind::Name(n) => self.global_prim(n).map(|(p, _)| p),
            ExprKind::Attribute { value, attr } => {
                let ExprKind::Name(base) = &value.kind else {
                    return None;
                };
                if self.is_local_anywhere(base) {
                    return None;
                }
                match self.resolver.resolve_global(self.scope, base) {
                    Resolved::Namespace(ns) => match crate::namespace_attr(ns, attr) {
                        Some(Resolved::Value(Const::Prim(p))) => Some(p),
                        _ => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Whether the function nested in `fns[e]` that reads `name` can take its value when it
    /// is created although `fns[e]` assigns `name` again later: the function is bound to a
    /// variable that is only ever called (never passed, stored or captured), and that
    /// variable is dead after every later assignment of `name`, so no call can see the new
    /// value.
    fn closure_dead_at_sites(&self, e: usize, name: &Name) -> bool {
        let outer = &self.fns[e];
        let inner = &self.fns[e + 1];
        let child = inner.conv.as_ref().map_or(&inner.def, |c| &c.original);
        let Some(var) = crate::flow::binding_name(&outer.def.body, child) else {
            return false;
        };
        let uses = crate::flow::uses(&outer.def.body);
        if uses.get(&var).is_some_and(|u| u.other > 0) {
            return false;
        }
        super::closures::dead_at_sites(&outer.def.body, &outer.info, &var, name, child)
    }

    /// The primitive a global name stands for, and whether it is one imported from anfora
    /// (else a Python builtin).
    fn global_prim(&mut self, name: &Name) -> Option<(Prim, bool)> {
        if self.is_local_anywhere(name) {
            return None;
        }
        match self.resolver.resolve_global(self.scope, name) {
            Resolved::Value(Const::Prim(p)) => Some((p, true)),
            Resolved::Unknown => Prim::builtin(name).map(|p| (p, false)),
            _ => None,
        }
    }
}

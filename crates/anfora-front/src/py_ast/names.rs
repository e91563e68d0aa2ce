//! The names a statement or target binds: a refused construct's names are still declared, so
//! that their uses do not add "not defined" errors to the real one.

use std::sync::Arc;

use ruff_python_ast as ra;

use crate::ast::Name;

/// Names an assignment target binds.
pub(super) fn target_names(e: &ra::Expr, out: &mut Vec<Name>) {
    match e {
        ra::Expr::Name(n) => out.push(Arc::from(n.id.as_str())),
        ra::Expr::Tuple(t) => t.elts.iter().for_each(|e| target_names(e, out)),
        ra::Expr::List(l) => l.elts.iter().for_each(|e| target_names(e, out)),
        ra::Expr::Starred(s) => target_names(&s.value, out),
        _ => {}
    }
}

/// Names a statement binds in its function, nested blocks included.
pub(super) fn bound_names(s: &ra::Stmt, out: &mut Vec<Name>) {
    let body = |b: &[ra::Stmt], out: &mut Vec<Name>| b.iter().for_each(|s| bound_names(s, out));
    match s {
        ra::Stmt::FunctionDef(f) => out.push(Arc::from(f.name.as_str())),
        ra::Stmt::ClassDef(c) => out.push(Arc::from(c.name.as_str())),
        ra::Stmt::Assign(a) => a.targets.iter().for_each(|t| target_names(t, out)),
        ra::Stmt::AugAssign(a) => target_names(&a.target, out),
        ra::Stmt::AnnAssign(a) => target_names(&a.target, out),
        ra::Stmt::For(f) => {
            target_names(&f.target, out);
            body(&f.body, out);
            body(&f.orelse, out);
        }
        ra::Stmt::While(w) => {
            body(&w.body, out);
            body(&w.orelse, out);
        }
        ra::Stmt::If(i) => {
            body(&i.body, out);
            i.elif_else_clauses.iter().for_each(|c| body(&c.body, out));
        }
        ra::Stmt::With(w) => {
            for item in &w.items {
                if let Some(v) = &item.optional_vars {
                    target_names(v, out);
                }
            }
            body(&w.body, out);
        }
        ra::Stmt::Try(t) => {
            body(&t.body, out);
            for h in &t.handlers {
                let ra::ExceptHandler::ExceptHandler(h) = h;
                if let Some(n) = &h.name {
                    out.push(Arc::from(n.as_str()));
                }
                body(&h.body, out);
            }
            body(&t.orelse, out);
            body(&t.finalbody, out);
        }
        ra::Stmt::Import(i) => i.names.iter().for_each(|a| {
            let n = a.asname.as_ref().unwrap_or(&a.name).as_str();
            out.push(Arc::from(n.split('.').next().unwrap_or(n)));
        }),
        ra::Stmt::ImportFrom(i) => i
            .names
            .iter()
            .for_each(|a| out.push(Arc::from(a.asname.as_ref().unwrap_or(&a.name).as_str()))),
        _ => {}
    }
}

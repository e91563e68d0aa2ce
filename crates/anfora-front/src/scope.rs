//! Per-function scope facts the lowering needs: which names are local (assigned anywhere in the
//! function, as Python decides), where each is assigned, the loops, and the position of every
//! nested `def` in its statement list.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use anfora_ir::Span;

use crate::ast::*;

/// One place a local name is assigned.
#[derive(Clone, Debug)]
pub struct Site {
    /// Byte offset where the binding takes effect: the end of an assignment statement (its
    /// right side runs first), the start of a `def` or `for`, the function start for parameters.
    pub at: u32,
    /// The `def` statement that binds the name, if that is how it is assigned.
    pub def: Option<*const FunctionDef>,
}

#[derive(Debug, Default)]
pub struct ScopeInfo {
    pub locals: HashSet<Name>,
    pub sites: HashMap<Name, Vec<Site>>,
    /// Byte ranges of the `for`/`while` statements of this function (not of nested ones).
    pub loops: Vec<(u32, u32)>,
    /// The `def` statements of this function: statement list id and index in it.
    pub def_pos: HashMap<*const FunctionDef, (usize, usize)>,
    /// For each statement list, which of its statements are `def`s.
    pub lists: Vec<Vec<bool>>,
    /// Nested `def`s in source order.
    pub nested_defs: Vec<Rc<FunctionDef>>,
    /// The names of `nonlocal` statements, with where each is declared (anywhere in the
    /// function: Python's rule applies to the whole body).
    pub nonlocals: Vec<(Name, Span)>,
    /// Item assignments (`x[i] = v`) by the variable they rebind; they do not make it local.
    item_sites: Vec<(Name, u32)>,
}

impl ScopeInfo {
    pub fn of(def: &FunctionDef) -> ScopeInfo {
        let mut info = ScopeInfo::default();
        for p in &def.params {
            info.add(&p.name, def.span.start, None);
        }
        info.stmts(&def.body);
        for (name, at) in std::mem::take(&mut info.item_sites) {
            if info.locals.contains(&name) {
                info.sites
                    .entry(name)
                    .or_default()
                    .push(Site { at, def: None });
            }
        }
        info
    }

    fn add(&mut self, name: &Name, start: u32, def: Option<*const FunctionDef>) {
        self.locals.insert(name.clone());
        self.sites
            .entry(name.clone())
            .or_default()
            .push(Site { at: start, def });
    }

    fn target(&mut self, t: &Target, start: u32) {
        let mut names = Vec::new();
        t.names(&mut names);
        for (n, _) in names {
            self.add(&n, start, None);
        }
        t.item_roots(&mut |n| self.item_sites.push((n.clone(), start)));
    }

    fn stmts(&mut self, body: &[Stmt]) {
        anfora_ir::deep(|| self.stmts_inner(body))
    }

    fn stmts_inner(&mut self, body: &[Stmt]) {
        let list = self.lists.len();
        self.lists.push(
            body.iter()
                .map(|s| matches!(s.kind, StmtKind::FunctionDef(_)))
                .collect(),
        );
        for (i, s) in body.iter().enumerate() {
            let start = s.span.start;
            match &s.kind {
                StmtKind::FunctionDef(f) => {
                    let ptr = Rc::as_ptr(f);
                    self.add(&f.name, start, Some(ptr));
                    self.def_pos.insert(ptr, (list, i));
                    self.nested_defs.push(f.clone());
                }
                StmtKind::Assign { targets, .. } => {
                    for t in targets {
                        self.target(t, s.span.end);
                    }
                }
                StmtKind::AugAssign { target, .. } => self.target(target, s.span.end),
                StmtKind::Declare(n) => {
                    self.locals.insert(n.clone());
                }
                StmtKind::Nonlocal(names) => {
                    self.nonlocals.extend(names.iter().cloned());
                }
                StmtKind::For { target, body, .. } => {
                    self.loops.push((s.span.start, s.span.end));
                    self.target(target, start);
                    self.stmts(body);
                }
                StmtKind::While { body, .. } => {
                    self.loops.push((s.span.start, s.span.end));
                    self.stmts(body);
                }
                StmtKind::If { body, orelse, .. } => {
                    self.stmts(body);
                    self.stmts(orelse);
                }
                StmtKind::Import(names) => {
                    for n in names {
                        self.add(&n.bound, start, None);
                    }
                }
                StmtKind::Return(_)
                | StmtKind::AttrAssign { .. }
                | StmtKind::Assert { .. }
                | StmtKind::Expr(_)
                | StmtKind::Pass
                | StmtKind::Break
                | StmtKind::Continue
                | StmtKind::MainGuard
                | StmtKind::Invalid => {}
            }
        }
    }

    /// Whether a nested function starting at `child` may capture local `name` by value without
    /// differing from Python's late binding: no assignment of `name` may run after the nested
    /// function is created. That holds if every assignment is textually before it and none is
    /// inside a loop that also contains it.
    pub fn capture_is_exact(&self, name: &Name, child: u32) -> bool {
        let Some(sites) = self.sites.get(name) else {
            return true;
        };
        let loops: Vec<&(u32, u32)> = self
            .loops
            .iter()
            .filter(|(s, e)| *s <= child && child < *e)
            .collect();
        sites.iter().all(|site| {
            site.at <= child && !loops.iter().any(|(s, e)| *s <= site.at && site.at < *e)
        })
    }

    /// The assignments of `name` that may run after a nested function starting at `child`
    /// is created (those [`ScopeInfo::capture_is_exact`] rules out).
    pub fn later_sites(&self, name: &Name, child: u32) -> impl Iterator<Item = u32> + '_ {
        let loops: Vec<(u32, u32)> = self
            .loops
            .iter()
            .filter(|(s, e)| *s <= child && child < *e)
            .copied()
            .collect();
        self.sites
            .get(name)
            .into_iter()
            .flatten()
            .filter(move |site| {
                site.at > child || loops.iter().any(|(s, e)| *s <= site.at && site.at < *e)
            })
            .map(|site| site.at)
    }

    /// The `def` that is the only binding of `name`, if any.
    pub fn sole_def(&self, name: &Name) -> Option<*const FunctionDef> {
        match self.sites.get(name).map(|s| s.as_slice()) {
            Some([site]) => site.def,
            _ => None,
        }
    }

    /// Whether `later` is defined after `earlier` in the same statement list with only `def`s
    /// between them, so nothing can call `earlier` before `later` exists.
    pub fn adjacent_defs(&self, earlier: *const FunctionDef, later: *const FunctionDef) -> bool {
        match (self.def_pos.get(&earlier), self.def_pos.get(&later)) {
            (Some(&(l1, i1)), Some(&(l2, i2))) if l1 == l2 && i1 < i2 => {
                self.lists[l1][i1..=i2].iter().all(|is_def| *is_def)
            }
            _ => false,
        }
    }
}

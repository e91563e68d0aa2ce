//! Cells: variables shared between a function and closures that may run after the function
//! assigns them again (Python's late binding), or that assign them (`nonlocal`), where the
//! closure is not only called by name (`closures` handles those without a cell).
//!
//! Such a variable lives in a cell made when the function starts (`MakeCell`, holding the
//! parameter's value or `Unbound`). Every read of it, in the function or in any closure,
//! is a `CellGet` checked for being unassigned, and every assignment a `CellSet`. Both are
//! memory effects, so the auto-monad keeps them in program order. Variables that need no
//! cell stay plain SSA values: programs that compiled before compile to the same graphs.

use std::rc::Rc;

use anfora_ir::{Const, NodeId, Prim, Span};

use super::{BlockId, Lowerer};
use crate::ast::*;
use crate::flow;
use crate::scope::ScopeInfo;

impl Lowerer<'_> {
    /// The variables of the current function that need a cell: those a nested function that
    /// is not only called by name reads after they may be assigned again, or assigns with
    /// `nonlocal`.
    pub(super) fn plan_cells(&self) -> Vec<Name> {
        let def = self.fun().def.clone();
        let info = &self.fun().info;
        let uses = flow::uses(&def.body);
        let mut children: Vec<Rc<FunctionDef>> = info.nested_defs.clone();
        flow::lambdas(&def.body, &mut |l| children.push(l.clone()));
        let mut cells = Vec::new();
        for child in &children {
            let var = flow::binding_name(&def.body, child);
            let called_only = var
                .as_ref()
                .is_some_and(|v| uses.get(v).is_none_or(|u| u.other == 0));
            let direct = called_only
                && var
                    .as_ref()
                    .and_then(|v| info.sites.get(v))
                    .is_some_and(|s| s.len() == 1);
            if direct {
                // Converted: its variables are passed and written back (`closures`).
                continue;
            }
            let child_info = ScopeInfo::of(child);
            let mut add = |n: &Name| {
                if !cells.contains(n) {
                    cells.push(n.clone());
                }
            };
            for (n, _) in &child_info.nonlocals {
                if info.locals.contains(n) {
                    add(n);
                }
            }
            flow::function_captures(child, &mut |n| {
                let own = child_info.locals.contains(n)
                    && !child_info.nonlocals.iter().any(|(m, _)| m == n);
                if !info.locals.contains(n) || own || self.is_sibling_def(info, child, n) {
                    return;
                }
                let exact = info.capture_is_exact(n, child.span.start)
                    || var.as_ref().is_some_and(|v| {
                        called_only && super::closures::dead_at_sites(&def.body, info, v, n, child)
                    });
                if !exact {
                    add(n);
                }
            });
        }
        cells
    }

    /// Whether `name` is bound only by a `def` that is `child` itself or a sibling defined
    /// right after it: the graph is read as a constant, whenever the closure runs.
    fn is_sibling_def(&self, info: &ScopeInfo, child: &Rc<FunctionDef>, name: &Name) -> bool {
        let child = Rc::as_ptr(child);
        info.sole_def(name)
            .is_some_and(|d| d == child || info.adjacent_defs(child, d))
    }

    /// Makes the cells of the current function in its entry block: a parameter's holds its
    /// argument, any other starts unassigned.
    pub(super) fn make_cells(&mut self, entry: BlockId, names: Vec<Name>) {
        for n in names {
            let init = if self.fun().def.params.iter().any(|p| p.name == n) {
                self.read(entry, &n)
            } else {
                self.konst(Const::Unbound)
            };
            let cell = self.prim(Prim::MakeCell, &[init], self.fun().def.head_span);
            self.fe.module.set_name(cell, &format!("cell.{n}"));
            self.fun_mut().cells.insert(n, cell);
        }
    }

    /// The cell variable `name` lives in, as seen from the current function, and whether it
    /// belongs to an enclosing function (a free variable).
    pub(super) fn cell_of(&self, name: &Name) -> Option<(NodeId, bool)> {
        let depth = self.fns.len() - 1;
        for d in (0..=depth).rev() {
            let f = &self.fns[d];
            let declared_nonlocal = f.info.nonlocals.iter().any(|(m, _)| m == name);
            if f.info.locals.contains(name) && !declared_nonlocal {
                return f.cells.get(name).map(|&c| (c, d != depth));
            }
            // A converted closure receives its creator's variables as parameters.
            if f.conv.as_ref().is_some_and(|c| c.hidden.contains(name)) {
                return None;
            }
        }
        None
    }

    /// The value of cell variable `name`, raising as Python does if it is not assigned.
    pub(super) fn read_cell(
        &mut self,
        cell: NodeId,
        free: bool,
        name: &Name,
        span: Span,
    ) -> NodeId {
        let v = self.prim(Prim::CellGet, &[cell], span);
        let n = self.konst(Const::Str(name.clone()));
        let f = self.konst(Const::Bool(free));
        self.prim(Prim::CheckBound, &[v, n, f], span)
    }

    /// Binds variable `name` to `v` in the current block, or stores it in its cell.
    pub(super) fn bind(&mut self, name: &Name, v: NodeId, span: Span) {
        match self.cell_of(name) {
            Some((cell, _)) => {
                self.prim(Prim::CellSet, &[cell, v], span);
            }
            None => {
                let b = self.cur_block();
                self.write(b, name, v);
            }
        }
    }
}

//! Cells: variables a function shares with the closures it creates (`MakeCell`, `CellGet`,
//! `CellSet`, made by the frontend for late binding and `nonlocal`).
//!
//! A cell is known by its site, the `MakeCell` node in the context that ran it, so each
//! specialization of the owning function has cells of its own. What a cell holds is one
//! abstract per site, the join of everything stored in it (the initial value included):
//! flow-insensitive, like a loop's carried values, since a closure may read the cell at any
//! time. Storing something new re-evaluates every context that read the cell, so the
//! analysis reaches a fixpoint over reads and writes as it does over calls.

use std::collections::HashSet;

use anfora_ir::NodeId;
use anfora_ir::codes::{JOIN, LATE_BINDING};
use anfora_ir::diag::Diagnostic;
use anfora_ops::abs::{Abs, CellSite, CtxId};

use super::Interpreter;

/// One cell's state during the analysis.
pub(super) struct Cell {
    /// The join of every value stored.
    value: Abs,
    /// The contexts that read it.
    readers: HashSet<CtxId>,
}

impl Default for Cell {
    fn default() -> Cell {
        Cell {
            value: Abs::Bottom,
            readers: HashSet::new(),
        }
    }
}

impl Interpreter<'_> {
    /// `MakeCell(init)` at node `n` of context `c`.
    pub(super) fn make_cell(&mut self, c: CtxId, n: NodeId, init: &Abs) -> Abs {
        let site = CellSite { ctx: c, node: n };
        self.cells.entry(site).or_default();
        self.store_in_cell(c, n, site, init);
        Abs::Cell(site)
    }

    /// `CellGet(cell)` at node `n` of context `c`.
    pub(super) fn cell_get(&mut self, c: CtxId, n: NodeId, cell: &Abs) -> Abs {
        match cell {
            Abs::Cell(site) => {
                let state = self.cells.entry(*site).or_default();
                state.readers.insert(c);
                state.value.clone()
            }
            Abs::Bottom => Abs::Bottom,
            _ => self.lost_cell(c, n),
        }
    }

    /// `CellSet(cell, value)` at node `n` of context `c`.
    pub(super) fn cell_set(&mut self, c: CtxId, n: NodeId, cell: &Abs, value: &Abs) -> Abs {
        match cell {
            Abs::Cell(site) => {
                self.store_in_cell(c, n, *site, value);
                Abs::None
            }
            Abs::Bottom => Abs::Bottom,
            _ => self.lost_cell(c, n),
        }
    }

    fn store_in_cell(&mut self, c: CtxId, n: NodeId, site: CellSite, value: &Abs) {
        let old = self.cells.entry(site).or_default().value.clone();
        let joined = match old.join_sizes(value) {
            Ok(j) => self.after_join(&old, value, j),
            Err(e) => {
                let span = self.module.node(n).span;
                let name = self.variable_name(site);
                let d = Diagnostic::error(
                    JOIN,
                    format!(
                        "variable '{name}', which a closure shares, holds {} here and {} elsewhere",
                        e.right, e.left
                    ),
                    span,
                )
                .with_label("assigned here")
                .with_hint(
                    "a tensor in a variable that closures read after it is assigned again keeps \
                     its dtype and rank (its sizes may change); pass the new value to the \
                     closure as an argument instead",
                );
                self.ctx_mut(c).refusals.push(d);
                return;
            }
        };
        if joined == old {
            return;
        }
        let state = self.cells.entry(site).or_default();
        state.value = joined;
        let readers: Vec<CtxId> = state.readers.iter().copied().collect();
        for r in readers {
            self.mark_dirty(r);
        }
    }

    /// The variable a cell stands for (the name the frontend gave its `MakeCell`).
    fn variable_name(&self, site: CellSite) -> String {
        let node = self.module.node(site.node);
        node.name
            .as_deref()
            .and_then(|n| n.strip_prefix("cell."))
            .unwrap_or("?")
            .to_string()
    }

    /// A cell whose identity the analysis lost (it went through a value of unknown type).
    fn lost_cell(&mut self, c: CtxId, n: NodeId) -> Abs {
        let span = self.module.node(n).span;
        let d = Diagnostic::error(
            LATE_BINDING,
            "the compiler cannot tell which variable this closure shares with its creator",
            span,
        )
        .with_label("read or assigned here")
        .with_hint(
            "the closure went through a value of unknown type; pass the variable as an argument",
        );
        self.ctx_mut(c).refusals.push(d);
        Abs::Bottom
    }
}

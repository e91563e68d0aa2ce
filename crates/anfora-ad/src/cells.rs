//! Gradients through closure cells (variables a closure shares with its function, `nonlocal`).
//!
//! A cell is mutable state, so its sensitivity is state too: in the J world each cell is a
//! pair `(cell, adjoint)`, the adjoint a cell that accumulates the sensitivity of the value the
//! cell holds. The backward pass runs the cell operations' steps in reverse order, on the
//! memory chain like the forward ones:
//! - `CellGet(c)` adds the read's sensitivity to the adjoint;
//! - `CellSet(c, v)` gives `v` the adjoint's value and zeroes it (what the cell held before
//!   was overwritten: nothing later read it);
//! - `MakeCell(v)` gives `v` the adjoint's value.
//!
//! Every forward write also sets the adjoint to zeros shaped like the value written, so that
//! the adjoint always holds a value of the cell's type (never a `None` that inference would
//! have to join with tensors) and is zero when the backward pass starts.

use std::collections::HashMap;

use anfora_ir::analysis::reachable;
use anfora_ir::{Const, GraphId, Module, NodeId, Prim, Span};

use crate::{Back, Transform};

/// Whether a graph `root` reaches operates on cells.
pub(crate) fn has_cells(m: &Module, root: GraphId) -> bool {
    reachable(m, &[root]).iter().any(|(_, nodes)| {
        nodes
            .iter()
            .any(|&n| m.callee_prim(n).is_some_and(is_cell_prim))
    })
}

/// Whether `p` operates on cells.
pub(crate) fn is_cell_prim(p: Prim) -> bool {
    matches!(p, Prim::MakeCell | Prim::CellGet | Prim::CellSet)
}

impl Transform<'_> {
    /// The J-world counterpart of cell operation `p` (node `n`, J-world arguments `args`) in
    /// `jg`: its value, and its backward step.
    pub(crate) fn forward_cell(
        &mut self,
        jg: GraphId,
        n: NodeId,
        p: Prim,
        args: &[NodeId],
        span: Span,
    ) -> (NodeId, Back) {
        if p == Prim::MakeCell {
            let v = args[0];
            let primal = self.prim(jg, Prim::MakeCell, &[v], span);
            let zero = match self.m.constant(v) {
                Some(Const::Unbound) => v,
                _ => self.zeros_like(jg, v, span),
            };
            let adjoint = self.prim(jg, Prim::MakeCell, &[zero], span);
            let pair = self.prim(jg, Prim::MakeTuple, &[primal, adjoint], span);
            return (pair, Back::Cell { node: n, adjoint });
        }
        let (zero, one) = (self.int(0), self.int(1));
        let cell = self.prim(jg, Prim::TupleGetItem, &[args[0], zero], span);
        let adjoint = self.prim(jg, Prim::TupleGetItem, &[args[0], one], span);
        let mut ins = vec![cell];
        ins.extend(&args[1..]);
        let out = self.prim(jg, p, &ins, span);
        if p == Prim::CellSet {
            let zeros = self.zeros_like(jg, args[1], span);
            self.prim(jg, Prim::CellSet, &[adjoint, zeros], span);
        }
        (out, Back::Cell { node: n, adjoint })
    }

    /// The backward step of cell operation `n` (its adjoint cell `adjoint`, the sensitivity
    /// `d` of its value) in `bg`; the sensitivity of the value stored goes to `sens`.
    pub(crate) fn backward_cell(
        &mut self,
        g: GraphId,
        bg: GraphId,
        (n, adjoint): (NodeId, NodeId),
        d: Option<NodeId>,
        sens: &mut HashMap<NodeId, Vec<NodeId>>,
    ) {
        let span = self.m.node(n).span;
        let ins = self.m.inputs(n).to_vec();
        let prim = self.m.callee_prim(n);
        if prim == Some(Prim::CellGet) {
            if let Some(d) = d {
                let held = self.prim(bg, Prim::CellGet, &[adjoint], span);
                let sum = self.prim(bg, Prim::GradAdd, &[held, d], span);
                self.prim(bg, Prim::CellSet, &[adjoint, sum], span);
            }
            return;
        }
        let held = self.prim(bg, Prim::CellGet, &[adjoint], span);
        // `CellSet(c, v)` hands the adjoint to `v` and zeroes it; `MakeCell(v)` hands it over.
        let stored = if prim == Some(Prim::CellSet) {
            let zeros = self.zeros_like(bg, held, span);
            self.prim(bg, Prim::CellSet, &[adjoint, zeros], span);
            ins[2]
        } else {
            ins[1]
        };
        if self.m.node(stored).owner == Some(g) {
            sens.entry(stored).or_default().push(held);
        }
    }

    /// Zeros shaped like `x` (`FillZeros(None, x)`: `None` for values without a gradient).
    pub(crate) fn zeros_like(&mut self, g: GraphId, x: NodeId, span: Span) -> NodeId {
        let none = self.m.value(Const::None);
        self.prim(g, Prim::FillZeros, &[none, x], span)
    }
}

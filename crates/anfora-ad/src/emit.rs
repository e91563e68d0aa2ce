//! The grad stage's side of backward rules: they write into the backward graph being built
//! (`anfora_ops::emit::Emit`), and each call's rule is its primitive's declaration.

use anfora_ir::{Const, GraphId, Module, NodeId, Prim, Span};
use anfora_ops::emit::{Call, Emit, Forward};

/// Emits nodes into one graph of the module, at one span.
pub(crate) struct GraphEmit<'a> {
    pub m: &'a mut Module,
    pub graph: GraphId,
    pub span: Span,
    /// MindSpore's rule for integer values (see [`crate::IntegerSensitivities`]).
    pub integers: crate::IntegerSensitivities,
}

impl Emit for GraphEmit<'_> {
    fn op(&mut self, p: Prim, args: &[NodeId]) -> NodeId {
        // The primitives that give an integer value's sensitivity take the rule as their last
        // argument (a model file holds every call with all its arguments bound).
        let rule = matches!(
            p,
            Prim::SumToShape | Prim::IndexGrad | Prim::ReduceGrad | Prim::GradTupleAt
        );
        if rule && args.len() + 1 == p.signature().params.len() {
            let cast = self.integers == crate::IntegerSensitivities::Cast;
            let mut with = args.to_vec();
            with.push(self.m.value(Const::Bool(cast)));
            return self.m.apply_prim(self.graph, p, &with, self.span);
        }
        self.m.apply_prim(self.graph, p, args, self.span)
    }

    fn call(&mut self, callee: NodeId, args: &[NodeId]) -> NodeId {
        let mut ins = vec![callee];
        ins.extend_from_slice(args);
        self.m.apply(self.graph, ins, self.span)
    }

    fn konst(&mut self, c: Const) -> NodeId {
        self.m.value(c)
    }

    fn constant(&self, n: NodeId) -> Option<Const> {
        self.m.constant(n).cloned()
    }
}

/// The sensitivities of the arguments of `out = p(x...)` given `d`, or `None` when `p` has no
/// rule for this call (E0502).
pub(crate) fn backward(
    e: &mut GraphEmit,
    p: Prim,
    x: &[NodeId],
    needs: &[bool],
    out: NodeId,
    d: NodeId,
) -> Option<Vec<Option<NodeId>>> {
    let call = Call {
        prim: p,
        x,
        needs,
        out,
        d,
    };
    p.backward(e, &call)
}

/// The computation differentiated in place of a call of `p` (`ops.dropout`'s mask drawn once
/// in the forward graph), if its declaration has one.
pub(crate) fn forward(e: &mut GraphEmit, p: Prim, args: &[NodeId]) -> Option<Forward> {
    match p.def().backward {
        anfora_ops::def::Backward::Through(rewrite) => rewrite(e, args),
        _ => None,
    }
}

//! What backward rules write into: a builder of IR nodes, implemented by the grad stage over
//! the graph it is building. Rules only ever add calls and constants.

use crate::constant::Const;
use crate::ids::NodeId;
use crate::prim::Prim;

/// Adds nodes to the graph a rule is emitting into.
pub trait Emit {
    /// A call of primitive `p`.
    fn op(&mut self, p: Prim, args: &[NodeId]) -> NodeId;
    /// A call of the function value `callee`.
    fn call(&mut self, callee: NodeId, args: &[NodeId]) -> NodeId;
    /// A constant.
    fn konst(&mut self, c: Const) -> NodeId;
    /// The value of `n` when it is a constant.
    fn constant(&self, n: NodeId) -> Option<Const>;
}

/// A primitive call being differentiated: `out = prim(x...)`, whose sensitivity is `d`.
pub struct Call<'a> {
    pub prim: Prim,
    pub x: &'a [NodeId],
    /// Which arguments need a sensitivity (a rule computes only those).
    pub needs: &'a [bool],
    pub out: NodeId,
    pub d: NodeId,
}

impl Call<'_> {
    pub fn need(&self, i: usize) -> bool {
        self.needs.get(i).copied().unwrap_or(false)
    }

    /// No sensitivity yet, one slot per argument.
    pub fn none(&self) -> Grads {
        vec![None; self.x.len()]
    }

    /// Sets the sensitivity of each needed argument `i` to `f(e, i)`.
    pub fn each(
        &self,
        e: &mut dyn Emit,
        args: impl IntoIterator<Item = usize>,
        mut f: impl FnMut(&mut dyn Emit, usize) -> NodeId,
    ) -> Grads {
        let mut g = self.none();
        for i in args {
            if self.need(i) && i < g.len() {
                g[i] = Some(f(e, i));
            }
        }
        g
    }

    /// The sensitivity of the first argument alone, if needed.
    pub fn first(&self, e: &mut dyn Emit, f: impl FnOnce(&mut dyn Emit) -> NodeId) -> Grads {
        let mut g = self.none();
        if self.need(0) {
            g[0] = Some(f(e));
        }
        g
    }
}

/// One sensitivity per argument (`None`: not needed, or zero).
pub type Grads = Vec<Option<NodeId>>;

/// A computation the grad stage differentiates in place of a call: its value, and the
/// primitive call whose rule gives the sensitivities (`ops.dropout` runs as
/// `DropoutApply(x, DropoutMask(...), ...)`, so its backward pass reuses the forward mask).
pub struct Forward {
    pub out: NodeId,
    pub prim: Prim,
    pub args: Vec<NodeId>,
}

/// `d` summed back to the shape of `x` (undoing broadcasting; zero for ints and bools).
pub fn unbroadcast(e: &mut dyn Emit, d: NodeId, x: NodeId) -> NodeId {
    e.op(Prim::SumToShape, &[d, x])
}

/// `x.shape`.
pub fn shape_of(e: &mut dyn Emit, x: NodeId) -> NodeId {
    let name = e.konst(Const::str("shape"));
    e.op(Prim::GetAttr, &[x, name])
}

/// `d * f` summed back to the shape of `x`: the sensitivity of an elementwise argument whose
/// local derivative is `f`.
pub fn scaled(e: &mut dyn Emit, d: NodeId, f: NodeId, x: NodeId) -> NodeId {
    let t = e.op(Prim::Mul, &[d, f]);
    unbroadcast(e, t, x)
}

/// The float constant `v`.
pub fn float(e: &mut dyn Emit, v: f64) -> NodeId {
    e.konst(Const::Float(v))
}

/// The int constant `v`.
pub fn int(e: &mut dyn Emit, v: i64) -> NodeId {
    e.konst(Const::Int(v))
}

/// The sensitivity of a reduction `kind(x, axis, keepdims)` (a `sum`, a `logsumexp`, ...):
/// `ReduceGrad(kind, d, x, out, axis, keepdims)` for `x`, none for the others.
pub fn reduce_back(e: &mut dyn Emit, c: &Call, kind: &str) -> Option<Grads> {
    let k = e.konst(Const::str(kind));
    let mut g = c.none();
    g[0] = Some(e.op(Prim::ReduceGrad, &[k, c.d, c.x[0], c.out, c.x[1], c.x[2]]));
    Some(g)
}

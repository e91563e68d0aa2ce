//! Backward rules: for a primitive call `out = p(x...)` and the sensitivity `d` of `out`, the
//! sensitivities of the arguments, emitted as nodes of the backward graph. A rule only computes
//! the sensitivities of arguments that need one (`needs[i]`). Broadcasting is undone by
//! `SumToShape`, which gives zero for int and bool arguments (they get no gradient, but a zero
//! keeps the integer arithmetic that computed them valid).

use anfora_ir::{Const, GraphId, Module, NodeId, Prim, Span};

/// Emits nodes into the backward graph.
pub struct Emit<'a> {
    pub m: &'a mut Module,
    pub graph: GraphId,
    pub span: Span,
}

impl Emit<'_> {
    pub fn op(&mut self, p: Prim, args: &[NodeId]) -> NodeId {
        self.m.apply_prim(self.graph, p, args, self.span)
    }

    pub fn konst(&mut self, c: Const) -> NodeId {
        self.m.value(c)
    }
}

/// The sensitivities of the arguments, or `None` when `p` has no backward rule.
pub fn backward(
    e: &mut Emit,
    p: Prim,
    x: &[NodeId],
    needs: &[bool],
    out: NodeId,
    d: NodeId,
) -> Option<Vec<Option<NodeId>>> {
    use Prim::*;
    let n = x.len();
    let mut g: Vec<Option<NodeId>> = vec![None; n];
    let need = |i: usize| needs.get(i).copied().unwrap_or(false);
    // Shorthands.
    macro_rules! op {
        ($p:expr, $($a:expr),*) => { e.op($p, &[$($a),*]) };
    }
    match p {
        Add | InplaceAdd => {
            for (i, gi) in g.iter_mut().enumerate().take(2) {
                if need(i) {
                    *gi = Some(op!(SumToShape, d, x[i]));
                }
            }
        }
        Sub => {
            if need(0) {
                g[0] = Some(op!(SumToShape, d, x[0]));
            }
            if need(1) {
                let nd = op!(Neg, d);
                g[1] = Some(op!(SumToShape, nd, x[1]));
            }
        }
        Mul | InplaceMul => {
            if need(0) {
                let t = op!(Mul, d, x[1]);
                g[0] = Some(op!(SumToShape, t, x[0]));
            }
            if need(1) {
                let t = op!(Mul, d, x[0]);
                g[1] = Some(op!(SumToShape, t, x[1]));
            }
        }
        Div => {
            if need(0) {
                let t = op!(Div, d, x[1]);
                g[0] = Some(op!(SumToShape, t, x[0]));
            }
            if need(1) {
                // d(x/y)/dy = -out / y
                let q = op!(Div, out, x[1]);
                let t = op!(Mul, d, q);
                let t = op!(Neg, t);
                g[1] = Some(op!(SumToShape, t, x[1]));
            }
        }
        Pow => {
            if need(0) {
                let one = e.konst(Const::Int(1));
                let ym1 = op!(Sub, x[1], one);
                let pw = op!(Pow, x[0], ym1);
                let t = op!(Mul, x[1], pw);
                let t = op!(Mul, d, t);
                g[0] = Some(op!(SumToShape, t, x[0]));
            }
            if need(1) {
                let l = op!(Log, x[0]);
                let t = op!(Mul, out, l);
                let t = op!(Mul, d, t);
                g[1] = Some(op!(SumToShape, t, x[1]));
            }
        }
        Mod => {
            if need(0) {
                g[0] = Some(op!(SumToShape, d, x[0]));
            }
            if need(1) {
                let q = op!(FloorDiv, x[0], x[1]);
                let t = op!(Mul, d, q);
                let t = op!(Neg, t);
                g[1] = Some(op!(SumToShape, t, x[1]));
            }
        }
        Neg => g[0] = Some(op!(Neg, d)),
        Pos | CheckBound | Depend => {
            if need(0) {
                g[0] = Some(d);
            }
        }
        MatMul => {
            let both = op!(MatMulGrad, x[0], x[1], d);
            for (i, gi) in g.iter_mut().enumerate().take(2) {
                if need(i) {
                    let k = e.konst(Const::Int(i as i64));
                    *gi = Some(op!(TupleGetItem, both, k));
                }
            }
        }
        Exp => g[0] = Some(op!(Mul, d, out)),
        Log => g[0] = Some(op!(Div, d, x[0])),
        Sqrt => {
            let half = e.konst(Const::Float(0.5));
            let t = op!(Mul, d, half);
            g[0] = Some(op!(Div, t, out));
        }
        Tanh => {
            let one = e.konst(Const::Int(1));
            let sq = op!(Mul, out, out);
            let t = op!(Sub, one, sq);
            g[0] = Some(op!(Mul, d, t));
        }
        Sin => {
            let c = op!(Cos, x[0]);
            g[0] = Some(op!(Mul, d, c));
        }
        Cos => {
            let s = op!(Sin, x[0]);
            let t = op!(Mul, d, s);
            g[0] = Some(op!(Neg, t));
        }
        Sigmoid => {
            let one = e.konst(Const::Int(1));
            let t = op!(Sub, one, out);
            let t = op!(Mul, out, t);
            g[0] = Some(op!(Mul, d, t));
        }
        Relu => {
            let zero = e.konst(Const::Int(0));
            let pos = op!(Gt, x[0], zero);
            let t = op!(Mul, d, pos);
            g[0] = Some(op!(SumToShape, t, x[0]));
        }
        Abs => {
            let zero = e.konst(Const::Int(0));
            let pos = op!(Gt, x[0], zero);
            let neg = op!(Lt, x[0], zero);
            let a = op!(Mul, d, pos);
            let b = op!(Mul, d, neg);
            let t = op!(Sub, a, b);
            g[0] = Some(op!(SumToShape, t, x[0]));
        }
        Maximum | Minimum => {
            // Ties go to the first argument.
            let (first, second) = if p == Maximum { (Ge, Lt) } else { (Le, Gt) };
            if need(0) {
                let m0 = op!(first, x[0], x[1]);
                let t = op!(Mul, d, m0);
                g[0] = Some(op!(SumToShape, t, x[0]));
            }
            if need(1) {
                let m1 = op!(second, x[0], x[1]);
                let t = op!(Mul, d, m1);
                g[1] = Some(op!(SumToShape, t, x[1]));
            }
        }
        Where => {
            if need(1) {
                let t = op!(Mul, d, x[0]);
                g[1] = Some(op!(SumToShape, t, x[1]));
            }
            if need(2) {
                let nc = op!(LogicalNot, x[0]);
                let t = op!(Mul, d, nc);
                g[2] = Some(op!(SumToShape, t, x[2]));
            }
        }
        Cast => g[0] = Some(op!(SumToShape, d, x[0])),
        ReduceSum | ReduceMean | ReduceMax | ReduceMin => {
            let kind = match p {
                ReduceSum => "sum",
                ReduceMean => "mean",
                ReduceMax => "max",
                _ => "min",
            };
            let k = e.konst(Const::str(kind));
            g[0] = Some(op!(ReduceGrad, k, d, x[0], out, x[1], x[2]));
        }
        Reshape => {
            let name = e.konst(Const::str("shape"));
            let shape = op!(GetAttr, x[0], name);
            g[0] = Some(op!(Reshape, d, shape));
        }
        Transpose => g[0] = Some(op!(TransposeGrad, d, x[1])),
        TupleGetItem | GetItem => {
            if need(0) {
                g[0] = Some(op!(GradTupleAt, x[0], x[1], d));
            }
        }
        MakeTuple | MakeList | Partial => {
            // A Partial's sensitivity is that of its bound arguments.
            let skip = usize::from(p == Partial);
            for (i, gi) in g.iter_mut().enumerate().skip(skip) {
                if need(i) {
                    // Dense: the tuple's sensitivity may lack this item (None).
                    let k = e.konst(Const::Int((i - skip) as i64));
                    let item = op!(GradItem, d, k);
                    *gi = Some(op!(FillZeros, item, x[i]));
                }
            }
        }
        Unpack => g[0] = Some(d),
        // The gradient primitives themselves, for higher-order derivatives.
        GradAdd => {
            for (i, gi) in g.iter_mut().enumerate() {
                if need(i) {
                    *gi = Some(d);
                }
            }
        }
        SumToShape => {
            if need(0) {
                g[0] = Some(op!(BroadcastLike, d, x[0]));
            }
        }
        BroadcastLike => {
            if need(0) {
                g[0] = Some(op!(SumToShape, d, x[0]));
            }
        }
        FillZeros => {
            if need(0) {
                g[0] = Some(d);
            }
        }
        GradItem => {
            if need(0) {
                g[0] = Some(op!(GradTupleAt, x[0], x[1], d));
            }
        }
        GradTupleAt => {
            if need(2) {
                g[2] = Some(op!(GradItem, d, x[1]));
            }
        }
        GradHead => {
            if need(0) {
                g[0] = Some(op!(GradPad, d, x[1]));
            }
        }
        GradPad => {
            if need(0) {
                g[0] = Some(op!(GradHead, d, x[1]));
            }
        }
        // Piecewise constant, structural or effectful: nothing flows back.
        Switch | Truth | Not | Eq | Ne | Lt | Le | Gt | Ge | Is | IsNot | In | NotIn | Len
        | IntType | BoolType | StrType | Repr | Range | IsInstance | IterLen | Enumerate
        | FloorDiv | LShift | RShift | BitAnd | BitOr | BitXor | Invert | LogicalNot
        | ZerosLike | OnesLike | Zeros | Ones | Full | Arange | MakeTensor | MakeSlice
        | GetAttr | Print | Assert | Raise | Load | UpdateState | MakeParameter | Assign
        | AssignAdd | AssignSub | ScatterUpdate | ScatterAdd | ScatterNdUpdate | ScatterNdAdd
        | Sgd | ApplyMomentum | Adam | SetSeed | Uniform | Normal | Randint | Bernoulli
        | SensOnes | StopGradient => {}
        _ => return None,
    }
    Some(g)
}

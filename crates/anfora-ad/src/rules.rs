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

/// The derivative of `gelu(x, approximate)`: of the exact form `Φ(x) + x·φ(x)`, of the tanh
/// form `(1 + t)/2 + x/2·(1 - t²)·c·(1 + 3a·x²)` with `t = tanh(c·(x + a·x³))`. A constant
/// `approximate` (the usual case) emits one of them; otherwise both, blended by it.
fn gelu_derivative(e: &mut Emit, x: NodeId, approximate: NodeId) -> NodeId {
    let (c, a) = (0.797_884_560_802_865_4, 0.044_715);
    let mut f = |v: f64| e.konst(Const::Float(v));
    let (half, one, inv_sqrt2, inv_sqrt_2pi) = (
        f(0.5),
        f(1.0),
        f(std::f64::consts::FRAC_1_SQRT_2),
        f(0.398_942_280_401_432_7),
    );
    let (kc, ka, k3a) = (f(c), f(a), f(3.0 * a));
    let exact = |e: &mut Emit| {
        let z = e.op(Prim::Mul, &[x, inv_sqrt2]);
        let erf = e.op(Prim::Erf, &[z]);
        let cdf = e.op(Prim::Add, &[erf, one]);
        let cdf = e.op(Prim::Mul, &[cdf, half]);
        let sq = e.op(Prim::Mul, &[x, x]);
        let sq = e.op(Prim::Mul, &[sq, half]);
        let nsq = e.op(Prim::Neg, &[sq]);
        let pdf = e.op(Prim::Exp, &[nsq]);
        let pdf = e.op(Prim::Mul, &[pdf, inv_sqrt_2pi]);
        let xp = e.op(Prim::Mul, &[x, pdf]);
        e.op(Prim::Add, &[cdf, xp])
    };
    let tanh_form = |e: &mut Emit| {
        let sq = e.op(Prim::Mul, &[x, x]);
        let cube = e.op(Prim::Mul, &[sq, x]);
        let inner = e.op(Prim::Mul, &[cube, ka]);
        let inner = e.op(Prim::Add, &[x, inner]);
        let inner = e.op(Prim::Mul, &[inner, kc]);
        let t = e.op(Prim::Tanh, &[inner]);
        let left = e.op(Prim::Add, &[t, one]);
        let left = e.op(Prim::Mul, &[left, half]);
        let tt = e.op(Prim::Mul, &[t, t]);
        let sech2 = e.op(Prim::Sub, &[one, tt]);
        let du = e.op(Prim::Mul, &[sq, k3a]);
        let du = e.op(Prim::Add, &[du, one]);
        let du = e.op(Prim::Mul, &[du, kc]);
        let right = e.op(Prim::Mul, &[sech2, du]);
        let right = e.op(Prim::Mul, &[right, x]);
        let right = e.op(Prim::Mul, &[right, half]);
        e.op(Prim::Add, &[left, right])
    };
    match e.m.constant(approximate) {
        Some(Const::Bool(false)) => exact(e),
        Some(Const::Bool(true)) => tanh_form(e),
        _ => {
            let ex = exact(e);
            let th = tanh_form(e);
            let w = e.op(Prim::Mul, &[th, approximate]);
            let not = e.op(Prim::Not, &[approximate]);
            let v = e.op(Prim::Mul, &[ex, not]);
            e.op(Prim::Add, &[w, v])
        }
    }
}

/// `x.shape`.
fn shape_of(e: &mut Emit, x: NodeId) -> NodeId {
    let name = e.konst(Const::str("shape"));
    e.op(Prim::GetAttr, &[x, name])
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
        // The check is on the primal; sensitivities pass through to the cotangent.
        Pos | CheckBound | Depend | SensCheck => {
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
        Log1p => {
            let one = e.konst(Const::Int(1));
            let t = op!(Add, x[0], one);
            g[0] = Some(op!(Div, d, t));
        }
        Expm1 => {
            let one = e.konst(Const::Int(1));
            let t = op!(Add, out, one);
            g[0] = Some(op!(Mul, d, t));
        }
        Erf => {
            // 2/√π · exp(-x²)
            let k = e.konst(Const::Float(std::f64::consts::FRAC_2_SQRT_PI));
            let sq = op!(Mul, x[0], x[0]);
            let nsq = op!(Neg, sq);
            let t = op!(Exp, nsq);
            let t = op!(Mul, t, k);
            g[0] = Some(op!(Mul, d, t));
        }
        Gelu => {
            if need(0) {
                let t = gelu_derivative(e, x[0], x[1]);
                g[0] = Some(op!(Mul, d, t));
            }
        }
        Silu => {
            // s + x·s·(1 - s) with s = sigmoid(x)
            let one = e.konst(Const::Int(1));
            let s = op!(Sigmoid, x[0]);
            let c = op!(Sub, one, s);
            let t = op!(Mul, x[0], c);
            let t = op!(Add, one, t);
            let t = op!(Mul, s, t);
            g[0] = Some(op!(Mul, d, t));
        }
        Softplus => {
            let s = op!(Sigmoid, x[0]);
            g[0] = Some(op!(Mul, d, s));
        }
        Rsqrt => {
            // -out³ / 2
            let k = e.konst(Const::Float(-0.5));
            let c = op!(Mul, out, out);
            let c = op!(Mul, c, out);
            let t = op!(Mul, c, k);
            g[0] = Some(op!(Mul, d, t));
        }
        // clip routes the sensitivity to x or to the bound that wins, broadcasting summed back.
        Clip => {
            for (i, gi) in g.iter_mut().enumerate().take(3) {
                if need(i) {
                    let k = e.konst(Const::Int(i as i64));
                    let t = op!(ClipGrad, d, x[0], x[1], x[2], k);
                    *gi = Some(op!(SumToShape, t, x[i]));
                }
            }
        }
        // Linear in its sensitivity, by a mask that is piecewise constant in the others.
        ClipGrad => {
            if need(0) {
                g[0] = Some(op!(ClipGrad, d, x[1], x[2], x[3], x[4]));
            }
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
        ReduceSum | ReduceMean | ReduceMax | ReduceMin | ReduceProd => {
            let kind = match p {
                ReduceSum => "sum",
                ReduceMean => "mean",
                ReduceMax => "max",
                ReduceProd => "prod",
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
        Transpose | Permute => g[0] = Some(op!(TransposeGrad, d, x[1])),
        Squeeze | ExpandDims => {
            let shape = shape_of(e, x[0]);
            g[0] = Some(op!(Reshape, d, shape));
        }
        BroadcastTo => g[0] = Some(op!(SumToShape, d, x[0])),
        Concat => {
            if need(0) {
                g[0] = Some(op!(ConcatGrad, d, x[0], x[1]));
            }
        }
        Stack => {
            if need(0) {
                g[0] = Some(op!(StackGrad, d, x[0], x[1]));
            }
        }
        // The parts' sensitivities (zeros for the unused ones) joined back.
        Split => {
            if need(0) {
                let dense = op!(FillZeros, d, out);
                let joined = op!(Concat, dense, x[2]);
                g[0] = Some(op!(SumToShape, joined, x[0]));
            }
        }
        Take => {
            if need(0) {
                let t = op!(TakeGrad, d, x[0], x[1], x[2]);
                g[0] = Some(op!(SumToShape, t, x[0]));
            }
        }
        Pad => {
            let inner = op!(PadGrad, d, x[0], x[1], x[2]);
            if need(0) {
                g[0] = Some(op!(SumToShape, inner, x[0]));
            }
            // The padding value's sensitivity: everything outside the interior (in the other
            // modes every element of `d` flows back into `x`, so this is zero, and
            // `constant_values` is None there anyway).
            if need(3) {
                let none = e.konst(Const::None);
                let no = e.konst(Const::Bool(false));
                let all = op!(ReduceSum, d, none, no);
                let kept = op!(ReduceSum, inner, none, no);
                let t = op!(Sub, all, kept);
                g[3] = Some(op!(SumToShape, t, x[3]));
            }
        }
        // Each 2-D padding is a pad of its mode.
        ReflectionPad2D | ReplicationPad2D | ZeroPad2D => {
            if need(0) {
                let mode = match p {
                    ReflectionPad2D => "reflect",
                    ReplicationPad2D => "edge",
                    _ => "constant",
                };
                let mode = e.konst(Const::str(mode));
                let t = op!(Pad2DGrad, d, x[0], x[1], mode);
                g[0] = Some(op!(SumToShape, t, x[0]));
            }
        }
        IndexSelect => {
            if need(0) {
                let t = op!(TakeGrad, d, x[0], x[2], x[1]);
                g[0] = Some(op!(SumToShape, t, x[0]));
            }
        }
        TakeGrad => {
            if need(0) {
                g[0] = Some(op!(Take, d, x[2], x[3]));
            }
        }
        // Linear in d: the adjoint of the adjoint is the pad itself (zeros around in the
        // constant mode).
        PadGrad => {
            if need(0) {
                let none = e.konst(Const::None);
                g[0] = Some(op!(Pad, d, x[2], x[3], none));
            }
        }
        // Linear in d: its adjoint is the 2-D padding of its mode.
        Pad2DGrad => {
            if need(0) {
                let forward = match e.m.constant(x[3]) {
                    Some(Const::Str(m)) if &**m == "reflect" => Some(ReflectionPad2D),
                    Some(Const::Str(m)) if &**m == "edge" => Some(ReplicationPad2D),
                    Some(Const::Str(m)) if &**m == "constant" => Some(ZeroPad2D),
                    _ => None,
                };
                g[0] = Some(match forward {
                    Some(f) => op!(f, d, x[2]),
                    // The rule above always gives the mode as a constant; a mode known only
                    // at run time chooses the padding then.
                    None => {
                        let (r, ed) = (e.konst(Const::str("reflect")), e.konst(Const::str("edge")));
                        let is_reflect = op!(Eq, x[3], r);
                        let is_edge = op!(Eq, x[3], ed);
                        let [kr, ke, kz] = [ReflectionPad2D, ReplicationPad2D, ZeroPad2D]
                            .map(|f| e.konst(Const::Prim(f)));
                        let other = op!(Switch, is_edge, ke, kz);
                        let f = op!(Switch, is_reflect, kr, other);
                        e.m.apply(e.graph, vec![f, d, x[2]], e.span)
                    }
                });
            }
        }
        // Linear in d: their adjoints join the tuple sensitivity back.
        ConcatGrad => {
            if need(0) {
                let dense = op!(FillZeros, d, x[1]);
                g[0] = Some(op!(Concat, dense, x[2]));
            }
        }
        StackGrad => {
            if need(0) {
                let dense = op!(FillZeros, d, x[1]);
                g[0] = Some(op!(Stack, dense, x[2]));
            }
        }
        // Convolution is bilinear in (x, weight); each backward kernel is bilinear in its two
        // tensors too, and their adjoints are the other two kernels.
        Conv2D => {
            let spec = &x[2..6];
            if need(0) {
                let shape = shape_of(e, x[0]);
                g[0] = Some(e.op(Conv2DBackpropInput, &[&[d, x[1], shape], spec].concat()));
            }
            if need(1) {
                let shape = shape_of(e, x[1]);
                g[1] = Some(e.op(Conv2DBackpropFilter, &[&[d, x[0], shape], spec].concat()));
            }
        }
        // With s = softmax(x): dx = s * (d - sum(d * s)); with l = log_softmax(x):
        // dx = d - exp(l) * sum(d), the sums over the axis, kept.
        Softmax => {
            let keep = e.konst(Const::Bool(true));
            let ds = op!(Mul, d, out);
            let total = op!(ReduceSum, ds, x[1], keep);
            let centered = op!(Sub, d, total);
            g[0] = Some(op!(Mul, out, centered));
        }
        LogSoftmax => {
            let keep = e.konst(Const::Bool(true));
            let total = op!(ReduceSum, d, x[1], keep);
            let s = op!(Exp, out);
            let t = op!(Mul, s, total);
            g[0] = Some(op!(Sub, d, t));
        }
        // dx = d * exp(x - out), broadcast over the reduced axes.
        LogSumExp => {
            let k = e.konst(Const::str("logsumexp"));
            g[0] = Some(op!(ReduceGrad, k, d, x[0], out, x[1], x[2]));
        }
        MaxPool2D => {
            if need(0) {
                g[0] = Some(e.op(MaxPool2DGrad, &[&[d, x[0]], &x[1..4]].concat()));
            }
        }
        AvgPool2D => {
            if need(0) {
                let shape = shape_of(e, x[0]);
                g[0] = Some(e.op(AvgPool2DGrad, &[&[d, shape], &x[1..4]].concat()));
            }
        }
        // The pooling gradients are linear in their sensitivity; where the maxima are only
        // changes where x ties, so x gets no gradient.
        MaxPool2DGrad => {
            if need(0) {
                g[0] = Some(e.op(MaxPool2DGradGrad, &[&[d, x[1]], &x[2..5]].concat()));
            }
        }
        MaxPool2DGradGrad => {
            if need(0) {
                g[0] = Some(e.op(MaxPool2DGrad, &[&[d, x[1]], &x[2..5]].concat()));
            }
        }
        AvgPool2DGrad => {
            if need(0) {
                g[0] = Some(e.op(AvgPool2D, &[&[d], &x[2..5]].concat()));
            }
        }
        Conv2DBackpropInput => {
            // out = dx(d0, w): <D, dx> = <conv(D, w), d0> = <w, dW(d0, D)>.
            let spec = &x[3..7];
            if need(0) {
                g[0] = Some(e.op(Conv2D, &[&[d, x[1]], spec].concat()));
            }
            if need(1) {
                let shape = shape_of(e, x[1]);
                g[1] = Some(e.op(Conv2DBackpropFilter, &[&[x[0], d, shape], spec].concat()));
            }
        }
        Conv2DBackpropFilter => {
            // out = dW(d0, x): <D, dW> = <conv(x, D), d0> = <x, dx(d0, D)>.
            let spec = &x[3..7];
            if need(0) {
                g[0] = Some(e.op(Conv2D, &[&[x[1], d], spec].concat()));
            }
            if need(1) {
                let shape = shape_of(e, x[1]);
                g[1] = Some(e.op(Conv2DBackpropInput, &[&[x[0], d, shape], spec].concat()));
            }
        }
        // float(x): the gradient of x in its own kind (none for ints).
        FloatType if n == 1 => g[0] = Some(op!(SumToShape, d, x[0])),
        // max(a, b) is a when a >= b (the first wins ties), min(a, b) when a <= b.
        Max | Min if n == 2 => {
            let (first, second) = if p == Max { (Ge, Lt) } else { (Le, Gt) };
            if need(0) {
                let c = op!(first, x[0], x[1]);
                let t = op!(Mul, d, c);
                g[0] = Some(op!(SumToShape, t, x[0]));
            }
            if need(1) {
                let c = op!(second, x[0], x[1]);
                let t = op!(Mul, d, c);
                g[1] = Some(op!(SumToShape, t, x[1]));
            }
        }
        // Second order: the backward kernels are linear in their sensitivity.
        ReduceGrad if matches!(e.m.constant(x[0]), Some(Const::Str(k)) if &**k == "prod_pairs") => {
            // The product's second-derivative kernel (below) is linear in its x-shaped v with
            // a symmetric matrix, so it is its own adjoint in v. A third derivative of a
            // product has no rule (E0502).
            if need(2) || need(3) {
                return None;
            }
            if need(1) {
                g[1] = Some(op!(ReduceGrad, x[0], d, x[2], x[3], x[4], x[5]));
            }
        }
        ReduceGrad => {
            // ReduceGrad(k, d, x, out, axis, keepdims) = broadcast(d) * share: its adjoint in d
            // sums dd * share back over the axes (x and out only choose the share).
            if need(1) {
                let ones = op!(SensOnes, x[3]);
                let share = op!(ReduceGrad, x[0], ones, x[2], x[3], x[4], x[5]);
                let t = op!(Mul, d, share);
                g[1] = Some(op!(ReduceSum, t, x[4], x[5]));
            }
            // A logsumexp's share exp(x - out): d(share)/dx = share, d(share)/d(out) = -share.
            if matches!(e.m.constant(x[0]), Some(Const::Str(k)) if &**k == "logsumexp") {
                let dr = op!(Mul, d, out);
                if need(2) {
                    g[2] = Some(dr);
                }
                if need(3) {
                    let s = op!(ReduceSum, dr, x[4], x[5]);
                    g[3] = Some(op!(Neg, s));
                }
            }
            // A product's share (the product of the other elements) is computed from x alone:
            // its adjoint in x is the "prod_pairs" kernel applied to dd * broadcast(d), exact at
            // zeros too.
            if matches!(e.m.constant(x[0]), Some(Const::Str(k)) if &**k == "prod") && need(2) {
                let sum = e.konst(Const::str("sum"));
                let spread = op!(ReduceGrad, sum, x[1], x[2], x[3], x[4], x[5]);
                let v = op!(Mul, d, spread);
                let pairs = e.konst(Const::str("prod_pairs"));
                g[2] = Some(op!(ReduceGrad, pairs, v, x[2], x[3], x[4], x[5]));
            }
        }
        MatMulGrad => {
            // (da, db) = (d b^T, a^T d) for a @ b: bilinear in (a, b) and d.
            let k0 = e.konst(Const::Int(0));
            let k1 = e.konst(Const::Int(1));
            let dda = op!(GradItem, d, k0);
            let dda = op!(FillZeros, dda, x[0]);
            let ddb = op!(GradItem, d, k1);
            let ddb = op!(FillZeros, ddb, x[1]);
            if need(0) {
                let t = op!(MatMulGrad, x[0], ddb, x[2]);
                g[0] = Some(op!(TupleGetItem, t, k0));
            }
            if need(1) {
                let t = op!(MatMulGrad, dda, x[1], x[2]);
                g[1] = Some(op!(TupleGetItem, t, k1));
            }
            if need(2) {
                let l = op!(MatMul, dda, x[1]);
                let r = op!(MatMul, x[0], ddb);
                g[2] = Some(op!(Add, l, r));
            }
        }
        TransposeGrad => {
            if need(0) {
                g[0] = Some(op!(Transpose, d, x[1]));
            }
        }
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
        IndexGrad => {
            if need(0) {
                g[0] = Some(op!(GradItem, d, x[2]));
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
        // The grad stage runs ops.dropout as DropoutApply(x, DropoutMask(...), p, training):
        // linear in x, with the forward pass's mask.
        DropoutApply => {
            if need(0) {
                g[0] = Some(op!(DropoutApply, d, x[1], x[2], x[3]));
            }
        }
        // A custom primitive with a registered backward rule.
        Custom(id) if anfora_ir::custom::get(id).bprop.is_some() => {
            let k = e.konst(Const::Prim(p));
            let mut ins = vec![k, d, out];
            ins.extend_from_slice(x);
            let grads = e.op(CustomGrad, &ins);
            for (i, gi) in g.iter_mut().enumerate() {
                if need(i) {
                    let ki = e.konst(Const::Int(i as i64));
                    *gi = Some(op!(TupleGetItem, grads, ki));
                }
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
        | DropoutMask | Sign | ArgMax | ArgMin | OneHot | SensOnes | StopGradient | Any | All
        | TensorType => {}
        _ => return None,
    }
    Some(g)
}

#[cfg(test)]
mod tests {
    use anfora_ir::{GraphKind, Module, Prim, Span};

    use super::{Emit, backward};

    /// Primitives the grad stage refuses on a gradient's path (E0502), each for a stated
    /// reason. Everything else has a rule, possibly "no gradient flows back".
    const WITHOUT_RULE: &[Prim] = &[
        // Never reaches a rule: the grad stage runs it as DropoutApply(x, DropoutMask(x, p,
        // training), p, training), whose backward pass reuses the mask.
        Prim::Dropout,
        // A keyword call of a function value: its binding is only known at run time.
        Prim::CallKw,
        // Sequence conversions and reductions of the builtins: not differentiated yet (use
        // tuples directly, ops.sum on tensors).
        Prim::Zip,
        Prim::TupleType,
        Prim::ListType,
        Prim::Sum,
        Prim::Divmod,
        // The second derivative of a custom primitive: its backward rule is a kernel.
        Prim::CustomGrad,
        // Expanded by the grad stage before any rule is needed.
        Prim::Grad,
        Prim::ValueAndGrad,
        Prim::Vjp,
        Prim::Jvp,
        // Emitted by the optimizer, which runs after differentiation.
        Prim::Gemm,
    ];

    #[test]
    fn every_primitive_has_a_backward_rule_or_is_refused() {
        let mut m = Module::default();
        let g = m.add_graph(
            "b",
            std::sync::Arc::from("b"),
            GraphKind::Function,
            Span::NONE,
        );
        let mut wrong = Vec::new();
        for &p in Prim::ALL {
            // Calls bind to the signature; variadic ones are tried with two arguments.
            let sig = p.signature();
            let arity = if sig.varargs {
                2
            } else {
                sig.params.len() + sig.kwonly.len()
            };
            let has_rule = {
                let xs: Vec<_> = (0..arity)
                    .map(|i| m.add_param(g, &format!("x{i}"), Span::NONE))
                    .collect();
                let out = m.add_param(g, "out", Span::NONE);
                let d = m.add_param(g, "d", Span::NONE);
                let needs = vec![true; arity];
                let mut e = Emit {
                    m: &mut m,
                    graph: g,
                    span: Span::NONE,
                };
                backward(&mut e, p, &xs, &needs, out, d).is_some()
            };
            if has_rule == WITHOUT_RULE.contains(&p) {
                wrong.push(p);
            }
        }
        assert_eq!(
            wrong,
            vec![],
            "each needs a rule, or a reason in WITHOUT_RULE"
        );
    }
}

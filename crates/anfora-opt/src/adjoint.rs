//! Gradient plumbing to plain operations. The grad stage emits helpers that work on any value
//! (`None` is a zero sensitivity, tuples add item by item, broadcasting is undone at run
//! time); once abstracts are known most of them are decided:
//! * `StopGradient(x)` is `x` (differentiation is over);
//! * `GradAdd(a, b)` is the other operand when one is a zero, `Add` for two tensors or floats
//!   of one type, and item-wise for two `MakeTuple`s;
//! * `SumToShape(d, x)` is `d` when shapes and dtypes agree, else one `ReduceSum` (plus a
//!   `Reshape` when it must both drop leading and keep unit dimensions);
//! * `BroadcastLike(d, x)` is `d` when the shapes agree;
//! * `ConcatPart(d, a, b, i)` and `ConcatPad` are `d` when `a + b` adds numbers or tensors
//!   (not when it concatenates tuples, lists or dicts);
//! * `FillZeros(d, x)` is `d` when `d` can hold no zero marker, `ZerosLike(x)` when it is one;
//! * `SensOnes(y)` is a constant (small tensors, floats) or `OnesLike(y)`;
//! * `MatMulGrad` of float matrices is two `Gemm`s that read the transposed operands in
//!   place (`d @ b^T`, `a^T @ d`), so an unused one is dead code;
//! * `GradItem`, `GradTupleAt`, `GradHead` and `GradPad` of known tuples become `MakeTuple`
//!   items, which the tuple rules of `simplify` then take apart; `GradTupleAt` of a tensor is
//!   `IndexGrad`.

use std::collections::HashMap;

use anfora_ir::{Const, GraphId, NodeId, Prim};
use anfora_ops::abs::MAX_CONST_ELEMENTS;
use anfora_ops::{Abs, TensorAbs};
use anfora_tensor::Tensor;

use crate::{Graphs, rewrite};

/// Whether a value of abstract `a` can be (or hold) the zero marker `None`.
fn may_hold_none(a: &Abs) -> bool {
    match a {
        Abs::Tensor(_) | Abs::Float(_) => false,
        Abs::Tuple(items) | Abs::List(items) => items.iter().any(may_hold_none),
        _ => true,
    }
}

fn tensor_abs(a: &Abs) -> Option<&TensorAbs> {
    match a {
        Abs::Tensor(t) => Some(t),
        _ => None,
    }
}

/// Same dtype and the same known shape.
fn same_tensor_type(a: &Abs, b: &Abs) -> bool {
    match (tensor_abs(a), tensor_abs(b)) {
        (Some(x), Some(y)) => {
            x.dtype == y.dtype && x.known_shape().is_some_and(|s| Some(s) == y.known_shape())
        }
        _ => false,
    }
}

fn items_of(p: &Graphs, n: NodeId) -> Option<Vec<NodeId>> {
    (p.module.callee_prim(n) == Some(Prim::MakeTuple)).then(|| p.module.inputs(n)[1..].to_vec())
}

/// How `SumToShape(d, x)` reduces `d` (shape `from`) to `to`: the summed axes, whether they are
/// kept, and whether a reshape must follow.
fn reduction(from: &[usize], to: &[usize]) -> Option<(Vec<i64>, bool, bool)> {
    let lead = from.len().checked_sub(to.len())?;
    let leading: Vec<i64> = (0..lead as i64).collect();
    let mut units = vec![];
    for (i, (&t, &f)) in to.iter().zip(&from[lead..]).enumerate() {
        if t == 1 && f != 1 {
            units.push((lead + i) as i64);
        } else if t != f {
            return None;
        }
    }
    Some(match (leading.is_empty(), units.is_empty()) {
        (true, _) => (units, true, false),
        (false, true) => (leading, false, false),
        (false, false) => ([leading, units].concat(), true, true),
    })
}

struct Rewriter<'p, 'a> {
    p: &'p mut Graphs<'a>,
    /// New nodes to put in a graph's order just before another node.
    before: Vec<(GraphId, NodeId, NodeId)>,
    changed: bool,
}

impl Rewriter<'_, '_> {
    /// A constant at `n`'s place (its abstract follows from the value, see [`Graphs::abs`]).
    fn konst(&mut self, n: NodeId, c: Const) -> NodeId {
        let span = self.p.module.node(n).span;
        self.p.module.value_at(c, span)
    }

    /// A new `prim(args...)` in graph `g`, evaluated just before `n`.
    fn insert_before(
        &mut self,
        g: GraphId,
        n: NodeId,
        prim: Prim,
        args: &[NodeId],
        abs: Abs,
    ) -> NodeId {
        let span = self.p.module.node(n).span;
        let mut inputs = vec![self.p.module.value(Const::Prim(prim))];
        inputs.extend_from_slice(args);
        let new = self.p.module.apply_unordered(g, inputs, span);
        self.p.abstracts.insert(new, abs);
        self.before.push((g, n, new));
        new
    }

    /// Turns node `n` into `prim(args...)` (same value, so its abstract stays).
    fn become_prim(&mut self, n: NodeId, prim: Prim, args: &[NodeId]) {
        let callee = self.p.module.value(Const::Prim(prim));
        let mut inputs = vec![callee];
        inputs.extend_from_slice(args);
        *self.p.module.inputs_mut(n).expect("an Apply") = inputs;
        self.changed = true;
    }

    fn none(&mut self, n: NodeId) -> NodeId {
        self.konst(n, Const::None)
    }

    fn int_tuple(&mut self, n: NodeId, xs: &[i64]) -> NodeId {
        self.konst(n, Const::Tuple(xs.iter().map(|&i| Const::Int(i)).collect()))
    }

    fn rule(&mut self, g: GraphId, n: NodeId, prim: Prim, args: &[NodeId]) -> Option<NodeId> {
        let abs = |r: &Self, i: usize| r.p.abs(args[i]);
        match prim {
            Prim::StopGradient => Some(args[0]),
            // Inference checked that it holds no function; a value with an unknown part keeps
            // the check.
            Prim::GradArgument => {
                anfora_ops::family::grad::holds_no_function(&abs(self, 0)).then_some(args[0])
            }
            // Inference checked that the result is a pair.
            Prim::AuxPair => {
                matches!(abs(self, 0), Abs::Tuple(xs) if xs.len() == 2).then_some(args[0])
            }
            // Inference checked the sensitivity; only unknown sizes are left to the run time.
            Prim::SensCheck => match (abs(self, 0), abs(self, 1)) {
                (Abs::Tensor(d), Abs::Tensor(y))
                    if d.shape.iter().chain(&y.shape).all(|s| s.is_some()) =>
                {
                    Some(args[0])
                }
                (Abs::Float(_) | Abs::Int(_), Abs::Float(_)) => Some(args[0]),
                _ => None,
            },
            Prim::GradAdd => {
                let (a, b) = (abs(self, 0), abs(self, 1));
                match (&a, &b) {
                    (Abs::None, _) => Some(args[1]),
                    (_, Abs::None) => Some(args[0]),
                    _ if matches!((&a, &b), (Abs::Float(_), Abs::Float(_)))
                        || same_tensor_type(&a, &b) =>
                    {
                        self.become_prim(n, Prim::Add, args);
                        None
                    }
                    _ => {
                        let (xs, ys) = (items_of(self.p, args[0])?, items_of(self.p, args[1])?);
                        if xs.len() != ys.len() {
                            return None;
                        }
                        let (Abs::Tuple(ta), Abs::Tuple(tb)) = (&a, &b) else {
                            return None;
                        };
                        let sums: Vec<NodeId> = (0..xs.len())
                            .map(|i| {
                                let sum = match (&ta[i], &tb[i]) {
                                    (Abs::None, x) | (x, _) => x.clone(),
                                };
                                self.insert_before(g, n, Prim::GradAdd, &[xs[i], ys[i]], sum)
                            })
                            .collect();
                        self.become_prim(n, Prim::MakeTuple, &sums);
                        None
                    }
                }
            }
            Prim::SumToShape => {
                let (d, x) = (abs(self, 0), abs(self, 1));
                if matches!(d, Abs::None) {
                    return Some(args[0]);
                }
                let xt = tensor_abs(&x)?;
                let dt = tensor_abs(&d)?;
                if !xt.dtype.is_float() || dt.dtype != xt.dtype {
                    return None;
                }
                let (from, to) = (dt.known_shape()?, xt.known_shape()?);
                if from == to {
                    return Some(args[0]);
                }
                let (axes, keep, reshape) = reduction(&from, &to)?;
                let axes_node = self.int_tuple(n, &axes);
                let keep_node = self.konst(n, Const::Bool(keep));
                let sum_args = [args[0], axes_node, keep_node];
                if !reshape {
                    self.become_prim(n, Prim::ReduceSum, &sum_args);
                    return None;
                }
                let kept: Vec<Option<usize>> = from
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| Some(if axes.contains(&(i as i64)) { 1 } else { s }))
                    .collect();
                let kept = Abs::tensor(TensorAbs::new(dt.dtype, kept));
                let sum = self.insert_before(g, n, Prim::ReduceSum, &sum_args, kept);
                let shape: Vec<i64> = to.iter().map(|&s| s as i64).collect();
                let shape_node = self.int_tuple(n, &shape);
                self.become_prim(n, Prim::Reshape, &[sum, shape_node]);
                None
            }
            // Not a concatenation (numbers, tensors): the whole sensitivity. (Dicts merge as
            // a `**` call collects them: their sensitivities are tuples split in two.)
            Prim::ConcatPart | Prim::ConcatPad => {
                let sequence =
                    |a: &Abs| matches!(a, Abs::Tuple(_) | Abs::List(_) | Abs::Dict(_) | Abs::Any);
                (!sequence(&abs(self, 1)) || !sequence(&abs(self, 2))).then_some(args[0])
            }
            Prim::BroadcastLike => {
                let (d, x) = (abs(self, 0), abs(self, 1));
                (matches!(d, Abs::None) || same_tensor_type(&d, &x)).then_some(args[0])
            }
            Prim::FillZeros => {
                let (d, x) = (abs(self, 0), abs(self, 1));
                if !may_hold_none(&d) {
                    return Some(args[0]);
                }
                match (&d, &x) {
                    (Abs::None, Abs::Tensor(_)) => {
                        let none = self.none(n);
                        self.become_prim(n, Prim::ZerosLike, &[args[1], none]);
                        None
                    }
                    (Abs::None, Abs::Float(_)) => Some(self.konst(n, Const::Float(0.0))),
                    _ => None,
                }
            }
            Prim::SensOnes => match abs(self, 0) {
                Abs::Float(_) => Some(self.konst(n, Const::Float(1.0))),
                Abs::Tensor(t) => {
                    if let Some(shape) = t.known_shape()
                        && shape.iter().product::<usize>() <= MAX_CONST_ELEMENTS
                        && let Ok(ones) = Tensor::ones(&shape, t.dtype)
                    {
                        return Some(self.konst(n, Const::Tensor(ones)));
                    }
                    let none = self.none(n);
                    self.become_prim(n, Prim::OnesLike, &[args[0], none]);
                    None
                }
                _ => None,
            },
            Prim::MatMulGrad => {
                // Matrices of one float dtype: two `Gemm`s reading the transposes in place
                // (`d @ b^T`, `a^T @ d`); the one nobody uses is then dead code.
                let (a, b, d) = (abs(self, 0), abs(self, 1), abs(self, 2));
                let (at, bt, dt) = (tensor_abs(&a)?, tensor_abs(&b)?, tensor_abs(&d)?);
                let matrix = |t: &TensorAbs| {
                    t.dtype == at.dtype && t.known_shape().is_some_and(|s| s.len() == 2)
                };
                if !at.dtype.is_float() || !matrix(at) || !matrix(bt) || !matrix(dt) {
                    return None;
                }
                let none = self.none(n);
                let yes = self.konst(n, Const::Bool(true));
                let no = self.konst(n, Const::Bool(false));
                let da =
                    self.insert_before(g, n, Prim::Gemm, &[args[2], args[1], none, no, yes], a);
                let db =
                    self.insert_before(g, n, Prim::Gemm, &[args[0], args[2], none, yes, no], b);
                self.become_prim(n, Prim::MakeTuple, &[da, db]);
                None
            }
            Prim::GradItem => {
                if matches!(abs(self, 0), Abs::None) {
                    return Some(args[0]);
                }
                let items = items_of(self.p, args[0])?;
                let Some(&Const::Int(i)) = self.p.module.constant(args[1]) else {
                    return None;
                };
                crate::item_index(i, items.len()).map(|j| items[j])
            }
            Prim::GradTupleAt => {
                let t = match abs(self, 0) {
                    Abs::Tuple(t) => t,
                    Abs::Tensor(_) => {
                        // The rule for integer values, when given, goes along.
                        let mut index_args = vec![args[2], args[0], args[1]];
                        index_args.extend(args.get(3).copied());
                        self.become_prim(n, Prim::IndexGrad, &index_args);
                        return None;
                    }
                    _ => return None,
                };
                let Some(&Const::Int(i)) = self.p.module.constant(args[1]) else {
                    return None;
                };
                let j = crate::item_index(i, t.len())?;
                let items: Vec<NodeId> = (0..t.len())
                    .map(|k| if k == j { args[2] } else { self.none(n) })
                    .collect();
                self.become_prim(n, Prim::MakeTuple, &items);
                None
            }
            Prim::GradHead | Prim::GradPad => {
                let items = items_of(self.p, args[0])?;
                let Some(&Const::Int(k)) = self.p.module.constant(args[1]) else {
                    return None;
                };
                let k = usize::try_from(k).ok()?;
                let new: Vec<NodeId> = if prim == Prim::GradHead {
                    items[..items.len().checked_sub(k)?].to_vec()
                } else {
                    let mut v = items;
                    v.extend((0..k).map(|_| self.none(n)));
                    v
                };
                self.become_prim(n, Prim::MakeTuple, &new);
                None
            }
            _ => None,
        }
    }
}

pub fn run(p: &mut Graphs) -> bool {
    let mut r = Rewriter {
        p,
        before: vec![],
        changed: false,
    };
    let mut repl: HashMap<NodeId, NodeId> = HashMap::new();
    for g in r.p.graphs() {
        for n in r.p.module.graph_nodes(g) {
            let Some(prim) = r.p.module.callee_prim(n) else {
                continue;
            };
            let args = r.p.module.inputs(n)[1..].to_vec();
            if let Some(to) = r.rule(g, n, prim, &args) {
                repl.insert(n, to);
            }
        }
    }
    let Rewriter { p, before, changed } = r;
    for (g, anchor, new) in before {
        // A node outside the order runs when its value is needed; so do the nodes it now uses.
        let order = &mut p.module.graphs[g].order;
        if let Some(at) = order.iter().position(|&m| m == anchor) {
            order.insert(at, new);
        }
    }
    rewrite::apply(p, &repl) || changed
}

#[cfg(test)]
mod tests {
    use anfora_ir::{Const, Prim};
    use anfora_ops::Abs;
    use anfora_ops::Value;

    use crate::testing::*;
    use crate::{dce, simplify};

    /// `main(a, b) = helper(a, b)` for tensors of the given shapes; the helper's result has
    /// abstract `out`. Returns the builder, the entry and the helper node.
    fn helper(
        prim: Prim,
        shapes: [&[usize]; 2],
        out: Abs,
    ) -> (Builder, anfora_ir::GraphId, anfora_ir::NodeId) {
        let mut b = Builder::new();
        let main = b.function("main");
        let a = b.param(main, "a", tensor_of(shapes[0]));
        let x = b.param(main, "b", tensor_of(shapes[1]));
        let n = b.prim(main, prim, &[a, x], out);
        b.output(main, n);
        (b, main, n)
    }

    fn run2(b: &Builder, main: anfora_ir::GraphId, shapes: [&[usize]; 2]) -> String {
        let args = vec![tensor_value(shapes[0]), tensor_value(shapes[1])];
        b.run(main, args).0.unwrap()
    }

    #[test]
    fn sums_of_tensors_of_one_type_are_adds() {
        let shapes: [&[usize]; 2] = [&[2, 3], &[2, 3]];
        let (mut b, main, n) = helper(Prim::GradAdd, shapes, tensor_of(&[2, 3]));
        let before = run2(&b, main, shapes);
        assert!(b.apply(main, super::run));
        assert_eq!(b.module.callee_prim(n), Some(Prim::Add));
        assert_eq!(run2(&b, main, shapes), before);
        // Different shapes broadcast at run time: left alone.
        let shapes: [&[usize]; 2] = [&[2, 3], &[3]];
        let (mut b, main, n) = helper(Prim::GradAdd, shapes, tensor_of(&[2, 3]));
        assert!(!b.apply(main, super::run));
        assert_eq!(b.module.callee_prim(n), Some(Prim::GradAdd));
    }

    #[test]
    fn a_zero_sensitivity_is_dropped_or_made_explicit() {
        let mut b = Builder::new();
        let main = b.function("main");
        let x = b.param(main, "x", tensor_of(&[2]));
        let none = b.konst(Const::None);
        let sum = b.prim(main, Prim::GradAdd, &[none, x], tensor_of(&[2]));
        let zeros = b.prim(main, Prim::FillZeros, &[none, x], tensor_of(&[2]));
        let kept = b.prim(main, Prim::FillZeros, &[sum, x], tensor_of(&[2]));
        let both = b.prim(main, Prim::MakeTuple, &[sum, zeros, kept], Abs::Any);
        b.output(main, both);
        b.abstracts.insert(none, Abs::None);
        let before = b.run(main, vec![tensor_value(&[2])]);
        assert!(b.apply(main, super::run));
        b.apply(main, dce::run);
        assert_eq!(b.prims(main), vec![Prim::ZerosLike, Prim::MakeTuple]);
        assert_eq!(b.module.inputs(both)[1], x, "GradAdd(None, x) is x");
        assert_eq!(b.module.inputs(both)[3], x, "FillZeros(x, _) is x");
        assert_eq!(b.run(main, vec![tensor_value(&[2])]), before);
    }

    #[test]
    fn sums_to_a_shape_are_reductions() {
        // (shape of d, shape of x, the primitives left)
        let cases: [(&[usize], &[usize], &[Prim]); 4] = [
            (&[2, 3], &[2, 3], &[]),
            (&[4, 2, 3], &[2, 3], &[Prim::ReduceSum]),
            (&[2, 3], &[1, 3], &[Prim::ReduceSum]),
            (&[4, 2, 3], &[2, 1], &[Prim::ReduceSum, Prim::Reshape]),
        ];
        for (d, x, left) in cases {
            let (mut b, main, _) = helper(Prim::SumToShape, [d, x], tensor_of(x));
            let before = run2(&b, main, [d, x]);
            assert!(b.apply(main, super::run));
            assert_eq!(b.prims(main), left, "{d:?} to {x:?}");
            assert_eq!(run2(&b, main, [d, x]), before, "{d:?} to {x:?}");
        }
        // Unknown dimensions are left to the run time.
        let mut b = Builder::new();
        let main = b.function("main");
        let dynamic = Abs::tensor(anfora_ops::TensorAbs::new(
            anfora_tensor::DType::F32,
            vec![None, Some(3)],
        ));
        let d = b.param(main, "d", dynamic);
        let x = b.param(main, "x", tensor_of(&[3]));
        let s = b.prim(main, Prim::SumToShape, &[d, x], tensor_of(&[3]));
        b.output(main, s);
        assert!(!b.apply(main, super::run));
    }

    #[test]
    fn tuple_sensitivities_become_tuples_that_simplify_takes_apart() {
        // main(t, d) = GradItem(GradTupleAt(t, 1, d), 1) + GradItem(GradPad(GradHead(...)))
        let mut b = Builder::new();
        let main = b.function("main");
        let pair = Abs::tuple(vec![tensor_of(&[2]), tensor_of(&[2])]);
        let t = b.param(main, "t", pair.clone());
        let d = b.param(main, "d", tensor_of(&[2]));
        let [k0, k1] = [0, 1].map(|i| b.konst(Const::Int(i)));
        let at = b.prim(
            main,
            Prim::GradTupleAt,
            &[t, k1, d],
            Abs::tuple(vec![Abs::None, tensor_of(&[2])]),
        );
        let item = b.prim(main, Prim::GradItem, &[at, k1], tensor_of(&[2]));
        let zero = b.prim(main, Prim::GradItem, &[at, k0], Abs::None);
        let head = b.prim(main, Prim::GradHead, &[at, k1], Abs::tuple(vec![Abs::None]));
        let padded = b.prim(
            main,
            Prim::GradPad,
            &[head, k1],
            Abs::tuple(vec![Abs::None, Abs::None]),
        );
        let out = b.prim(main, Prim::MakeTuple, &[item, zero, padded], Abs::Any);
        b.output(main, out);
        let args = || {
            vec![
                Value::tuple(vec![tensor_value(&[2]), tensor_value(&[2])]),
                tensor_value(&[2]),
            ]
        };
        let before = b.run(main, args());
        for _ in 0..3 {
            b.apply(main, super::run);
            b.apply(main, simplify::run);
            b.apply(main, dce::run);
        }
        assert_eq!(b.prims(main), vec![Prim::MakeTuple, Prim::MakeTuple]);
        assert_eq!(b.module.inputs(out)[1], d);
        assert_eq!(b.run(main, args()), before);
    }
}

//! Local simplifications:
//! * `Switch` on a constant condition is the branch taken;
//! * calling `Partial(f, a...)` calls `f` with the bound arguments first;
//! * tuple plumbing: an item of a `MakeTuple` (also behind a `Depend`), `Unpack` of a tuple
//!   of the right length; `Depend` of a constant;
//! * constant folding of pure primitives, with the runtime's own implementations;
//! * arithmetic identities that hold for the types involved (`x * 1`, `x + 0` for ints,
//!   `x - 0`, `x / 1` for floats and float tensors, `-(-x)` for floats, `Truth` of a bool);
//! * `IterSequence` of anything but a dict (the sequence a `for` loop walks) is its operand.

use std::collections::HashMap;

use anfora_ir::{Const, Effects, NodeId, Prim};
use anfora_ops::Abs;
use anfora_ops::abs::MAX_CONST_ELEMENTS;
use anfora_ops::value::{from_const, to_const};

use crate::{Graphs, rewrite};

fn const_int(p: &Graphs, n: NodeId) -> Option<i64> {
    match p.module.constant(n) {
        Some(Const::Int(i)) => Some(*i),
        Some(Const::Bool(b)) => Some(*b as i64),
        _ => None,
    }
}

/// Whether node `n` is the constant `v` (an int, or a float with the same bits: `-0.0` is
/// not `0.0`, since `x - (-0.0)` turns `-0.0` into `0.0`).
fn is_number_const(p: &Graphs, n: NodeId, v: f64) -> bool {
    match p.module.constant(n) {
        Some(Const::Int(i)) => *i as f64 == v,
        Some(Const::Float(f)) => f.to_bits() == v.to_bits(),
        _ => false,
    }
}

/// Same type and shape as the result: `x op k` can be `x` itself.
fn keeps_type(result: &Abs, x: &Abs) -> bool {
    match (result, x) {
        (Abs::Int(_), Abs::Int(_)) | (Abs::Float(_), Abs::Float(_)) => true,
        (Abs::Tensor(r), Abs::Tensor(t)) => {
            r.dtype == t.dtype && r.shape == t.shape && r.known_shape().is_some()
        }
        _ => false,
    }
}

/// The items of `MakeTuple(..)` (through a `Depend`), when `n` is one.
fn made_tuple(p: &Graphs, n: NodeId) -> Option<Vec<NodeId>> {
    let t = match p.module.callee_prim(n) {
        Some(Prim::Depend) => p.module.inputs(n)[1],
        _ => n,
    };
    (p.module.callee_prim(t) == Some(Prim::MakeTuple)).then(|| p.module.inputs(t)[1..].to_vec())
}

/// The items of a tuple slice `t[a:b:c]` or a concatenation `t + u` of tuples made here, with
/// constant bounds: the operands of the `MakeTuple` that replaces it.
fn tuple_of_tuples(p: &Graphs, prim: Prim, args: &[NodeId]) -> Option<Vec<NodeId>> {
    match prim {
        Prim::Add
            if matches!(p.abs(args[0]), Abs::Tuple(_))
                && matches!(p.abs(args[1]), Abs::Tuple(_)) =>
        {
            let mut items = made_tuple(p, args[0])?;
            items.extend(made_tuple(p, args[1])?);
            Some(items)
        }
        Prim::GetItem if p.module.callee_prim(args[1]) == Some(Prim::MakeSlice) => {
            let items = made_tuple(p, args[0])?;
            let bound = |i: usize| -> Option<Option<i64>> {
                let b = *p.module.inputs(args[1]).get(i + 1)?;
                match p.module.constant(b) {
                    Some(Const::None) => Some(None),
                    _ => const_int(p, b).map(Some),
                }
            };
            let picked = crate::slice_indices(items.len(), bound(0)?, bound(1)?, bound(2)?)?;
            Some(picked.into_iter().map(|j| items[j]).collect())
        }
        _ => None,
    }
}

pub fn run(p: &mut Graphs) -> bool {
    run_with(p, &Prim::effects)
}

/// [`run`] with the effect attributes given by `effects` (tests mark primitives hidden).
pub(crate) fn run_with(p: &mut Graphs, effects: &dyn Fn(Prim) -> Effects) -> bool {
    let mut repl: HashMap<NodeId, NodeId> = HashMap::new();
    let mut rewritten = false;
    // Depends whose completion a state records (`UpdateState(u, Depend(x, s))`, an inlined
    // call's result) or that a caller waits for (a graph's output): they order the states,
    // whatever their value.
    let mut ordering: std::collections::HashSet<NodeId> = std::collections::HashSet::new();
    for g in p.graphs() {
        ordering.extend(p.module.graph(g).output);
        for n in p.module.graph_nodes(g) {
            if p.module.callee_prim(n) == Some(Prim::UpdateState) {
                ordering.extend(p.module.inputs(n).get(2).copied());
            }
        }
    }
    for g in p.graphs() {
        for n in p.module.graph_nodes(g) {
            let inputs = p.module.inputs(n).to_vec();
            // Calls of partial applications.
            if p.module.is_apply(inputs[0])
                && p.module.callee_prim(inputs[0]) == Some(Prim::Partial)
            {
                let partial = p.module.inputs(inputs[0]).to_vec();
                let mut new_inputs = vec![partial[1]];
                new_inputs.extend_from_slice(&partial[2..]);
                new_inputs.extend_from_slice(&inputs[1..]);
                *p.module.inputs_mut(n).expect("an Apply") = new_inputs;
                rewritten = true;
                continue;
            }
            let Some(prim) = p.module.callee_prim(n) else {
                continue;
            };
            let args = &inputs[1..];
            // Slices and concatenations of tuples built here are tuples built here: their
            // items' producers stay visible to later passes (the schedule of collectives).
            if let Some(items) = tuple_of_tuples(p, prim, args) {
                let mut new_inputs = vec![p.module.value(Const::Prim(Prim::MakeTuple))];
                new_inputs.extend(items);
                *p.module.inputs_mut(n).expect("an Apply") = new_inputs;
                rewritten = true;
                continue;
            }
            let result = p.abs(n);
            let replacement: Option<NodeId> = match prim {
                Prim::Switch => match p.module.constant(args[0]) {
                    Some(Const::Bool(true)) => Some(args[1]),
                    Some(Const::Bool(false)) => Some(args[2]),
                    _ => None,
                },
                Prim::TupleGetItem | Prim::GetItem => {
                    // Values are pure in the monadic form: an item of
                    // `Depend(MakeTuple(..), s...)` is the item (the order list keeps effects).
                    let tuple = match p.module.callee_prim(args[0]) {
                        Some(Prim::Depend) => p.module.inputs(args[0])[1],
                        _ => args[0],
                    };
                    match (p.module.callee_prim(tuple), const_int(p, args[1])) {
                        (Some(Prim::MakeTuple), Some(i)) => {
                            let items = &p.module.inputs(tuple)[1..];
                            crate::item_index(i, items.len()).map(|j| items[j])
                        }
                        _ => None,
                    }
                }
                // A constant is the same whenever it is used (unless a state waits for it).
                Prim::Depend => (p.module.constant(args[0]).is_some() && !ordering.contains(&n))
                    .then_some(args[0]),
                Prim::Unpack => match (p.abs(args[0]), const_int(p, args[1])) {
                    (Abs::Tuple(items), Some(k)) if items.len() as i64 == k => Some(args[0]),
                    _ => None,
                },
                Prim::Truth => matches!(p.abs(args[0]), Abs::Bool(_)).then_some(args[0]),
                // A `for` loop walks anything but a dict itself.
                Prim::IterSequence => {
                    (!matches!(p.abs(args[0]), Abs::Dict(_) | Abs::Any)).then_some(args[0])
                }
                Prim::Mul => {
                    if is_number_const(p, args[1], 1.0) && keeps_type(&result, &p.abs(args[0])) {
                        Some(args[0])
                    } else if is_number_const(p, args[0], 1.0)
                        && keeps_type(&result, &p.abs(args[1]))
                    {
                        Some(args[1])
                    } else {
                        None
                    }
                }
                Prim::Add => {
                    // -0.0 + 0 is 0.0: only ints may drop an added zero.
                    let int = |a: &Abs| {
                        matches!(a, Abs::Int(_)) || matches!(a, Abs::Tensor(t) if t.dtype.is_int())
                    };
                    if matches!(p.module.constant(args[1]), Some(Const::Int(0)))
                        && int(&p.abs(args[0]))
                        && keeps_type(&result, &p.abs(args[0]))
                    {
                        Some(args[0])
                    } else if matches!(p.module.constant(args[0]), Some(Const::Int(0)))
                        && int(&p.abs(args[1]))
                        && keeps_type(&result, &p.abs(args[1]))
                    {
                        Some(args[1])
                    } else {
                        None
                    }
                }
                Prim::Sub | Prim::Div => {
                    let unit = if prim == Prim::Sub { 0.0 } else { 1.0 };
                    let float = matches!(p.abs(args[0]), Abs::Float(_))
                        || matches!(p.abs(args[0]), Abs::Tensor(ref t) if t.dtype.is_float())
                        || (prim == Prim::Sub && matches!(p.abs(args[0]), Abs::Int(_)));
                    (is_number_const(p, args[1], unit)
                        && float
                        && keeps_type(&result, &p.abs(args[0])))
                    .then_some(args[0])
                }
                Prim::Neg => {
                    let inner = args[0];
                    let float = matches!(p.abs(inner), Abs::Float(_) | Abs::Tensor(_))
                        && !matches!(p.abs(inner), Abs::Tensor(ref t) if t.dtype.is_int());
                    (p.module.callee_prim(inner) == Some(Prim::Neg) && float)
                        .then(|| p.module.inputs(inner)[1])
                }
                _ => None,
            };
            // Arithmetic on a Python float makes a new object, which a NaN can tell apart from
            // its operand (`(x * 1.0,) == (x,)` is False): such a result is never its operand.
            let new_float = matches!(result, Abs::Float(None))
                && matches!(
                    prim,
                    Prim::Mul | Prim::Add | Prim::Sub | Prim::Div | Prim::Neg
                );
            let replacement = replacement.filter(|_| !new_float);
            if let Some(r) = replacement {
                repl.insert(n, r);
                continue;
            }
            // Constant folding.
            // Building containers is left to the tuple rules.
            if prim.foldable_with(effects(prim))
                && !matches!(prim, Prim::MakeTuple | Prim::MakeList)
            {
                let values: Option<Vec<_>> = args
                    .iter()
                    .map(|&a| {
                        p.module
                            .constant(a)
                            .map(|c| from_const(c, &mut |_| anfora_ops::Value::None))
                    })
                    .collect();
                // Graph constants need closures; a Parameter's value changes between calls.
                let has_graph = args.iter().any(|&a| {
                    p.module.constant(a).is_some_and(|c| {
                        c.holds_graph() || matches!(c, Const::Ref(_) | Const::Monad(_))
                    })
                });
                if let (Some(values), false) = (values, has_graph)
                    && let Ok(v) = anfora_ops::call::call_prim(prim, &values, &mut std::io::sink())
                    && !v.holds_nan()
                    && !v.too_large_to_fold()
                    && let Some(c) = to_const(&v)
                    && !matches!(&c, Const::Tensor(t) if t.numel() > MAX_CONST_ELEMENTS)
                {
                    let span = p.module.node(n).span;
                    let k = p.module.value_at(c, span);
                    p.abstracts.insert(k, anfora_ops::abs::from_value(&v));
                    repl.insert(n, k);
                }
            }
        }
    }
    rewrite::apply(p, &repl) || rewritten
}

#[cfg(test)]
mod tests {
    use anfora_ir::{Const, GraphKind, Prim};
    use anfora_ops::Value;

    use crate::testing::*;
    use crate::{dce, inline};

    /// `f(a, b, c) = a * 100 + b * 10 + c`.
    fn digits(b: &mut Builder) -> anfora_ir::GraphId {
        let f = b.function("f");
        let [x, y, z] = ["a", "b", "c"].map(|n| b.param(f, n, int()));
        let k100 = b.konst(Const::Int(100));
        let k10 = b.konst(Const::Int(10));
        let hx = b.prim(f, Prim::Mul, &[x, k100], int());
        let ty = b.prim(f, Prim::Mul, &[y, k10], int());
        let s = b.prim(f, Prim::Add, &[hx, ty], int());
        let out = b.prim(f, Prim::Add, &[s, z], int());
        b.output(f, out);
        f
    }

    #[test]
    fn calls_of_partial_applications_become_direct_calls() {
        // main(x) = Partial(Partial(f, 1), 2)(x)
        let mut b = Builder::new();
        let f = digits(&mut b);
        let main = b.function("main");
        let x = b.param(main, "x", int());
        let fv = b.graph_value(f);
        let one = b.konst(Const::Int(1));
        let two = b.konst(Const::Int(2));
        let p1 = b.prim(main, Prim::Partial, &[fv, one], anfora_ops::Abs::Any);
        let p2 = b.prim(main, Prim::Partial, &[p1, two], anfora_ops::Abs::Any);
        let r = b.call(main, p2, &[x], int());
        b.output(main, r);
        assert_eq!(b.run(main, vec![Value::Int(3)]).0, Ok("123".into()));
        // One run per level of partial application.
        assert!(b.apply(main, super::run));
        assert_eq!(b.module.inputs(r)[0], p1);
        assert!(b.apply(main, super::run));
        assert_eq!(b.module.inputs(r), &[fv, one, two, x]);
        assert_eq!(b.module.callee_graph(r), Some(f));
        assert!(!b.apply(main, super::run));
        assert_eq!(b.run(main, vec![Value::Int(3)]).0, Ok("123".into()));
        // The partial applications are dead now, and creating one has no effect.
        assert!(b.apply(main, dce::run));
        assert_eq!(b.prims(main), vec![]);
        assert!(b.apply(main, inline::run));
        assert!(!b.prims(main).contains(&Prim::Partial));
        assert_eq!(b.reachable(main), vec![main]);
        assert_eq!(b.run(main, vec![Value::Int(3)]).0, Ok("123".into()));
    }

    /// main(x) = Switch(cond, @t, @e)() with t() = x + 1 and e() = x - 1; the condition is
    /// the constant `cond`, or `x > 1` for `None`.
    fn branch(cond: Option<bool>, b: &mut Builder) -> (anfora_ir::GraphId, anfora_ir::NodeId) {
        let main = b.function("main");
        let x = b.param(main, "x", int());
        let one = b.konst(Const::Int(1));
        let t = b.graph("t", GraphKind::TrueBranch);
        let add = b.prim(t, Prim::Add, &[x, one], int());
        b.output(t, add);
        let e = b.graph("e", GraphKind::FalseBranch);
        let sub = b.prim(e, Prim::Sub, &[x, one], int());
        b.output(e, sub);
        let (tv, ev) = (b.graph_value(t), b.graph_value(e));
        let cond = match cond {
            Some(c) => b.konst(Const::Bool(c)),
            None => b.prim(main, Prim::Gt, &[x, one], anfora_ops::Abs::Bool(None)),
        };
        let s = b.prim(main, Prim::Switch, &[cond, tv, ev], anfora_ops::Abs::Any);
        let r = b.unordered(main, s, &[], int());
        b.output(main, r);
        (main, s)
    }

    #[test]
    fn a_switch_on_a_constant_is_the_branch_taken() {
        for (cond, taken, value) in [(true, "t", "4"), (false, "e", "2")] {
            let mut b = Builder::new();
            let (main, _) = branch(Some(cond), &mut b);
            assert_eq!(b.run(main, vec![Value::Int(3)]).0, Ok(value.into()));
            assert!(b.apply(main, super::run));
            assert_eq!(b.prims(main), vec![], "the Switch is gone");
            let out = b.module.graph(main).output.unwrap();
            let callee = b.module.callee_graph(out).expect("a direct call");
            assert_eq!(b.module.graph(callee).name, taken);
            assert_eq!(
                b.reachable(main).len(),
                2,
                "the other branch is unreachable"
            );
            assert_eq!(b.run(main, vec![Value::Int(3)]).0, Ok(value.into()));
            assert!(b.apply(main, inline::run));
            assert_eq!(b.reachable(main), vec![main]);
            assert_eq!(b.run(main, vec![Value::Int(3)]).0, Ok(value.into()));
        }
    }

    #[test]
    fn a_switch_on_a_run_time_condition_stays() {
        let mut b = Builder::new();
        let (main, s) = branch(None, &mut b);
        b.apply(main, super::run);
        assert!(b.module.graph(main).order.contains(&s));
        assert_eq!(b.prims(main), vec![Prim::Gt, Prim::Switch]);
        assert_eq!(b.run(main, vec![Value::Int(3)]).0, Ok("4".into()));
        assert_eq!(b.run(main, vec![Value::Int(0)]).0, Ok("-1".into()));
    }

    #[test]
    fn constants_fold_with_the_runtime_semantics() {
        // main(x) = ((2 + 3) * x, -7 // 2, "a" == "a", 1 / 0 if used)
        let mut b = Builder::new();
        let main = b.function("main");
        let x = b.param(main, "x", int());
        let [k2, k3, km7] = [2, 3, -7].map(|i| b.konst(Const::Int(i)));
        let add = b.prim(main, Prim::Add, &[k2, k3], int());
        let mul = b.prim(main, Prim::Mul, &[add, x], int());
        let fdiv = b.prim(main, Prim::FloorDiv, &[km7, k2], int());
        let sa = b.konst(Const::str("a"));
        let sb = b.konst(Const::str("a"));
        let eq = b.prim(main, Prim::Eq, &[sa, sb], anfora_ops::Abs::Bool(None));
        let big = b.konst(Const::Int(i64::MAX));
        let one = b.konst(Const::Int(1));
        let overflow = b.prim(main, Prim::Add, &[big, one], int());
        let tuple = b.prim(
            main,
            Prim::MakeTuple,
            &[mul, fdiv, eq],
            anfora_ops::Abs::Any,
        );
        b.output(main, tuple);
        let overflows = |b: &Builder| matches!(b.run(main, vec![Value::Int(4)]).0, Err(e) if e.starts_with("OverflowError"));
        assert!(overflows(&b));
        assert!(b.apply(main, super::run));
        assert_eq!(b.prims(main), vec![Prim::Mul, Prim::Add, Prim::MakeTuple]);
        assert_eq!(
            b.module
                .constant(b.module.inputs(mul)[1])
                .map(|c| c.to_string()),
            Some("I64(5)".into())
        );
        let items: Vec<String> = b.module.inputs(tuple)[2..]
            .iter()
            .map(|&i| {
                b.module
                    .constant(i)
                    .map(|c| c.to_string())
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(items, vec!["I64(-4)", "Bool(1)"]);
        assert!(
            b.module.graph(main).order.contains(&overflow),
            "an overflow is not folded"
        );
        assert!(overflows(&b));
        b.module.graphs[main].order.retain(|&n| n != overflow);
        assert_eq!(
            b.run(main, vec![Value::Int(4)]).0,
            Ok("(20, -4, True)".into())
        );
    }

    #[test]
    fn effects_and_hidden_primitives_are_not_folded() {
        let mut b = Builder::new();
        let main = b.function("main");
        let [k2, k3] = [2, 3].map(|i| b.konst(Const::Int(i)));
        let add = b.prim(main, Prim::Add, &[k2, k3], int());
        let print = b.print(main, &[k2, k3]);
        let tuple = b.prim(main, Prim::MakeTuple, &[add, print], anfora_ops::Abs::Any);
        b.output(main, tuple);
        assert!(!b.apply(main, |p| super::run_with(p, &hiding(&[Prim::Add]))));
        assert_eq!(b.prims(main), vec![Prim::Add, Prim::Print, Prim::MakeTuple]);
        assert!(b.apply(main, super::run));
        assert_eq!(b.prims(main), vec![Prim::Print, Prim::MakeTuple]);
        assert_eq!(
            b.run(main, vec![]),
            (Ok("(5, None)".into()), "2 3\n".into())
        );
    }

    #[test]
    fn subtracting_negative_zero_is_not_an_identity() {
        // f - (-0.0) is 0.0 for f = -0.0; f - 0.0 is f (for a tensor: a Python float result
        // is a new object, which a NaN tells apart from f).
        let zero = || Value::Tensor(anfora_tensor::Tensor::from_f32(vec![-0.0], &[1]).unwrap());
        for (abs, arg, k, removed) in [
            (tensor(1), zero(), -0.0, false),
            (tensor(1), zero(), 0.0, true),
            (float(), Value::Float(-0.0), 0.0, false),
        ] {
            let mut b = Builder::new();
            let main = b.function("main");
            let f = b.param(main, "f", abs.clone());
            let kn = b.konst(Const::Float(k));
            let sub = b.prim(main, Prim::Sub, &[f, kn], abs);
            b.output(main, sub);
            let before = b.run(main, vec![arg.clone()]);
            assert_eq!(b.apply(main, super::run), removed);
            assert_eq!(b.run(main, vec![arg]), before);
        }
    }

    #[test]
    fn slices_and_concatenations_of_tuples_made_here_become_tuples() {
        // main(a, b, c) = ((a, b, c)[1:] + (c,))[::-1]
        let mut b = Builder::new();
        let main = b.function("main");
        let [x, y, z] = ["a", "b", "c"].map(|n| b.param(main, n, int()));
        let tuple_abs = |n: usize| anfora_ops::Abs::Tuple(vec![int(); n].into());
        let t = b.prim(main, Prim::MakeTuple, &[x, y, z], tuple_abs(3));
        let [one, none] = [Const::Int(1), Const::None].map(|c| b.konst(c));
        let from_one = b.prim(
            main,
            Prim::MakeSlice,
            &[one, none, none],
            anfora_ops::Abs::Any,
        );
        let tail = b.prim(main, Prim::GetItem, &[t, from_one], tuple_abs(2));
        let last = b.prim(main, Prim::MakeTuple, &[z], tuple_abs(1));
        let joined = b.prim(main, Prim::Add, &[tail, last], tuple_abs(3));
        let minus_one = b.konst(Const::Int(-1));
        let backwards = b.prim(
            main,
            Prim::MakeSlice,
            &[none, none, minus_one],
            anfora_ops::Abs::Any,
        );
        let reversed = b.prim(main, Prim::GetItem, &[joined, backwards], tuple_abs(3));
        b.output(main, reversed);
        let args = || vec![Value::Int(1), Value::Int(2), Value::Int(3)];
        let before = b.run(main, args()).0;
        assert_eq!(before, Ok("(3, 3, 2)".into()));
        assert!(b.apply(main, super::run));
        assert_eq!(b.module.inputs(reversed)[1..], [z, z, y]);
        assert_eq!(b.run(main, args()).0, before);
    }

    #[test]
    fn slice_indices_are_pythons() {
        use crate::slice_indices as s;
        assert_eq!(s(5, Some(1), None, None), Some(vec![1, 2, 3, 4]));
        assert_eq!(s(5, Some(-2), None, None), Some(vec![3, 4]));
        assert_eq!(s(5, None, Some(-1), Some(2)), Some(vec![0, 2]));
        assert_eq!(s(5, None, None, Some(-2)), Some(vec![4, 2, 0]));
        assert_eq!(
            s(5, Some(10), Some(-10), Some(-1)),
            Some(vec![4, 3, 2, 1, 0])
        );
        assert_eq!(s(5, Some(3), Some(1), None), Some(vec![]));
        assert_eq!(s(5, None, None, Some(0)), None);
    }
}

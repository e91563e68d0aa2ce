//! Common-subexpression elimination: within a graph, a pure primitive applied to the same
//! inputs as an earlier one is replaced by it. Effects, calls of graphs and primitives marked
//! `side_effect_hidden` (random number generators) are never merged.

use std::collections::HashMap;

use anfora_ir::{Const, Effects, NodeId, Prim};
use anfora_ops::abs::Abs;

use crate::{Graphs, rewrite};

/// How an input takes part in the key: an Apply or Parameter node, or a constant (numbered
/// by value: equal constants held by different Value nodes are the same input).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum KeyIn {
    Node(NodeId),
    Const(usize),
}

/// Numbers constants by structural equality ([`Const::same_as`]: floats by bits, tensors by
/// dtype, shape and data). Text alone does not identify a constant: a tensor prints rounded
/// and abbreviated.
#[derive(Default)]
struct Constants {
    buckets: HashMap<String, Vec<(Const, usize)>>,
    count: usize,
}

impl Constants {
    fn number(&mut self, c: &Const) -> usize {
        let bucket = self.buckets.entry(c.to_string()).or_default();
        if let Some((_, k)) = bucket.iter().find(|(d, _)| d.same_as(c)) {
            return *k;
        }
        self.count += 1;
        bucket.push((c.clone(), self.count));
        self.count
    }
}

/// A Python float that may be NaN: each evaluation is a new object, which containers tell
/// apart by identity (`(a,) == (b,)` for two NaNs made apart is False), so it is not merged.
fn may_be_nan(p: &Graphs, n: NodeId) -> bool {
    // An Apply node's abstract is in the table (read in place: `Graphs::abs` clones it).
    matches!(p.abstracts.get(&n), Some(Abs::Float(None)))
}

pub fn run(p: &mut Graphs) -> bool {
    run_with(p, &Prim::effects)
}

/// [`run`] with the effect attributes given by `effects` (tests mark primitives hidden).
pub(crate) fn run_with(p: &mut Graphs, effects: &dyn Fn(Prim) -> Effects) -> bool {
    let mut repl: HashMap<NodeId, NodeId> = HashMap::new();
    let mut constants = Constants::default();
    for g in p.graphs() {
        let mut seen: HashMap<(Prim, Vec<KeyIn>), NodeId> = HashMap::new();
        for n in p.module.graph_nodes(g) {
            let Some(prim) = p.module.callee_prim(n) else {
                continue;
            };
            if !prim.pure_with(effects(prim)) || prim == Prim::CheckBound || may_be_nan(p, n) {
                continue;
            }
            let key: Vec<KeyIn> = p.module.inputs(n)[1..]
                .iter()
                .map(|&i| {
                    let i = *repl.get(&i).unwrap_or(&i);
                    match p.module.constant(i) {
                        Some(c) => KeyIn::Const(constants.number(c)),
                        None => KeyIn::Node(i),
                    }
                })
                .collect();
            match seen.get(&(prim, key.clone())) {
                Some(&earlier) => {
                    repl.insert(n, earlier);
                }
                None => {
                    seen.insert((prim, key), n);
                }
            }
        }
    }
    rewrite::apply(p, &repl)
}

#[cfg(test)]
mod tests {
    use anfora_ir::{Const, Prim};
    use anfora_ops::Abs;
    use anfora_ops::Value;
    use anfora_tensor::Tensor;

    use crate::testing::*;

    /// main(x) = (x + k1, x + k2) for two constant nodes.
    fn two_adds(k1: Const, k2: Const, abs: Abs) -> (Builder, anfora_ir::GraphId) {
        let mut b = Builder::new();
        let main = b.function("main");
        let x = b.param(main, "x", abs.clone());
        let (k1, k2) = (b.konst(k1), b.konst(k2));
        let a1 = b.prim(main, Prim::Add, &[x, k1], abs.clone());
        let a2 = b.prim(main, Prim::Add, &[x, k2], abs);
        let t = b.prim(main, Prim::MakeTuple, &[a1, a2], Abs::Any);
        b.output(main, t);
        (b, main)
    }

    #[test]
    fn identical_additions_merge() {
        let (mut b, main) = two_adds(Const::Int(1), Const::Int(1), int());
        assert!(b.apply(main, super::run));
        assert_eq!(b.prims(main), vec![Prim::Add, Prim::MakeTuple]);
        let t = b.module.graph(main).output.unwrap();
        assert_eq!(b.module.inputs(t)[1], b.module.inputs(t)[2]);
        assert_eq!(b.run(main, vec![Value::Int(2)]).0, Ok("(3, 3)".into()));
    }

    /// Python floats may be NaN, each a new object: `(x + 1.0,) == (x + 1.0,)` is False for a
    /// NaN `x` in CPython, so two such additions stay apart (tensors still merge).
    #[test]
    fn python_float_results_never_merge() {
        let (mut b, main) = two_adds(Const::Float(1.0), Const::Float(1.0), Abs::Float(None));
        assert!(!b.apply(main, super::run));
        assert_eq!(b.prims(main), vec![Prim::Add, Prim::Add, Prim::MakeTuple]);
        let (mut b, main) = two_adds(Const::Int(1), Const::Int(1), int());
        assert!(b.apply(main, super::run));
    }

    #[test]
    fn primitives_with_hidden_effects_never_merge() {
        let (mut b, main) = two_adds(Const::Int(1), Const::Int(1), int());
        assert!(!b.apply(main, |p| super::run_with(p, &hiding(&[Prim::Add]))));
        assert_eq!(b.prims(main), vec![Prim::Add, Prim::Add, Prim::MakeTuple]);
        // Another primitive marked hidden does not stop the merge.
        assert!(b.apply(main, |p| super::run_with(p, &hiding(&[Prim::Mul]))));
        assert_eq!(b.prims(main), vec![Prim::Add, Prim::MakeTuple]);
    }

    #[test]
    fn prints_never_merge() {
        let mut b = Builder::new();
        let main = b.function("main");
        let x = b.param(main, "x", int());
        let p1 = b.print(main, &[x]);
        let p2 = b.print(main, &[x]);
        let t = b.prim(main, Prim::MakeTuple, &[p1, p2], Abs::Any);
        b.output(main, t);
        assert!(!b.apply(main, super::run));
        assert_eq!(
            b.prims(main),
            vec![Prim::Print, Prim::Print, Prim::MakeTuple]
        );
        assert_eq!(
            b.run(main, vec![Value::Int(7)]),
            (Ok("(None, None)".into()), "7\n7\n".into())
        );
    }

    #[test]
    fn constants_are_compared_by_value_and_bits() {
        // Equal constants in different Value nodes merge (adding to a tensor: Python float
        // results never merge).
        let (mut b, main) = two_adds(Const::Float(0.5), Const::Float(0.5), tensor(2));
        assert!(b.apply(main, super::run));
        // 0.0 and -0.0, 1 and 1.0 and True, "1" and 1 do not.
        for (k1, k2) in [
            (Const::Float(0.0), Const::Float(-0.0)),
            (Const::Int(1), Const::Float(1.0)),
            (Const::Int(1), Const::Bool(true)),
            (
                Const::tuple(vec![Const::Int(1)]),
                Const::tuple(vec![Const::Float(1.0)]),
            ),
        ] {
            let (mut b, main) = two_adds(k1.clone(), k2.clone(), tensor(2));
            assert!(!b.apply(main, super::run), "{k1} and {k2}");
        }
    }

    #[test]
    fn tensor_constants_are_compared_by_data() {
        let t = |v: Vec<f64>| Const::Tensor(Tensor::from_f64(v, &[2]).unwrap());
        let (mut b, main) = two_adds(t(vec![0.1, 0.2]), t(vec![0.1, 0.2]), tensor(2));
        assert!(b.apply(main, super::run), "the same data");
        // Printed with numpy's 8 digits, these look the same.
        let (mut b, main) = two_adds(t(vec![0.1, 0.2]), t(vec![0.1000000001, 0.2]), tensor(2));
        assert!(!b.apply(main, super::run));
        let in_tuple = |v| Const::tuple(vec![t(v)]);
        let (mut b, main) = two_adds(
            in_tuple(vec![0.1, 0.2]),
            in_tuple(vec![0.1000000001, 0.2]),
            Abs::Any,
        );
        assert!(!b.apply(main, super::run));
    }
}

//! The schedule of overlapped collectives: each `AllReduceStart` moves to just after the last
//! of its operands (and the communication state it takes) in its graph's evaluation order,
//! with the `MakeTuple` it reduces, so its data moves while the rest of the program computes
//! (in a training step, the backward pass of the earlier layers; PyTorch DDP's and Horovod's
//! bucket overlap). Nothing but positions in the order changes: a start depends only on
//! values and on the communication chain, which it still follows.

use anfora_ir::{GraphId, NodeId, Prim};

use crate::Graphs;

/// Moves every `AllReduceStart` as early as its operands allow. Returns whether any moved.
pub fn run(p: &mut Graphs) -> bool {
    let mut moved = false;
    for g in p.graphs() {
        let starts: Vec<NodeId> = p
            .module
            .graph(g)
            .order
            .iter()
            .copied()
            .filter(|&n| p.module.callee_prim(n) == Some(Prim::AllReduceStart))
            .collect();
        for n in starts {
            let tuples: Vec<NodeId> = p.module.inputs(n)[1..]
                .iter()
                .copied()
                .filter(|&i| p.module.callee_prim(i) == Some(Prim::MakeTuple))
                .collect();
            for t in tuples {
                moved |= hoist(p, g, t);
            }
            moved |= hoist(p, g, n);
        }
    }
    moved
}

/// Moves `n` to just after the last of its inputs in `g`'s order.
fn hoist(p: &mut Graphs, g: GraphId, n: NodeId) -> bool {
    let inputs = p.module.inputs(n)[1..].to_vec();
    let order = &mut p.module.graphs[g].order;
    let Some(at) = order.iter().position(|&x| x == n) else {
        return false;
    };
    let earliest = inputs
        .iter()
        .filter_map(|i| order.iter().position(|x| x == i))
        .max()
        .map_or(0, |k| k + 1);
    if earliest >= at {
        return false;
    }
    order.remove(at);
    order.insert(earliest, n);
    true
}

#[cfg(test)]
mod tests {
    use anfora_ir::{Const, Monad, Prim};

    use crate::testing::{Builder, tensor};

    #[test]
    fn a_start_moves_to_just_after_its_operands_with_its_tuple() {
        let mut b = Builder::new();
        let main = b.function("main");
        let x = b.param(main, "x", tensor(4));
        let late = b.param(main, "late", tensor(4));
        let grad = b.prim(main, Prim::Neg, &[x], tensor(4));
        let busy = b.prim(main, Prim::Exp, &[late], tensor(4));
        let busier = b.prim(main, Prim::Exp, &[busy], tensor(4));
        let bucket = b.prim(main, Prim::MakeTuple, &[grad], anfora_ops::Abs::Any);
        let mean = b.konst(Const::str("mean"));
        let c = b.konst(Const::Monad(Monad::Comm));
        let start = b.prim(main, Prim::AllReduceStart, &[bucket, mean, c], tensor(0));
        let out = b.prim(
            main,
            Prim::MakeTuple,
            &[start, busier],
            anfora_ops::Abs::Any,
        );
        b.output(main, out);
        assert!(b.apply(main, super::run));
        assert_eq!(
            b.prims(main),
            [
                Prim::Neg,
                Prim::MakeTuple,
                Prim::AllReduceStart,
                Prim::Exp,
                Prim::Exp,
                Prim::MakeTuple
            ]
        );
        b.verify(main);
        // Already as early as it can be: nothing moves.
        assert!(!b.apply(main, super::run));
    }
}

//! Effect-state simplification: drops the ordering that orders nothing, as MindSpore's
//! UpdateState eliminators do. With the U chain shorter, CSE and DCE see more.
//! * `UpdateState(u, x)` is `u` when `x` is a constant or a pure operation other than a read
//!   (its inputs were ordered where they were computed);
//! * `UpdateState(u, Load(..))` is `u` when nothing else uses the loaded value, and
//!   `UpdateState(u, x)` is `u` when `x` is already attached to `u`'s chain;
//! * `UpdateState(u, Depend(x, s))` is `UpdateState(s, x)` when `s` comes after `u` on the
//!   chain (an inlined call's result waits for the callee's last state);
//! * `Depend(x, s...)` is `x` when every `s` is a constant (initial) state;
//! * `Load(p, s)` is an earlier `Load(p, s0)` when only reads lie between `s0` and `s`.

use std::collections::HashMap;

use anfora_ir::{NodeId, Prim};

use crate::{Graphs, rewrite};

/// How far back a chain is followed (keeps the pass linear on long chains).
const CHAIN_LIMIT: usize = 64;

/// `UpdateState(prev, x)` → `(prev, x)`.
fn update_state(p: &Graphs, s: NodeId) -> Option<(NodeId, NodeId)> {
    (p.module.callee_prim(s) == Some(Prim::UpdateState) && p.module.inputs(s).len() == 3).then(
        || {
            let i = p.module.inputs(s);
            (i[1], i[2])
        },
    )
}

/// The states of the chain ending in `s`, latest first: `s`, then the state each
/// `UpdateState` continues, at most [`CHAIN_LIMIT`] of them.
fn states<'p>(p: &'p Graphs, s: NodeId) -> impl Iterator<Item = NodeId> + 'p {
    std::iter::successors(Some(s), move |&x| update_state(p, x).map(|(prev, _)| prev))
        .take(CHAIN_LIMIT)
}

/// Whether `u` is `s` or a state before it.
fn precedes(p: &Graphs, u: NodeId, s: NodeId) -> bool {
    states(p, s).any(|x| x == u)
}

/// Whether `x` is already attached to the chain that ends in `s`.
fn attached_before(p: &Graphs, x: NodeId, s: NodeId) -> bool {
    states(p, s).any(|st| update_state(p, st).is_some_and(|(_, y)| y == x))
}

/// A value whose computation needs no place on the state chain.
fn inert(p: &Graphs, x: NodeId) -> bool {
    if p.module.constant(x).is_some() {
        return true;
    }
    match p.module.callee_prim(x) {
        Some(prim) => {
            prim.is_pure()
                && !matches!(
                    prim,
                    Prim::Load | Prim::UpdateState | Prim::Depend | Prim::Partial
                )
        }
        None => false,
    }
}

pub fn run(p: &mut Graphs) -> bool {
    let a = anfora_ir::analysis::analyze(p.module, &[p.entry]);
    let users = crate::use_counts(p, &a);
    let mut repl: HashMap<NodeId, NodeId> = HashMap::new();
    let mut rewritten = false;
    for &g in &a.graphs {
        for &n in &a.nodes[g] {
            match p.module.callee_prim(n) {
                Some(Prim::UpdateState) => {
                    let Some((u, x)) = update_state(p, n) else {
                        continue;
                    };
                    let unused_load = p.module.callee_prim(x) == Some(Prim::Load)
                        && users.get(&x).copied() == Some(1);
                    if inert(p, x) || unused_load || attached_before(p, x, u) {
                        repl.insert(n, u);
                    } else if p.module.callee_prim(x) == Some(Prim::Depend)
                        && p.module.inputs(x).len() == 3
                    {
                        let (value, s) = (p.module.inputs(x)[1], p.module.inputs(x)[2]);
                        if s != u && precedes(p, u, s) {
                            let inputs = p.module.inputs_mut(n).expect("an Apply");
                            inputs[1] = s;
                            inputs[2] = value;
                            rewritten = true;
                        }
                    }
                }
                Some(Prim::Depend) => {
                    let inputs = p.module.inputs(n);
                    if inputs[2..].iter().all(|&s| p.module.constant(s).is_some()) {
                        repl.insert(n, inputs[1]);
                    }
                }
                Some(Prim::Load) => {
                    // The first read of the same Parameter with only reads after it.
                    let (param, s) = (p.module.inputs(n)[1], p.module.inputs(n)[2]);
                    let earlier = states(p, s)
                        .map_while(|st| update_state(p, st))
                        .take_while(|&(_, x)| p.module.callee_prim(x) == Some(Prim::Load))
                        .find(|&(prev, x)| p.module.inputs(x)[1..] == [param, prev]);
                    if let Some((_, x)) = earlier {
                        repl.insert(n, x);
                    }
                }
                _ => {}
            }
        }
    }
    rewrite::apply(p, &repl) || rewritten
}

#[cfg(test)]
mod tests {
    use anfora_ir::{Const, Monad, ParamRef, Prim};
    use anfora_ops::Abs;
    use anfora_tensor::{DType, Tensor};

    use crate::testing::*;
    use crate::{cse, dce};

    struct Chain {
        b: Builder,
        main: anfora_ir::GraphId,
        loads: Vec<anfora_ir::NodeId>,
        p: ParamRef,
    }

    /// main() = (p + q + p, ...) reading Parameters `p`, `q`, `p` in that order, each read
    /// followed by its UpdateState; `write` puts `assign(p, 2 * p)` between the two reads
    /// of `p`.
    fn chain(write: bool) -> Chain {
        let mut b = Builder::new();
        let main = b.function("main");
        let p = ParamRef::new(Some("p"), Tensor::ones(&[2], DType::F32).unwrap(), true);
        let q = ParamRef::new(Some("q"), Tensor::ones(&[2], DType::F32).unwrap(), true);
        let (pk, qk) = (b.konst(Const::Ref(p.clone())), b.konst(Const::Ref(q)));
        let mut u = b.konst(Const::Monad(Monad::U));
        let mut loads = vec![];
        for (i, param) in [pk, qk, pk].into_iter().enumerate() {
            if i == 2 && write {
                let two = b.konst(Const::Float(2.0));
                let doubled = b.prim(main, Prim::Mul, &[loads[0], two], tensor_of(&[2]));
                let w = b.prim(main, Prim::Assign, &[pk, doubled, u], tensor_of(&[2]));
                u = b.prim(main, Prim::UpdateState, &[u, w], Abs::Monad(Monad::U));
            }
            let l = b.prim(main, Prim::Load, &[param, u], tensor_of(&[2]));
            u = b.prim(main, Prim::UpdateState, &[u, l], Abs::Monad(Monad::U));
            loads.push(l);
        }
        let s = b.prim(main, Prim::Add, &[loads[0], loads[1]], tensor_of(&[2]));
        let s = b.prim(main, Prim::Add, &[s, loads[2]], tensor_of(&[2]));
        let out = b.prim(main, Prim::Depend, &[s, u], tensor_of(&[2]));
        b.output(main, out);
        Chain { b, main, loads, p }
    }

    #[test]
    fn a_second_read_with_only_reads_between_is_the_first() {
        let Chain {
            mut b, main, loads, ..
        } = chain(false);
        let before = b.run(main, vec![]);
        assert_eq!(before.0.as_deref(), Ok("Tensor([3., 3.], dtype=float32)"));
        assert!(b.apply(main, super::run));
        b.apply(main, dce::run);
        let load_count = b.prims(main).iter().filter(|&&p| p == Prim::Load).count();
        assert_eq!(load_count, 2, "{:?}", b.prims(main));
        assert!(!b.module.graph(main).order.contains(&loads[2]));
        assert_eq!(b.run(main, vec![]), before);
    }

    #[test]
    fn a_read_after_a_write_stays() {
        let Chain {
            mut b,
            main,
            loads,
            p,
        } = chain(true);
        let before = b.run(main, vec![]);
        assert_eq!(before.0.as_deref(), Ok("Tensor([4., 4.], dtype=float32)"));
        for _ in 0..3 {
            b.apply(main, super::run);
            b.apply(main, cse::run);
            b.apply(main, dce::run);
        }
        assert!(
            b.module.graph(main).order.contains(&loads[2]),
            "p is read again"
        );
        assert!(b.prims(main).contains(&Prim::Assign));
        p.set(Tensor::ones(&[2], DType::F32).unwrap());
        assert_eq!(b.run(main, vec![]), before);
    }

    #[test]
    fn unused_reads_and_pure_attachments_leave_the_chain() {
        // main(x) = Depend(x * 2, UpdateState(UpdateState(U, Load(p, U)), x * 2))
        let mut b = Builder::new();
        let main = b.function("main");
        let x = b.param(main, "x", tensor_of(&[2]));
        let p = ParamRef::new(Some("p"), Tensor::ones(&[2], DType::F32).unwrap(), true);
        let pk = b.konst(Const::Ref(p));
        let u0 = b.konst(Const::Monad(Monad::U));
        let l = b.prim(main, Prim::Load, &[pk, u0], tensor_of(&[2]));
        let u1 = b.prim(main, Prim::UpdateState, &[u0, l], Abs::Monad(Monad::U));
        let two = b.konst(Const::Float(2.0));
        let y = b.prim(main, Prim::Mul, &[x, two], tensor_of(&[2]));
        let u2 = b.prim(main, Prim::UpdateState, &[u1, y], Abs::Monad(Monad::U));
        let out = b.prim(main, Prim::Depend, &[y, u2], tensor_of(&[2]));
        b.output(main, out);
        let before = b.run(main, vec![tensor_value(&[2])]);
        for _ in 0..3 {
            b.apply(main, super::run);
            b.apply(main, dce::run);
        }
        assert_eq!(b.prims(main), vec![Prim::Mul]);
        assert_eq!(b.module.graph(main).output, Some(y));
        assert_eq!(b.run(main, vec![tensor_value(&[2])]), before);
    }
}

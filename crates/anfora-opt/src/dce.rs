//! Dead-code elimination: a pure primitive whose value nobody uses and that cannot raise (by
//! the abstracts of its arguments) is dropped from its graph's evaluation order. Effects,
//! calls and operations that may raise stay: Python would run them. Creating a partial
//! application has no effect (calling it does), so an unused `Partial` goes too.

use std::collections::HashSet;

use anfora_ir::{Effects, NodeId, Prim};
use anfora_ops::call::may_raise;

use crate::Graphs;

pub fn run(p: &mut Graphs) -> bool {
    run_with(p, &Prim::effects)
}

/// Whether an unused call of `prim` (with effect attributes `e`) may be dropped when it cannot
/// raise.
fn removable(prim: Prim, e: Effects) -> bool {
    (prim.pure_with(e) || prim == Prim::Partial) && !e.ordered()
}

/// [`run`] with the effect attributes given by `effects` (tests mark primitives hidden).
pub(crate) fn run_with(p: &mut Graphs, effects: &dyn Fn(Prim) -> Effects) -> bool {
    let a = anfora_ir::analysis::analyze(p.module, &[p.entry]);
    let mut users = crate::use_counts(p, &a);
    let mut removed: HashSet<NodeId> = HashSet::new();
    let mut changed = true;
    while changed {
        changed = false;
        for &g in &a.graphs {
            for &n in p.module.graph(g).order.iter().rev() {
                if removed.contains(&n) || users.get(&n).copied().unwrap_or(0) > 0 {
                    continue;
                }
                let Some(prim) = p.module.callee_prim(n) else {
                    continue;
                };
                let args: Vec<_> = p.module.inputs(n)[1..].iter().map(|&i| p.abs(i)).collect();
                if !removable(prim, effects(prim)) || may_raise(prim, &args) {
                    continue;
                }
                removed.insert(n);
                changed = true;
                for &i in p.module.inputs(n) {
                    if let Some(u) = users.get_mut(&i) {
                        *u -= 1;
                    }
                }
            }
        }
    }
    for &g in &a.graphs {
        p.module.graphs[g].order.retain(|n| !removed.contains(n));
    }
    !removed.is_empty()
}

#[cfg(test)]
mod tests {
    use anfora_ir::{Const, Prim};
    use anfora_ops::Abs;
    use anfora_ops::Value;

    use crate::testing::*;

    /// main(f) = f, after computing f * 2.0 and f + 1.0 for nothing.
    fn dead_float_ops() -> (Builder, anfora_ir::GraphId) {
        let mut b = Builder::new();
        let main = b.function("main");
        let f = b.param(main, "f", float());
        let two = b.konst(Const::Float(2.0));
        let one = b.konst(Const::Float(1.0));
        let m = b.prim(main, Prim::Mul, &[f, two], float());
        b.prim(main, Prim::Add, &[m, one], float());
        b.output(main, f);
        (b, main)
    }

    #[test]
    fn dead_chains_go_in_one_run() {
        let (mut b, main) = dead_float_ops();
        assert!(b.apply(main, super::run));
        assert_eq!(b.prims(main), vec![]);
        assert_eq!(b.run(main, vec![Value::Float(1.5)]).0, Ok("1.5".into()));
    }

    #[test]
    fn primitives_with_hidden_effects_stay() {
        // A random draw whose value is unused still advances the generator.
        let (mut b, main) = dead_float_ops();
        assert!(b.apply(main, |p| super::run_with(p, &hiding(&[Prim::Mul]))));
        assert_eq!(b.prims(main), vec![Prim::Mul]);
    }

    #[test]
    fn unused_partial_applications_go_and_prints_stay() {
        let mut b = Builder::new();
        let f = b.function("f");
        let a = b.param(f, "a", int());
        b.output(f, a);
        let main = b.function("main");
        let x = b.param(main, "x", int());
        let fv = b.graph_value(f);
        b.prim(main, Prim::Partial, &[fv, x], Abs::Any);
        b.print(main, &[x]);
        b.output(main, x);
        assert!(b.apply(main, super::run));
        assert_eq!(b.prims(main), vec![Prim::Print]);
        assert_eq!(
            b.run(main, vec![Value::Int(4)]),
            (Ok("4".into()), "4\n".into())
        );
    }
}

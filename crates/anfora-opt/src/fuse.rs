//! Elementwise fusion: a chain of elementwise tensor operations, where each inner result is
//! used only by the next operation of the chain, becomes one call of a `Fused` graph. The
//! executor evaluates a fused graph in one pass over memory with no temporaries; the reference
//! VM runs it as an ordinary graph.
//!
//! Only operations that cannot raise for the dtypes involved are fused (integer `//` and `%`
//! can divide by zero), and operations with hidden effects (random generators) never are.

use std::collections::{HashMap, HashSet};

use anfora_ir::{Const, Effects, GraphId, GraphKind, NodeId, Prim};
use anfora_ops::Abs;
use anfora_tensor::DType;

use crate::Graphs;

/// Whether primitive `p` is an elementwise tensor operation the fused kernels implement (its
/// declaration says).
pub fn elementwise(p: Prim) -> bool {
    p.def().kernels.fused()
}

fn fusible(p: &Graphs, n: NodeId, effects: &dyn Fn(Prim) -> Effects) -> bool {
    let Some(prim) = p.module.callee_prim(n) else {
        return false;
    };
    let e = effects(prim);
    if !elementwise(prim) || e.ordered() {
        return false;
    }
    let Abs::Tensor(out) = p.abs(n) else {
        return false;
    };
    if out.known_shape().is_none() {
        return false;
    }
    let args: Vec<Abs> = p.module.inputs(n)[1..].iter().map(|&i| p.abs(i)).collect();
    let all_known = args.iter().all(|a| match a {
        Abs::Tensor(t) => t.known_shape().is_some(),
        a => a.is_number(),
    });
    if !all_known {
        return false;
    }
    let int_like = |a: &Abs| match a {
        Abs::Tensor(t) => !t.dtype.is_float(),
        Abs::Int(_) | Abs::Bool(_) => true,
        _ => false,
    };
    match prim {
        // Integer division by zero raises.
        Prim::FloorDiv | Prim::Mod => !args.iter().all(int_like),
        // Integers to negative integer powers raise.
        Prim::Pow => out.dtype.is_float(),
        _ => true,
    }
}

pub fn run(p: &mut Graphs) -> bool {
    run_with(p, &Prim::effects)
}

/// [`run`] with the effect attributes given by `effects` (tests mark primitives hidden).
pub(crate) fn run_with(p: &mut Graphs, effects: &dyn Fn(Prim) -> Effects) -> bool {
    let a = anfora_ir::analysis::analyze(p.module, &[p.entry]);
    let mut users: HashMap<NodeId, Vec<(NodeId, GraphId)>> = HashMap::new();
    for &g in &a.graphs {
        for &n in &a.nodes[g] {
            for &i in p.module.inputs(n) {
                users.entry(i).or_default().push((n, g));
            }
        }
        if let Some(o) = p.module.graph(g).output {
            users.entry(o).or_default().push((o, g));
        }
    }
    let mut changed = false;
    let mut taken: HashSet<NodeId> = HashSet::new();
    let mut count = p
        .module
        .graphs
        .values()
        .filter(|g| g.kind == GraphKind::Fused)
        .count();
    for &g in &a.graphs {
        if p.module.graph(g).kind == GraphKind::Fused {
            continue;
        }
        let order = p.module.graph(g).order.clone();
        // Roots: fusible nodes not absorbed into a later fusible user. Visit from the end.
        for &root in order.iter().rev() {
            if taken.contains(&root) || !fusible(p, root, effects) {
                continue;
            }
            let mut members: Vec<NodeId> = vec![root];
            // A node reached twice (`x * x`) is visited once: paths through a chain of
            // squares would otherwise double at every square.
            let mut seen: HashSet<NodeId> = HashSet::from([root]);
            let mut stack = vec![root];
            while let Some(x) = stack.pop() {
                for &i in &p.module.inputs(x)[1..] {
                    if seen.contains(&i) {
                        continue;
                    }
                    // Every use is by `x` (possibly several of its operands).
                    let single_user = users
                        .get(&i)
                        .is_some_and(|u| u.iter().all(|(user, _)| *user == x));
                    if p.module.node(i).owner == Some(g)
                        && single_user
                        && !taken.contains(&i)
                        && fusible(p, i, effects)
                        && order.contains(&i)
                    {
                        seen.insert(i);
                        members.push(i);
                        stack.push(i);
                    }
                }
            }
            if members.len() < 2 {
                continue;
            }
            count += 1;
            make_fused(p, g, root, &members, count);
            taken.extend(members);
            changed = true;
        }
    }
    changed
}

/// Moves `members` (rooted at `root`, all in graph `g`) into a new fused graph and turns
/// `root` into its call.
fn make_fused(p: &mut Graphs, g: GraphId, root: NodeId, members: &[NodeId], k: usize) {
    let member_set: HashSet<NodeId> = members.iter().copied().collect();
    // Members in evaluation order.
    let ordered: Vec<NodeId> = p
        .module
        .graph(g)
        .order
        .iter()
        .copied()
        .filter(|n| member_set.contains(n))
        .collect();
    let span = p.module.node(root).span;
    let function = p.module.graph(g).function.clone();
    let f = p
        .module
        .add_graph(format!("fused_{k}"), function, GraphKind::Fused, span);
    let mut map: HashMap<NodeId, NodeId> = HashMap::new();
    let mut inputs: Vec<NodeId> = Vec::new();
    for &n in &ordered {
        let args: Vec<NodeId> = p.module.inputs(n).to_vec();
        let mut new_args = vec![args[0]];
        for &i in &args[1..] {
            let mapped = if let Some(&m) = map.get(&i) {
                m
            } else if p
                .module
                .constant(i)
                .is_some_and(|c| !matches!(c, Const::Tensor(_)))
            {
                i
            } else {
                let param =
                    p.module
                        .add_param(f, &format!("x{}", inputs.len()), p.module.node(i).span);
                let abs = p.abs(i);
                p.abstracts.insert(param, abs);
                inputs.push(i);
                map.insert(i, param);
                param
            };
            new_args.push(mapped);
        }
        let node_span = p.module.node(n).span;
        let copy = p.module.apply(f, new_args, node_span);
        p.module.nodes[copy].inlined = p.module.node(n).inlined.clone();
        let abs = p.abs(n);
        p.abstracts.insert(copy, abs);
        map.insert(n, copy);
    }
    p.module.set_output(f, map[&root]);
    let callee = p.module.value(Const::Graph(f));
    let mut call = vec![callee];
    call.extend(inputs);
    *p.module.inputs_mut(root).expect("an Apply") = call;
    p.module.graphs[g]
        .order
        .retain(|n| *n == root || !member_set.contains(n));
}

/// The dtype of each parameter of a fused graph (for the executor).
pub fn param_dtypes(p: &Graphs, f: GraphId) -> Vec<Option<DType>> {
    p.module
        .graph(f)
        .params
        .iter()
        .map(|&x| p.abs(x).as_tensor().map(|t| t.dtype))
        .collect()
}

#[cfg(test)]
mod tests {
    use anfora_ir::{Const, GraphKind, Prim};
    use anfora_ops::Value;

    use crate::testing::*;

    /// main(x) = exp(x * 2.0 + 1.0) on a float32 tensor of shape (2,).
    fn chain() -> (Builder, anfora_ir::GraphId) {
        let mut b = Builder::new();
        let main = b.function("main");
        let x = b.param(main, "x", tensor(2));
        let two = b.konst(Const::Float(2.0));
        let one = b.konst(Const::Float(1.0));
        let m = b.prim(main, Prim::Mul, &[x, two], tensor(2));
        let a = b.prim(main, Prim::Add, &[m, one], tensor(2));
        let e = b.prim(main, Prim::Neg, &[a], tensor(2));
        b.output(main, e);
        (b, main)
    }

    fn fused_graphs(b: &Builder, main: anfora_ir::GraphId) -> Vec<Vec<Prim>> {
        b.reachable(main)
            .into_iter()
            .filter(|&g| b.module.graph(g).kind == GraphKind::Fused)
            .map(|g| b.prims(g))
            .collect()
    }

    fn x() -> Value {
        Value::Tensor(anfora_tensor::Tensor::from_f32(vec![1.0, -2.0], &[2]).unwrap())
    }

    #[test]
    fn a_chain_becomes_one_fused_graph() {
        let (mut b, main) = chain();
        let before = b.run(main, vec![x()]);
        assert_eq!(before.0, Ok("Tensor([-3.,  3.], dtype=float32)".into()));
        assert!(b.apply(main, super::run));
        assert_eq!(
            fused_graphs(&b, main),
            vec![vec![Prim::Mul, Prim::Add, Prim::Neg]]
        );
        assert_eq!(b.prims(main), vec![]);
        let fused = b
            .module
            .callee_graph(b.module.graph(main).output.unwrap())
            .unwrap();
        assert_eq!(
            super::param_dtypes(&b.program(main), fused),
            vec![Some(anfora_tensor::DType::F32)]
        );
        assert_eq!(b.run(main, vec![x()]), before);
    }

    #[test]
    fn primitives_with_hidden_effects_are_never_fused() {
        let (mut b, main) = chain();
        let before = b.run(main, vec![x()]);
        // With Add hidden, Mul and Neg are chains of one: nothing to fuse.
        assert!(!b.apply(main, |p| super::run_with(p, &hiding(&[Prim::Add]))));
        assert_eq!(fused_graphs(&b, main), Vec::<Vec<Prim>>::new());
        // With Mul hidden, Add and Neg still fuse.
        assert!(b.apply(main, |p| super::run_with(p, &hiding(&[Prim::Mul]))));
        assert_eq!(fused_graphs(&b, main), vec![vec![Prim::Add, Prim::Neg]]);
        assert_eq!(b.prims(main), vec![Prim::Mul]);
        assert_eq!(b.run(main, vec![x()]), before);
    }
}

//! Elementwise fusion: a chain of elementwise tensor operations, where each inner result is
//! used only by the next operation of the chain, becomes one call of a `Fused` graph. The
//! executor evaluates a fused graph in one pass over memory with no temporaries; the reference
//! VM runs it as an ordinary graph.
//!
//! Only operations that cannot raise for the dtypes involved are fused (integer `//` and `%`
//! can divide by zero), and operations with hidden effects (random generators) never are.

use std::collections::{HashMap, HashSet};

use anfora_infer::Abs;
use anfora_ir::{Const, GraphId, GraphKind, NodeId, Prim};
use anfora_tensor::DType;

use crate::Program;

/// Whether primitive `p` is an elementwise tensor operation the fused kernels implement.
pub fn elementwise(p: Prim) -> bool {
    use Prim::*;
    matches!(
        p,
        Add | Sub | Mul | Div | FloorDiv | Mod | Pow | Maximum | Minimum | Eq | Ne | Lt | Le | Gt | Ge
            | Neg | Pos | Abs | Exp | Log | Sqrt | Tanh | Sin | Cos | Sigmoid | Relu | LogicalNot
            | BitAnd | BitOr | BitXor | Invert | Where
    )
}

fn fusible(p: &Program, n: NodeId) -> bool {
    let Some(prim) = p.module.callee_prim(n) else { return false };
    if !elementwise(prim) || prim.effects().hidden {
        return false;
    }
    let Abs::Tensor(out) = p.abs(n) else { return false };
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

pub fn run(p: &mut Program) -> bool {
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
    let mut count = p.module.graphs.values().filter(|g| g.kind == GraphKind::Fused).count();
    for &g in &a.graphs {
        if p.module.graph(g).kind == GraphKind::Fused {
            continue;
        }
        let order = p.module.graph(g).order.clone();
        // Roots: fusible nodes not absorbed into a later fusible user. Visit from the end.
        for &root in order.iter().rev() {
            if taken.contains(&root) || !fusible(p, root) {
                continue;
            }
            let mut members: Vec<NodeId> = vec![root];
            let mut stack = vec![root];
            while let Some(x) = stack.pop() {
                for &i in &p.module.inputs(x)[1..] {
                    // Every use is by `x` (possibly several of its operands).
                    let single_user = users.get(&i).is_some_and(|u| u.iter().all(|(user, _)| *user == x));
                    if p.module.node(i).owner == Some(g)
                        && single_user
                        && !taken.contains(&i)
                        && fusible(p, i)
                        && order.contains(&i)
                    {
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
fn make_fused(p: &mut Program, g: GraphId, root: NodeId, members: &[NodeId], k: usize) {
    let member_set: HashSet<NodeId> = members.iter().copied().collect();
    // Members in evaluation order.
    let ordered: Vec<NodeId> = p.module.graph(g).order.iter().copied().filter(|n| member_set.contains(n)).collect();
    let span = p.module.node(root).span;
    let function = p.module.graph(g).function.clone();
    let f = p.module.add_graph(format!("fused_{k}"), function, GraphKind::Fused, span);
    let mut map: HashMap<NodeId, NodeId> = HashMap::new();
    let mut inputs: Vec<NodeId> = Vec::new();
    for &n in &ordered {
        let args: Vec<NodeId> = p.module.inputs(n).to_vec();
        let mut new_args = vec![args[0]];
        for &i in &args[1..] {
            let mapped = if let Some(&m) = map.get(&i) {
                m
            } else if p.module.constant(i).is_some_and(|c| !matches!(c, Const::Tensor(_))) {
                i
            } else {
                let param = p.module.add_param(f, &format!("x{}", inputs.len()), p.module.node(i).span);
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
    p.module.graphs[g].order.retain(|n| *n == root || !member_set.contains(n));
}

/// The dtype of each parameter of a fused graph (for the executor).
pub fn param_dtypes(p: &Program, f: GraphId) -> Vec<Option<DType>> {
    p.module
        .graph(f)
        .params
        .iter()
        .map(|&x| p.abs(x).as_tensor().map(|t| t.dtype))
        .collect()
}

//! Dead-code elimination: a pure primitive whose value nobody uses and that cannot raise (by
//! the abstracts of its arguments) is dropped from its graph's evaluation order. Effects,
//! calls and operations that may raise stay: Python would run them.

use std::collections::{HashMap, HashSet};

use anfora_infer::rules::may_raise;
use anfora_ir::NodeId;

use crate::Program;
use crate::simplify::pure;

pub fn run(p: &mut Program) -> bool {
    let a = anfora_ir::analysis::analyze(p.module, &[p.entry]);
    let mut users: HashMap<NodeId, usize> = HashMap::new();
    for &g in &a.graphs {
        for &n in &a.nodes[g] {
            for &i in p.module.inputs(n) {
                *users.entry(i).or_insert(0) += 1;
            }
        }
        if let Some(o) = p.module.graph(g).output {
            *users.entry(o).or_insert(0) += 1;
        }
    }
    let mut removed: HashSet<NodeId> = HashSet::new();
    let mut changed = true;
    while changed {
        changed = false;
        for &g in &a.graphs {
            for &n in p.module.graph(g).order.iter().rev() {
                if removed.contains(&n) || users.get(&n).copied().unwrap_or(0) > 0 {
                    continue;
                }
                let Some(prim) = p.module.callee_prim(n) else { continue };
                let args: Vec<_> = p.module.inputs(n)[1..].iter().map(|&i| p.abs(i)).collect();
                if !pure(prim) || may_raise(prim, &args) {
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

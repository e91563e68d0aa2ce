//! Batched node replacement shared by the passes.

use std::collections::HashMap;

use anfora_ir::NodeId;

use crate::Graphs;

fn resolve(repl: &HashMap<NodeId, NodeId>, mut n: NodeId) -> NodeId {
    while let Some(&m) = repl.get(&n) {
        n = m;
    }
    n
}

/// Replaces every use of each key of `repl` by its value (following chains) in the graphs
/// reachable from the entry, and drops the replaced nodes from evaluation orders.
pub fn apply(p: &mut Graphs, repl: &HashMap<NodeId, NodeId>) {
    if repl.is_empty() {
        return;
    }
    for g in p.graphs() {
        for n in p.module.graph_nodes(g) {
            if let Some(inputs) = p.module.inputs_mut(n) {
                for i in inputs.iter_mut() {
                    *i = resolve(repl, *i);
                }
            }
        }
        let graph = &mut p.module.graphs[g];
        if let Some(o) = graph.output {
            graph.output = Some(resolve(repl, o));
        }
        graph.order.retain(|n| !repl.contains_key(n));
    }
}

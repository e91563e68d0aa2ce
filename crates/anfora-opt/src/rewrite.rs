//! Batched node replacement shared by the passes.

use std::collections::HashMap;

use anfora_ir::NodeId;

use crate::Graphs;

/// Replaces every use of each key of `repl` by its value (following chains) in the graphs
/// reachable from the entry, and drops the replaced nodes from evaluation orders. Returns whether
/// there was anything to replace (the program changed).
pub fn apply(p: &mut Graphs, repl: &HashMap<NodeId, NodeId>) -> bool {
    if repl.is_empty() {
        return false;
    }
    let graphs = p.graphs();
    p.module.apply_replacements(&graphs, repl);
    true
}

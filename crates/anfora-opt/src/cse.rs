//! Common-subexpression elimination: within a graph, a pure primitive applied to the same
//! inputs as an earlier one is replaced by it. Effects, calls of graphs and primitives marked
//! `side_effect_hidden` (random number generators) are never merged.

use std::collections::HashMap;

use anfora_ir::{Const, NodeId, Prim};

use crate::simplify::pure;
use crate::{Program, rewrite};

/// How an input takes part in the key: a node, or a small constant by value.
#[derive(Clone, PartialEq, Eq, Hash)]
enum KeyIn {
    Node(NodeId),
    Const(String),
}

pub fn run(p: &mut Program) -> bool {
    let mut repl: HashMap<NodeId, NodeId> = HashMap::new();
    for g in p.graphs() {
        let mut seen: HashMap<(Prim, Vec<KeyIn>), NodeId> = HashMap::new();
        for n in p.module.graph_nodes(g) {
            let Some(prim) = p.module.callee_prim(n) else { continue };
            if !pure(prim) || prim == Prim::CheckBound {
                continue;
            }
            let key: Vec<KeyIn> = p.module.inputs(n)[1..]
                .iter()
                .map(|&i| {
                    let i = *repl.get(&i).unwrap_or(&i);
                    match p.module.constant(i) {
                        // Tensors and graphs compare by node: their text does not identify them.
                        Some(Const::Tensor(_)) | None => KeyIn::Node(i),
                        Some(c) => {
                            let mut has_graph = false;
                            c.for_each_graph(&mut |_| has_graph = true);
                            if has_graph { KeyIn::Node(i) } else { KeyIn::Const(format!("{c:?}")) }
                        }
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
    let changed = !repl.is_empty();
    rewrite::apply(p, &repl);
    changed
}

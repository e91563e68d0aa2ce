//! Cells back to values (mem2reg): a cell that only one graph reads and writes, once inlining
//! has brought the closures that shared it into that graph, is a plain variable again. Walking
//! the graph's evaluation order, each `CellGet` is the value the last `CellSet` stored (or the
//! cell's initial value), and the writes and the cell itself go. Nothing else can observe the
//! cell: no other node holds it (no closure captures it, no tuple keeps it).

use std::collections::{HashMap, HashSet};

use anfora_ir::analysis::Analysis;
use anfora_ir::{Const, GraphId, NodeId, Prim};
use anfora_ops::Abs;

use crate::{Graphs, rewrite};

pub fn run(p: &mut Graphs) -> bool {
    // Most programs have no cell: the pass costs them one look at the abstracts.
    if !p.abstracts.values().any(|a| matches!(a, Abs::Cell(_))) {
        return false;
    }
    let a = anfora_ir::analysis::analyze(p.module, &[p.entry]);
    let local = local_cells(p, &a);
    if local.is_empty() {
        return false;
    }
    let none = p.module.value(Const::None);
    p.abstracts.insert(none, Abs::None);
    let mut repl = HashMap::new();
    for (g, cells) in local {
        values_of(p, g, &cells, none, &mut repl);
    }
    rewrite::apply(p, &repl)
}

/// The cells each graph alone reads and writes: `MakeCell` nodes whose every use is the cell
/// input of a `CellGet` or `CellSet` of the same graph.
fn local_cells(p: &Graphs, a: &Analysis) -> HashMap<GraphId, HashSet<NodeId>> {
    let mut owner: HashMap<NodeId, GraphId> = HashMap::new();
    for &g in &a.graphs {
        for &n in &a.nodes[g] {
            if p.module.callee_prim(n) == Some(Prim::MakeCell) {
                owner.insert(n, g);
            }
        }
    }
    let mut shared: HashSet<NodeId> = HashSet::new();
    for &g in &a.graphs {
        for &n in &a.nodes[g] {
            let accesses = matches!(p.module.callee_prim(n), Some(Prim::CellGet | Prim::CellSet));
            for (k, &i) in p.module.inputs(n).iter().enumerate() {
                if owner.contains_key(&i) && !(accesses && k == 1 && owner[&i] == g) {
                    shared.insert(i);
                }
            }
        }
        if let Some(o) = p.module.graph(g).output
            && owner.contains_key(&o)
        {
            shared.insert(o);
        }
    }
    let mut out: HashMap<GraphId, HashSet<NodeId>> = HashMap::new();
    for (cell, g) in owner {
        if !shared.contains(&cell) {
            out.entry(g).or_default().insert(cell);
        }
    }
    out
}

/// Replaces, in graph `g`'s evaluation order, each read of the `cells` by the value last
/// stored, and each write and the cells themselves by `none`.
fn values_of(
    p: &Graphs,
    g: GraphId,
    cells: &HashSet<NodeId>,
    none: NodeId,
    repl: &mut HashMap<NodeId, NodeId>,
) {
    let mut current: HashMap<NodeId, NodeId> = HashMap::new();
    for &n in &p.module.graph(g).order {
        let inputs = p.module.inputs(n);
        match p.module.callee_prim(n) {
            Some(Prim::MakeCell) if cells.contains(&n) => {
                current.insert(n, inputs[1]);
                repl.insert(n, none);
            }
            Some(Prim::CellSet) if cells.contains(&inputs[1]) => {
                current.insert(inputs[1], inputs[2]);
                repl.insert(n, none);
            }
            Some(Prim::CellGet) if cells.contains(&inputs[1]) => {
                if let Some(&v) = current.get(&inputs[1]) {
                    repl.insert(n, v);
                }
            }
            _ => {}
        }
    }
}

//! Analyses derived from the edges of the IR: reachable graphs, users of each node, free
//! variables, graphs used, parents and children (lexical nesting), and recursion (SCCs of the
//! call graph; [`strongly_connected`] finds them for other edges too).
//!
//! Nesting is not stored: like MindSpore's manager, we derive it. The parent of `g` is the
//! innermost graph among the owners of the free variables of `g` and of every graph `g` uses
//! (a graph that materializes a closure must be able to supply that closure's environment).

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::hash::Hash;

use cranelift_entity::SecondaryMap;

use crate::{GraphId, Module, NodeId, NodeKind};

#[derive(Debug, Default)]
pub struct Analysis {
    /// Graphs reachable from the roots, in breadth-first discovery order.
    pub graphs: Vec<GraphId>,
    /// Apply nodes of each graph (see [`Module::graph_nodes`]).
    pub nodes: SecondaryMap<GraphId, Vec<NodeId>>,
    /// Graph constants used by each graph's nodes and output, in first-use order.
    pub used: SecondaryMap<GraphId, Vec<GraphId>>,
    /// Nodes owned by other graphs that each graph's nodes use, in first-use order.
    pub free_vars: SecondaryMap<GraphId, Vec<NodeId>>,
    pub parent: SecondaryMap<GraphId, Option<GraphId>>,
    pub children: SecondaryMap<GraphId, Vec<GraphId>>,
    /// Nesting depth: 0 for graphs without a parent.
    pub depth: SecondaryMap<GraphId, u32>,
    /// Strongly connected component of each graph in the "uses" relation.
    pub scc: SecondaryMap<GraphId, u32>,
    /// Whether a graph can reach itself through the graphs it uses.
    pub recursive: SecondaryMap<GraphId, bool>,
    /// Users of each node: (Apply node, input index).
    pub users: HashMap<NodeId, Vec<(NodeId, usize)>>,
    /// Graphs whose candidate parents are not nested in one another (ill-scoped IR).
    pub scope_errors: Vec<(GraphId, Vec<GraphId>)>,
}

impl Analysis {
    /// The chain of enclosing graphs of `g`, innermost first.
    pub fn ancestors(&self, g: GraphId) -> Vec<GraphId> {
        let mut out = Vec::new();
        let mut cur = self.parent[g];
        while let Some(p) = cur {
            if out.contains(&p) {
                break; // a cycle is reported by the verifier
            }
            out.push(p);
            cur = self.parent[p];
        }
        out
    }

    pub fn is_ancestor(&self, ancestor: GraphId, g: GraphId) -> bool {
        self.ancestors(g).contains(&ancestor)
    }
}

/// The graphs reachable from `roots` with the Apply nodes of each (see
/// [`Module::graph_nodes`]), in the breadth-first order [`analyze`] discovers them, without
/// the rest of the analysis.
pub fn reachable(module: &Module, roots: &[GraphId]) -> Vec<(GraphId, Vec<NodeId>)> {
    walk(module, roots, true)
}

/// Like [`reachable`], but without the graphs whose nodes are only read as free variables:
/// the graphs `roots` call or hold as values, and theirs.
pub fn referenced(module: &Module, roots: &[GraphId]) -> Vec<(GraphId, Vec<NodeId>)> {
    walk(module, roots, false)
}

fn walk(module: &Module, roots: &[GraphId], owners_too: bool) -> Vec<(GraphId, Vec<NodeId>)> {
    let mut out = Vec::new();
    visit(module, roots, owners_too, |g, uses| {
        out.push((g, uses.nodes))
    });
    out
}

/// What one graph's Apply nodes and output use.
struct Uses {
    /// The Apply nodes (see [`Module::graph_nodes`]).
    nodes: Vec<NodeId>,
    /// Graph constants, in first-use order.
    used: Vec<GraphId>,
    /// Nodes owned by other graphs (free variables), in first-use order.
    free_vars: Vec<NodeId>,
}

/// Hands `f` each graph reachable from `roots` (breadth first, through the graphs used and,
/// with `owners_too`, the owners of free variables) with what it uses.
fn visit(
    module: &Module,
    roots: &[GraphId],
    owners_too: bool,
    mut f: impl FnMut(GraphId, Uses),
) -> Vec<GraphId> {
    breadth_first(roots.iter().copied(), |g| {
        let uses = graph_uses(module, g);
        let mut next = uses.used.clone();
        if owners_too {
            next.extend(uses.free_vars.iter().filter_map(|&n| module.node(n).owner));
        }
        f(g, uses);
        next
    })
}

/// The items reached from `start`, breadth first, each once, in the order found; `next` gives
/// the items one leads to.
pub fn breadth_first<T, I>(
    start: impl IntoIterator<Item = T>,
    mut next: impl FnMut(T) -> I,
) -> Vec<T>
where
    T: Copy + Eq + Hash,
    I: IntoIterator<Item = T>,
{
    let mut seen = HashSet::new();
    let mut queue: VecDeque<T> = start.into_iter().collect();
    let mut order = Vec::new();
    while let Some(x) = queue.pop_front() {
        if !seen.insert(x) {
            continue;
        }
        order.push(x);
        queue.extend(next(x));
    }
    order
}

/// What graph `g` uses.
fn graph_uses(module: &Module, g: GraphId) -> Uses {
    let nodes = module.graph_nodes(g);
    let mut used = Vec::new();
    let mut free_vars = Vec::new();
    let inputs = nodes
        .iter()
        .flat_map(|&n| module.inputs(n).iter().copied())
        .chain(module.graph(g).output);
    for input in inputs {
        let node = module.node(input);
        match &node.kind {
            NodeKind::Value(c) => c.for_each_graph(&mut |h| {
                if !used.contains(&h) {
                    used.push(h);
                }
            }),
            _ => {
                if node.owner != Some(g) && !free_vars.contains(&input) {
                    free_vars.push(input);
                }
            }
        }
    }
    Uses {
        nodes,
        used,
        free_vars,
    }
}

/// Analyzes every graph reachable from `roots`.
pub fn analyze(module: &Module, roots: &[GraphId]) -> Analysis {
    let mut a = Analysis::default();
    // Reachable graphs, their nodes, free variables and used graphs.
    a.graphs = visit(module, roots, true, |g, uses| {
        for &n in &uses.nodes {
            for (i, &input) in module.inputs(n).iter().enumerate() {
                a.users.entry(input).or_default().push((n, i));
            }
        }
        a.nodes[g] = uses.nodes;
        a.used[g] = uses.used;
        a.free_vars[g] = uses.free_vars;
    });
    compute_sccs(&mut a);
    compute_parents(module, &mut a);
    a
}

fn compute_parents(module: &Module, a: &mut Analysis) {
    // P(g) = owners(FV(g)) ∪ ⋃ P(h) for h used by g, without g itself; a monotone fixpoint.
    let mut cand: HashMap<GraphId, BTreeSet<GraphId>> = HashMap::new();
    for &g in &a.graphs {
        let set: BTreeSet<GraphId> = a.free_vars[g]
            .iter()
            .filter_map(|&n| module.node(n).owner)
            .filter(|&o| o != g)
            .collect();
        cand.insert(g, set);
    }
    // Candidates flow from the graphs used to their users: in the order of the components of
    // the "uses" relation (a component's successors first), one pass settles every graph
    // outside a cycle, however deep the nesting.
    let mut order = a.graphs.clone();
    order.sort_by_key(|&g| a.scc[g]);
    for group in order.chunk_by(|&g, &h| a.scc[g] == a.scc[h]) {
        loop {
            let mut changed = false;
            for &g in group {
                let mut add = Vec::new();
                for &h in &a.used[g] {
                    if let Some(ph) = cand.get(&h) {
                        let pg = &cand[&g];
                        add.extend(ph.iter().copied().filter(|&p| p != g && !pg.contains(&p)));
                    }
                }
                if !add.is_empty() {
                    cand.get_mut(&g).unwrap().extend(add);
                    changed = true;
                }
            }
            if !changed || !a.recursive[group[0]] {
                break;
            }
        }
    }
    for &g in &a.graphs {
        let set = &cand[&g];
        // The innermost candidate is the one whose own candidates contain all the others.
        let parent = set.iter().copied().find(|&p| {
            let pp = cand.get(&p);
            set.iter()
                .all(|&q| q == p || pp.is_some_and(|pp| pp.contains(&q)))
        });
        if parent.is_none() && !set.is_empty() {
            a.scope_errors.push((g, set.iter().copied().collect()));
        }
        a.parent[g] = parent;
    }
    for &g in &a.graphs {
        if let Some(p) = a.parent[g] {
            a.children[p].push(g);
        }
    }
    for &g in &a.graphs {
        a.depth[g] = a.ancestors(g).len() as u32;
    }
}

fn compute_sccs(a: &mut Analysis) {
    let sccs = strongly_connected(&a.graphs, |g| a.used[g].as_slice());
    a.scc = sccs.component;
    a.recursive = sccs.cyclic;
}

/// The strongly connected components of a directed graph over graphs.
#[derive(Debug, Default)]
pub struct Components {
    /// The component of each graph visited (numbered in the order they are completed, so a
    /// component's successors come before it).
    pub component: SecondaryMap<GraphId, u32>,
    /// Whether a graph can reach itself: its component has several members or an edge to
    /// itself.
    pub cyclic: SecondaryMap<GraphId, bool>,
}

/// Tarjan's algorithm over `graphs` and the edges from each graph, `edges(g)` (targets outside
/// `graphs` are visited too), iterative so that long call chains cannot overflow the stack.
pub fn strongly_connected<'a>(
    graphs: &[GraphId],
    edges: impl Fn(GraphId) -> &'a [GraphId],
) -> Components {
    let mut out = Components::default();
    let mut index: HashMap<GraphId, u32> = HashMap::new();
    let mut low: HashMap<GraphId, u32> = HashMap::new();
    let mut on_stack: HashSet<GraphId> = HashSet::new();
    let mut stack: Vec<GraphId> = Vec::new();
    let mut next = 0u32;
    let mut count = 0u32;
    for &root in graphs {
        if index.contains_key(&root) {
            continue;
        }
        let mut work: Vec<(GraphId, usize)> = vec![(root, 0)];
        while let Some(&mut (g, ref mut i)) = work.last_mut() {
            if *i == 0 && !index.contains_key(&g) {
                index.insert(g, next);
                low.insert(g, next);
                next += 1;
                stack.push(g);
                on_stack.insert(g);
            }
            let targets = edges(g);
            if *i < targets.len() {
                let h = targets[*i];
                *i += 1;
                if !index.contains_key(&h) {
                    work.push((h, 0));
                } else if on_stack.contains(&h) {
                    let l = low[&g].min(index[&h]);
                    low.insert(g, l);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                let l = low[&parent].min(low[&g]);
                low.insert(parent, l);
            }
            if low[&g] == index[&g] {
                let mut members = Vec::new();
                while let Some(h) = stack.pop() {
                    on_stack.remove(&h);
                    members.push(h);
                    if h == g {
                        break;
                    }
                }
                for &h in &members {
                    out.component[h] = count;
                    out.cyclic[h] = members.len() > 1 || edges(h).contains(&h);
                }
                count += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Const, GraphKind, Prim, Span};
    use std::sync::Arc;

    /// f(x) { def g(): return x + 1; return g }  plus a self-recursive h.
    fn sample() -> (Module, GraphId, GraphId, GraphId) {
        let mut m = Module::new();
        let f = m.add_graph("f", Arc::from("f"), GraphKind::Function, Span::NONE);
        let x = m.add_param(f, "x", Span::NONE);
        let g = m.add_graph("g", Arc::from("g"), GraphKind::Function, Span::NONE);
        let one = m.value(Const::Int(1));
        let add = m.apply_prim(g, Prim::Add, &[x, one], Span::NONE);
        m.set_output(g, add);
        let gv = m.value(Const::Graph(g));
        m.set_output(f, gv);
        let h = m.add_graph("h", Arc::from("h"), GraphKind::Function, Span::NONE);
        let hv = m.value(Const::Graph(h));
        let call = m.apply_unordered(h, vec![hv], Span::NONE);
        m.set_output(h, call);
        (m, f, g, h)
    }

    #[test]
    fn derives_free_variables_and_parents() {
        let (m, f, g, h) = sample();
        let a = analyze(&m, &[f, h]);
        assert_eq!(a.graphs, vec![f, h, g]);
        assert_eq!(a.free_vars[g], vec![m.graph(f).params[0]]);
        assert_eq!(a.parent[g], Some(f));
        assert_eq!(a.parent[f], None);
        assert_eq!(a.children[f], vec![g]);
        assert_eq!(a.depth[g], 1);
        assert!(a.scope_errors.is_empty());
        assert_eq!(a.used[f], vec![g]);
    }

    #[test]
    fn reachable_lists_the_graphs_and_nodes_analyze_finds() {
        let (m, f, _, h) = sample();
        for roots in [vec![f], vec![h], vec![f, h]] {
            let a = analyze(&m, &roots);
            let r = reachable(&m, &roots);
            assert_eq!(r.iter().map(|(g, _)| *g).collect::<Vec<_>>(), a.graphs);
            for (g, nodes) in &r {
                assert_eq!(nodes, &a.nodes[*g]);
            }
        }
    }

    #[test]
    fn finds_recursion() {
        let (m, f, g, h) = sample();
        let a = analyze(&m, &[f, h]);
        assert!(a.recursive[h]);
        assert!(!a.recursive[f]);
        assert!(!a.recursive[g]);
        assert_ne!(a.scc[f], a.scc[g]);
    }

    #[test]
    fn users_are_recorded() {
        let (m, f, g, h) = sample();
        let a = analyze(&m, &[f, h]);
        let x = m.graph(f).params[0];
        let add = m.graph(g).output.unwrap();
        assert_eq!(a.users[&x], vec![(add, 1)]);
    }

    #[test]
    fn parent_is_inherited_through_used_graphs() {
        // f(x): t = @t (no free variables) but t calls j, which reads x.
        let mut m = Module::new();
        let f = m.add_graph("f", Arc::from("f"), GraphKind::Function, Span::NONE);
        let x = m.add_param(f, "x", Span::NONE);
        let j = m.add_graph("j", Arc::from("f"), GraphKind::Join, Span::NONE);
        let neg = m.apply_prim(j, Prim::Neg, &[x], Span::NONE);
        m.set_output(j, neg);
        let t = m.add_graph("t", Arc::from("f"), GraphKind::TrueBranch, Span::NONE);
        let jv = m.value(Const::Graph(j));
        let call = m.apply_unordered(t, vec![jv], Span::NONE);
        m.set_output(t, call);
        let tv = m.value(Const::Graph(t));
        let call_t = m.apply_unordered(f, vec![tv], Span::NONE);
        m.set_output(f, call_t);
        let a = analyze(&m, &[f]);
        assert_eq!(a.parent[t], Some(f));
        assert_eq!(a.parent[j], Some(f));
    }
}

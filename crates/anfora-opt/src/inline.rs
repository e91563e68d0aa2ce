//! Inlining: a call of a small or once-used, non-recursive graph is replaced by a copy of the
//! graph's body (with the graphs nested in it) in the caller, at the call's place in the
//! evaluation order. A call in tail position merges the callee into the caller — how the
//! blocks of a function with static control flow become one graph.

use std::collections::{HashMap, HashSet};

use anfora_ir::analysis::{Analysis, analyze};
use anfora_ir::{Const, GraphId, GraphKind, NodeId, NodeKind};

use crate::Graphs;

/// Largest body (nodes, nested graphs included) inlined at every call site.
const SMALL: usize = 40;

pub fn run(p: &mut Graphs) -> bool {
    let a = analyze(p.module, &[p.entry]);
    let mut uses: HashMap<GraphId, usize> = HashMap::new();
    for &g in &a.graphs {
        let mut operands: Vec<NodeId> = a.nodes[g]
            .iter()
            .flat_map(|&n| p.module.inputs(n).to_vec())
            .collect();
        operands.extend(p.module.graph(g).output);
        for i in operands {
            if let Some(c) = p.module.constant(i) {
                c.for_each_graph(&mut |h| *uses.entry(h).or_insert(0) += 1);
            }
        }
    }
    let subtree_sizes: HashMap<GraphId, usize> = a
        .graphs
        .iter()
        .map(|&h| (h, subtree(&a, h).iter().map(|&x| a.nodes[x].len()).sum()))
        .collect();
    let mut candidates = Vec::new();
    for &g in &a.graphs {
        for &n in &a.nodes[g] {
            let Some(h) = p.module.callee_graph(n) else {
                continue;
            };
            let graph = p.module.graph(h);
            let ok = h != p.entry
                && h != g
                && !a.recursive[h]
                && graph.kind != GraphKind::Fused
                && p.module.inputs(n).len() - 1 == graph.params.len()
                && (uses.get(&h) == Some(&1) || subtree_sizes[&h] <= SMALL);
            if ok {
                candidates.push((g, n, h));
            }
        }
    }
    // The analysis describes the graphs as they were: a callee that received inlined code
    // this round waits for the next round.
    let mut modified: HashSet<GraphId> = HashSet::new();
    let mut names: HashSet<String> = p.module.graphs.values().map(|g| g.name.clone()).collect();
    let first_new = p.module.graphs.len();
    let mut changed = false;
    for (g, n, h) in candidates {
        if subtree(&a, h).iter().any(|x| modified.contains(x)) {
            continue;
        }
        if let Some(out) = inline_call(p, &a, g, n, h, &mut names) {
            // Only `g` and the graphs nested in it may use `n` (scoping), and the graphs
            // copied this round: scanning every graph per inlined call would be quadratic.
            let mut graphs = subtree(&a, g);
            let last = p.module.graphs.len();
            graphs.extend((first_new..last).map(|i| GraphId::from_u32(i as u32)));
            p.module.replace_uses(&graphs, n, out);
        }
        modified.insert(g);
        changed = true;
    }
    changed
}

/// `h` and the graphs nested in it.
fn subtree(a: &Analysis, h: GraphId) -> Vec<GraphId> {
    let mut out = vec![h];
    let mut i = 0;
    while i < out.len() {
        let x = out[i];
        out.extend(a.children[x].iter().copied());
        i += 1;
    }
    out
}

/// Copies `h` (and the graphs nested in it) into `g` at the call `n`. Returns the value that
/// replaces `n`'s other uses, unless `n` was `g`'s tail call and is gone already.
fn inline_call(
    p: &mut Graphs,
    a: &Analysis,
    g: GraphId,
    n: NodeId,
    h: GraphId,
    names: &mut HashSet<String>,
) -> Option<NodeId> {
    let m = &mut *p.module;
    let tree = subtree(a, h);
    let args: Vec<NodeId> = m.inputs(n)[1..].to_vec();
    let mut map: HashMap<NodeId, NodeId> = HashMap::new();
    for (i, &param) in m.graph(h).params.clone().iter().enumerate() {
        map.insert(param, args[i]);
    }
    let mut graph_map: HashMap<GraphId, GraphId> = HashMap::new();
    for &x in &tree[1..] {
        let old = m.graph(x).clone();
        let mut name = old.name.clone();
        let mut k = 1;
        while names.contains(&name) {
            name = format!("{}.{k}", old.name);
            k += 1;
        }
        names.insert(name.clone());
        let nx = m.add_graph(name, old.function.clone(), old.kind, old.span);
        m.graphs[nx].signature = old.signature.clone();
        graph_map.insert(x, nx);
        for &param in &old.params {
            let node = m.node(param).clone();
            let np = m.add_param(nx, node.name.as_deref().unwrap_or(""), node.span);
            map.insert(param, np);
            if let Some(abs) = p.abstracts.get(&param).cloned() {
                p.abstracts.insert(np, abs);
            }
        }
    }
    // Copied nodes remember the call they were inlined through (for tracebacks).
    // (A block is part of the caller's Python function: entering it is not a call.)
    let (caller_function, caller_calls) = m.origin(n);
    let through = if m.graph(h).kind.is_block() {
        caller_calls
    } else {
        caller_calls.then(&anfora_ir::CallChain::call(caller_function, m.node(n).span))
    };
    // A shared chain joined with each node's own: constant space per copy, however deep the
    // inlining goes.
    let origin = |m: &anfora_ir::Module, node: NodeId| {
        let (function, calls) = m.origin(node);
        Some(std::sync::Arc::new(anfora_ir::Inlined {
            function,
            calls: through.then(&calls),
        }))
    };
    // Copies of every Apply node, inputs filled once all exist.
    let mut copies = Vec::new();
    for &x in &tree {
        let target = if x == h { g } else { graph_map[&x] };
        for &node in &a.nodes[x] {
            let old = m.node(node).clone();
            let placeholder = m.value(Const::None);
            let new = m.apply_unordered(target, vec![placeholder], old.span);
            m.nodes[new].name = old.name.clone();
            m.nodes[new].inlined = origin(m, node);
            map.insert(node, new);
            copies.push(node);
            if let Some(abs) = p.abstracts.get(&node).cloned() {
                p.abstracts.insert(new, abs);
            }
        }
    }
    let remap = |m: &mut anfora_ir::Module, map: &HashMap<NodeId, NodeId>, i: NodeId| -> NodeId {
        if let Some(&x) = map.get(&i) {
            return x;
        }
        if let NodeKind::Value(c) = &m.node(i).kind {
            let mut inside = false;
            c.for_each_graph(&mut |x| inside |= graph_map.contains_key(&x));
            if inside {
                let c = remap_graphs(c, &graph_map);
                let span = m.node(i).span;
                return m.value_at(c, span);
            }
        }
        i
    };
    for node in copies {
        let inputs: Vec<NodeId> = m.inputs(node).to_vec();
        let new_inputs: Vec<NodeId> = inputs.iter().map(|&i| remap(m, &map, i)).collect();
        *m.inputs_mut(map[&node]).expect("an Apply") = new_inputs;
    }
    for &x in &tree[1..] {
        let nx = graph_map[&x];
        let order: Vec<NodeId> = m.graph(x).order.iter().map(|o| map[o]).collect();
        m.graphs[nx].order = order;
        if let Some(o) = m.graph(x).output {
            let out = remap(m, &map, o);
            m.set_output(nx, out);
        }
    }
    // Splice the body into the caller, in the order the VM runs `h`: its evaluation order,
    // then the other nodes its output needs, then its tail call.
    let h_order = m.graph(h).order.clone();
    let h_output = m.graph(h).output;
    // `h` ends with a tail call: its output is one of its own Apply nodes, outside its order.
    // (An output owned by another graph, such as the caller's node a closure returns, is
    // already evaluated where it belongs.)
    let h_tail =
        h_output.filter(|&o| m.node(o).owner == Some(h) && m.is_apply(o) && !h_order.contains(&o));
    let mut body: Vec<NodeId> = h_order.iter().map(|o| map[o]).collect();
    body.extend(
        a.nodes[h]
            .iter()
            .filter(|&&x| Some(x) != h_tail && !h_order.contains(&x))
            .map(|x| map[x]),
    );
    let out = match h_output {
        Some(o) => remap(m, &map, o),
        None => m.value(Const::None),
    };
    let tail_call = h_tail.is_some();
    // A true tail call is the output and not in the evaluation order; a call that is both
    // (its value is used before it is returned) is spliced like any other.
    if m.graph(g).output == Some(n) && !m.graph(g).order.contains(&n) {
        m.graphs[g].order.extend(body);
        m.set_output(g, out);
        None
    } else {
        if tail_call {
            body.push(out);
        }
        let order = &mut m.graphs[g].order;
        let at = order.iter().position(|&o| o == n).unwrap_or(order.len());
        order.splice(at..(at + 1).min(order.len()), body);
        // The caller replaces the uses of `n` by `out` at the end of the round.
        Some(out)
    }
}

fn remap_graphs(c: &Const, graph_map: &HashMap<GraphId, GraphId>) -> Const {
    match c {
        Const::Graph(x) => Const::Graph(graph_map.get(x).copied().unwrap_or(*x)),
        Const::Tuple(items) => {
            Const::tuple(items.iter().map(|i| remap_graphs(i, graph_map)).collect())
        }
        Const::List(items) => {
            Const::List(items.iter().map(|i| remap_graphs(i, graph_map)).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use anfora_ir::{Const, Prim};
    use anfora_ops::Value;

    use crate::testing::*;

    #[test]
    fn a_callee_ending_in_a_tail_call_is_spliced_in_the_order_the_vm_runs_it() {
        // h(v) = print(v); return k(v * 2)   (k's argument is computed outside h's order)
        // k(w) = w + 1
        // main(x) = print(h(x)); return 0
        let mut b = Builder::new();
        let k = b.function("k");
        let w = b.param(k, "w", int());
        let one = b.konst(Const::Int(1));
        let add = b.prim(k, Prim::Add, &[w, one], int());
        b.output(k, add);
        let h = b.function("h");
        let v = b.param(h, "v", int());
        b.print(h, &[v]);
        let two = b.konst(Const::Int(2));
        let doubled = b.unordered_prim(h, Prim::Mul, &[v, two], int());
        let kv = b.graph_value(k);
        let tail = b.unordered(h, kv, &[doubled], int());
        b.output(h, tail);
        let main = b.function("main");
        let x = b.param(main, "x", int());
        let hv = b.graph_value(h);
        let call = b.call(main, hv, &[x], int());
        b.print(main, &[call]);
        let zero = b.konst(Const::Int(0));
        b.output(main, zero);
        let before = b.run(main, vec![Value::Int(5)]);
        assert_eq!(before, (Ok("0".into()), "5\n11\n".into()));
        assert!(b.apply(main, super::run));
        assert_eq!(b.prims(main), vec![Prim::Print, Prim::Mul, Prim::Print]);
        let order = &b.module.graph(main).order;
        assert_eq!(order.len(), 4, "print, v * 2, the call of k, print");
        assert_eq!(b.run(main, vec![Value::Int(5)]), before);
        assert!(b.apply(main, super::run));
        assert_eq!(
            b.prims(main),
            vec![Prim::Print, Prim::Mul, Prim::Add, Prim::Print]
        );
        assert_eq!(b.reachable(main), vec![main]);
        assert_eq!(b.run(main, vec![Value::Int(5)]), before);
    }

    #[test]
    fn a_tail_call_of_a_graph_ending_in_a_tail_call_stays_a_tail_call() {
        // main(x) = h(x) (tail) with h(v) = k(v + 1) (tail): main ends with the call of k.
        let mut b = Builder::new();
        let k = b.function("k");
        let w = b.param(k, "w", int());
        b.output(k, w);
        let h = b.function("h");
        let v = b.param(h, "v", int());
        let one = b.konst(Const::Int(1));
        let add = b.prim(h, Prim::Add, &[v, one], int());
        let kv = b.graph_value(k);
        let tail = b.unordered(h, kv, &[add], int());
        b.output(h, tail);
        let main = b.function("main");
        let x = b.param(main, "x", int());
        let hv = b.graph_value(h);
        let call = b.unordered(main, hv, &[x], int());
        b.output(main, call);
        let run = |b: &Builder| b.run(main, vec![Value::Int(5)]);
        assert_eq!(run(&b).0, Ok("6".into()));
        assert!(b.apply(main, super::run));
        let out = b.module.graph(main).output.unwrap();
        assert!(
            !b.module.graph(main).order.contains(&out),
            "the output is a tail call"
        );
        assert_eq!(b.module.callee_graph(out), Some(k));
        assert_eq!(run(&b).0, Ok("6".into()));
    }
}

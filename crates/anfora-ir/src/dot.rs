//! Graphviz export: one cluster per graph, one table per Apply node with a port per input.
//! Data edges are solid, callee edges (input 0) dashed, and references to graphs are blue
//! edges into the referenced graph's cluster. Render with `dot -Tsvg`.

use std::collections::HashMap;
use std::fmt::Write;

use crate::analysis::analyze;
use crate::print::constant;
use crate::{GraphId, Module, NodeId, NodeKind};

fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// The `.dot` text of `entry` and every graph it reaches.
pub fn to_dot(module: &Module, entry: GraphId) -> String {
    let a = analyze(module, &[entry]);
    let cluster: HashMap<GraphId, usize> =
        a.graphs.iter().enumerate().map(|(i, &g)| (g, i)).collect();
    let mut out = String::new();
    out.push_str("digraph anfora {\n  compound=true;\n  newrank=true;\n");
    out.push_str("  node [fontname=\"monospace\", fontsize=10];\n  edge [fontsize=9];\n");
    let mut edges = String::new();
    let node_id = |n: NodeId| format!("n{}", n.as_u32());
    let mut const_count = 0usize;

    for &g in &a.graphs {
        let graph = module.graph(g);
        let ci = cluster[&g];
        let _ = writeln!(
            out,
            "  subgraph cluster_{ci} {{\n    label=\"@{}\";\n    style=rounded;",
            escape_html(&graph.name)
        );
        // Parameters.
        for &p in &graph.params {
            let name = module.node(p).name.as_deref().unwrap_or("");
            let _ = writeln!(
                out,
                "    {} [shape=box, style=filled, fillcolor=paleturquoise, label=\"{}\"];",
                node_id(p),
                escape_html(name)
            );
        }
        // Apply nodes as tables with one port per input.
        for (k, &n) in a.nodes[g].iter().enumerate() {
            let inputs = module.inputs(n);
            let mut ports = String::new();
            for i in 0..inputs.len() {
                let _ = write!(ports, "<td port=\"p{i}\">{i}</td>");
            }
            let title = match &module.node(n).name {
                Some(name) => format!("%{k}({})", escape_html(name)),
                None => format!("%{k}"),
            };
            let _ = writeln!(
                out,
                "    {} [shape=plaintext, label=<<table border=\"0\" cellborder=\"1\" cellspacing=\"0\"><tr>{ports}</tr><tr><td colspan=\"{}\" bgcolor=\"cornsilk\">{title}</td></tr></table>>];",
                node_id(n),
                inputs.len()
            );
            for (i, &input) in inputs.iter().enumerate() {
                let style = if i == 0 { " [style=dashed]" } else { "" };
                match &module.node(input).kind {
                    NodeKind::Value(c) => {
                        const_count += 1;
                        let cid = format!("c{const_count}");
                        let fill = if i == 0 { "lavender" } else { "white" };
                        let _ = writeln!(
                            out,
                            "    {cid} [shape=box, style=\"rounded,filled\", fillcolor={fill}, label=\"{}\"];",
                            escape_html(&constant(module, c))
                        );
                        let _ = writeln!(edges, "  {cid} -> {}:p{i}{style};", node_id(n));
                        c.for_each_graph(&mut |h| {
                            if let Some(&hc) = cluster.get(&h) {
                                let _ = writeln!(
                                    edges,
                                    "  {cid} -> ret{hc} [color=blue, style=dotted, lhead=cluster_{hc}];"
                                );
                            }
                        });
                    }
                    _ => {
                        let _ =
                            writeln!(edges, "  {} -> {}:p{i}{style};", node_id(input), node_id(n));
                    }
                }
            }
        }
        // The Return node.
        let _ = writeln!(
            out,
            "    ret{ci} [shape=box, style=filled, fillcolor=lightgrey, label=\"Return\"];\n  }}"
        );
        if let Some(o) = graph.output {
            match &module.node(o).kind {
                NodeKind::Value(c) => {
                    const_count += 1;
                    let cid = format!("c{const_count}");
                    let _ = writeln!(
                        out,
                        "  {cid} [shape=box, style=rounded, label=\"{}\"];",
                        escape_html(&constant(module, c))
                    );
                    let _ = writeln!(edges, "  {cid} -> ret{ci};");
                }
                _ => {
                    let _ = writeln!(edges, "  {} -> ret{ci};", node_id(o));
                }
            }
        }
    }
    out.push_str(&edges);
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Const, GraphKind, Prim, Span};
    use std::sync::Arc;

    #[test]
    fn clusters_ports_and_edge_styles() {
        let mut m = Module::new();
        let f = m.add_graph("f", Arc::from("f"), GraphKind::Function, Span::NONE);
        let x = m.add_param(f, "x", Span::NONE);
        let g = m.add_graph("g<1>", Arc::from("g"), GraphKind::Function, Span::NONE);
        let neg = m.apply_prim(g, Prim::Neg, &[x], Span::NONE);
        m.set_output(g, neg);
        let gv = m.value(Const::Graph(g));
        let call = m.apply_unordered(f, vec![gv], Span::NONE);
        m.set_output(f, call);
        let dot = to_dot(&m, f);
        assert!(dot.starts_with("digraph anfora {"));
        assert!(dot.contains("subgraph cluster_0 {\n    label=\"@f\";"));
        assert!(dot.contains("label=\"@g&lt;1&gt;\""), "{dot}");
        // callee edge dashed, data edge solid, graph reference into the cluster.
        assert!(dot.contains(":p0 [style=dashed];"));
        assert!(dot.contains(&format!("  n{} -> n{}:p1;", x.as_u32(), neg.as_u32())));
        assert!(dot.contains("lhead=cluster_1"));
        assert!(dot.trim_end().ends_with('}'));
    }
}

//! The IR verifier. Runs after the frontend and after every pass in debug builds.
//!
//! Invariants checked on every graph reachable from the roots:
//! * every graph has an output; every input of an Apply node exists; an Apply has a callee;
//! * the evaluation order lists only Apply nodes of its graph, each once;
//! * a node is used only inside its owner graph or the owner's descendants (lexical scoping);
//! * every Parameter belongs to exactly one graph's parameter list, its owner's;
//! * the derived nesting of graphs is a tree.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::analysis::{Analysis, analyze};
use crate::{GraphId, Module, NodeId, NodeKind};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    pub graph: GraphId,
    pub node: Option<NodeId>,
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.node {
            Some(n) => write!(f, "graph {} node {}: {}", self.graph, n, self.message),
            None => write!(f, "graph {}: {}", self.graph, self.message),
        }
    }
}

/// Checks the graphs reachable from `roots`; returns every violation found.
pub fn verify(module: &Module, roots: &[GraphId]) -> Result<(), Vec<VerifyError>> {
    let a = analyze(module, roots);
    let errors = check(module, &a);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Panics with the violations (for debug-build assertions after passes).
pub fn assert_valid(module: &Module, roots: &[GraphId], after: &str) {
    if let Err(errors) = verify(module, roots) {
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        panic!(
            "IR verification failed after {after}:\n{}",
            lines.join("\n")
        );
    }
}

fn check(module: &Module, a: &Analysis) -> Vec<VerifyError> {
    let mut errors = Vec::new();
    let mut err = |graph, node, message: String| {
        errors.push(VerifyError {
            graph,
            node,
            message,
        })
    };
    let mut param_home: HashMap<NodeId, GraphId> = HashMap::new();

    for (g, candidates) in &a.scope_errors {
        err(
            *g,
            None,
            format!("free variables come from graphs that are not nested: {candidates:?}"),
        );
    }
    for &g in &a.graphs {
        let graph = module.graph(g);
        if graph.output.is_none() {
            err(g, None, "graph has no output".into());
        }
        if a.ancestors(g).contains(&g) {
            err(g, None, "graph is its own ancestor".into());
        }
        for &p in &graph.params {
            let node = module.node(p);
            if !matches!(node.kind, NodeKind::Parameter) || node.owner != Some(g) {
                err(
                    g,
                    Some(p),
                    "parameter list holds a node that is not its own parameter".into(),
                );
            }
            if let Some(other) = param_home.insert(p, g) {
                err(
                    g,
                    Some(p),
                    format!("parameter also belongs to graph {other}"),
                );
            }
        }
        let mut in_order = HashSet::new();
        for &n in &graph.order {
            let node = module.node(n);
            if !matches!(node.kind, NodeKind::Apply(_)) || node.owner != Some(g) {
                err(
                    g,
                    Some(n),
                    "evaluation order holds a node that is not an Apply of this graph".into(),
                );
            }
            if !in_order.insert(n) {
                err(
                    g,
                    Some(n),
                    "node appears twice in the evaluation order".into(),
                );
            }
        }
        let uses = a.nodes[g]
            .iter()
            .flat_map(|&n| module.inputs(n).iter().map(move |&i| (Some(n), i)))
            .chain(graph.output.map(|o| (None, o)));
        for (user, input) in uses {
            if !module.nodes.is_valid(input) {
                err(g, user, format!("input {input} does not exist"));
                continue;
            }
            if let Some(u) = user
                && module.inputs(u).is_empty()
            {
                err(g, Some(u), "Apply node without a callee".into());
            }
            let node = module.node(input);
            match (&node.kind, node.owner) {
                (NodeKind::Value(_), None) => {}
                (NodeKind::Value(_), Some(_)) => {
                    err(g, Some(input), "Value node has an owner graph".into());
                }
                (_, None) => err(g, Some(input), "node has no owner graph".into()),
                (_, Some(owner)) => {
                    if owner != g && !a.is_ancestor(owner, g) {
                        err(
                            g,
                            user,
                            format!(
                                "uses {input} of graph @{}, which does not enclose @{}",
                                module.graph(owner).name,
                                graph.name
                            ),
                        );
                    }
                    if matches!(node.kind, NodeKind::Parameter)
                        && !module.graph(owner).params.contains(&input)
                    {
                        err(
                            g,
                            Some(input),
                            "parameter is not in its graph's parameter list".into(),
                        );
                    }
                }
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Const, GraphKind, Prim, Span};
    use std::sync::Arc;

    fn graph(m: &mut Module, name: &str) -> GraphId {
        m.add_graph(name, Arc::from(name), GraphKind::Function, Span::NONE)
    }

    #[test]
    fn accepts_a_closure() {
        let mut m = Module::new();
        let f = graph(&mut m, "f");
        let x = m.add_param(f, "x", Span::NONE);
        let g = graph(&mut m, "g");
        let neg = m.apply_prim(g, Prim::Neg, &[x], Span::NONE);
        m.set_output(g, neg);
        let gv = m.value(Const::Graph(g));
        m.set_output(f, gv);
        assert_eq!(verify(&m, &[f]), Ok(()));
    }

    #[test]
    fn rejects_missing_output() {
        let mut m = Module::new();
        let f = graph(&mut m, "f");
        let g = graph(&mut m, "g");
        let y = m.add_param(g, "y", Span::NONE);
        // f uses a parameter of g, and g has no output.
        let neg = m.apply_prim(f, Prim::Neg, &[y], Span::NONE);
        m.set_output(f, neg);
        let errors = verify(&m, &[f]).unwrap_err();
        let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert!(text.iter().any(|t| t.contains("has no output")), "{text:?}");
    }

    #[test]
    fn rejects_parameter_shared_by_two_graphs() {
        let mut m = Module::new();
        let f = graph(&mut m, "f");
        let x = m.add_param(f, "x", Span::NONE);
        let g = graph(&mut m, "g");
        m.graphs[g].params.push(x);
        m.set_output(g, x);
        let gv = m.value(Const::Graph(g));
        let call = m.apply_unordered(f, vec![gv, x], Span::NONE);
        m.set_output(f, call);
        let errors = verify(&m, &[f]).unwrap_err();
        assert!(
            errors
                .iter()
                .any(|e| e.message.contains("not its own parameter"))
        );
    }

    #[test]
    fn rejects_duplicate_order_entries_and_bad_inputs() {
        let mut m = Module::new();
        let f = graph(&mut m, "f");
        let x = m.add_param(f, "x", Span::NONE);
        let neg = m.apply_prim(f, Prim::Neg, &[x], Span::NONE);
        m.graphs[f].order.push(neg);
        m.set_output(f, neg);
        let errors = verify(&m, &[f]).unwrap_err();
        assert!(errors.iter().any(|e| e.message.contains("twice")));
    }

    #[test]
    fn rejects_use_outside_the_owner() {
        // g uses a node computed in sibling k: neither encloses the other.
        let mut m = Module::new();
        let f = graph(&mut m, "f");
        let x = m.add_param(f, "x", Span::NONE);
        let k = graph(&mut m, "k");
        let kx = m.apply_prim(k, Prim::Neg, &[x], Span::NONE);
        m.set_output(k, kx);
        let g = graph(&mut m, "g");
        let gx = m.apply_prim(g, Prim::Neg, &[kx], Span::NONE);
        let gx2 = m.apply_prim(g, Prim::Add, &[gx, x], Span::NONE);
        m.set_output(g, gx2);
        let kv = m.value(Const::Graph(k));
        let gv = m.value(Const::Graph(g));
        let t = m.apply_prim(f, Prim::MakeTuple, &[kv, gv], Span::NONE);
        m.set_output(f, t);
        assert!(verify(&m, &[f]).is_err());
    }
}

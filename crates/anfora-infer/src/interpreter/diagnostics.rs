//! The errors that remain once the analysis is done: E0301 (an operation fails on its final
//! arguments), E0304 (an argument that must be a constant is not) and E0302 (paths that join,
//! or functions one call may call, give tensors that do not join).

use std::collections::HashSet;

use anfora_ir::codes::{JOIN as JOIN_ERROR, NOT_CONSTANT, SHAPE as SHAPE_ERROR};
use anfora_ir::diag::Diagnostic;
use anfora_ir::{GraphId, GraphKind, NodeId, Span};
use anfora_ops::abs::{Abs, CtxId, Func};
use anfora_ops::call::shape_message;

use super::{ArgSource, Interpreter};

impl Interpreter<'_> {
    /// E0301 for the operations that fail on their final arguments. While the analysis runs,
    /// the value a loop or a recursion carries is first only what its exit path gives (the
    /// recursive call's result is still `Bottom`): a tuple grown in a loop is `()` in the
    /// first round and of unknown length later. An error found in an earlier round may not
    /// exist in the program, so each context keeps the errors of its latest evaluation only,
    /// and those of the contexts the program keeps are reported here.
    pub(super) fn report_shape_errors(&mut self, root: CtxId) {
        for c in self.live(root) {
            for (n, operation, msg, constant) in self.ctx(c).shape_errors.clone() {
                let span = self.module.node(n).span;
                let message = shape_message(&operation, &msg);
                let refusal = self
                    .module
                    .callee_prim(n)
                    .and_then(|p| p.def().attrs.refusal);
                let d = if let Some(refusal) = refusal {
                    Diagnostic::error(refusal.code, msg.clone(), span)
                        .with_label(refusal.label)
                        .with_hint(refusal.hint)
                } else if constant {
                    Diagnostic::error(NOT_CONSTANT, message, span)
                        .with_label("not known at compile time")
                        .with_hint(
                            "write the value as a literal (or a module-level constant) at the \
                             call, or pass it as an argument that is a compile-time constant; a \
                             value chosen at run time (by a branch on a tensor, or as the \
                             variable of a loop over several strings) is not",
                        )
                } else {
                    Diagnostic::error(SHAPE_ERROR, message, span)
                        .with_label("here")
                        .with_hint(
                            "tensor shapes and dtypes are checked when compiling, before the \
                             program runs",
                        )
                };
                self.report(c, d);
            }
            for d in self.ctx(c).refusals.clone() {
                self.report(c, d);
            }
        }
    }

    /// E0302 for the joins whose sizes disagree once the analysis is done. While it runs, a
    /// value may have a size in one round and an unknown size in the next (a loop or a
    /// recursion that changes it); only the final values tell whether two paths really give
    /// tensors of different shapes. (Different dtypes or ranks are reported at once: they do
    /// not change from round to round.)
    pub(super) fn check_joins(&mut self, root: CtxId) {
        let live = self.live(root);
        let is_live: HashSet<CtxId> = live.iter().copied().collect();
        for &c in &live {
            // The functions a call may call.
            let mut calls: Vec<(NodeId, Vec<(Func, Abs)>)> = self
                .ctx(c)
                .results
                .iter()
                .map(|(n, r)| (*n, r.clone()))
                .collect();
            calls.sort_by_key(|(n, _)| *n);
            for (n, results) in calls {
                if let Some((i, j)) = first_conflict(results.iter().map(|(_, a)| a)) {
                    let (a, b) = (&results[i], &results[j]);
                    self.results_join_error(c, n, (&a.0, &a.1), (&b.0, &b.1));
                }
            }
            // The jumps into a join block.
            if self.module.graph(self.ctx(c).graph).kind != GraphKind::Join {
                continue;
            }
            let edges: Vec<((CtxId, NodeId), Vec<ArgSource>)> = self
                .ctx(c)
                .incoming
                .iter()
                .filter(|((from, n), _)| {
                    is_live.contains(from)
                        && self
                            .ctx(*from)
                            .calls
                            .get(n)
                            .is_some_and(|ts| ts.contains(&c))
                })
                .cloned()
                .collect();
            let n_params = self.module.graph(self.ctx(c).graph).params.len();
            for i in 0..n_params {
                let values = edges.iter().map(|(_, sources)| &sources[i].value);
                if let Some((a, b)) = first_conflict(values) {
                    let from = edges[b].0.0;
                    let (first, second) = (edges[a].1[i].clone(), edges[b].1[i].clone());
                    self.phi_join_error(from, c, i, &first, &second);
                }
            }
        }
    }

    /// E0302 for the phi of a join block or loop header: parameter `i` of context `t` gets
    /// `second` (from a jump in context `c`) where it already had a tensor it cannot join.
    pub(super) fn phi_join_error(
        &mut self,
        c: CtxId,
        t: CtxId,
        i: usize,
        first: &ArgSource,
        second: &ArgSource,
    ) {
        let g = self.ctx(t).graph;
        let graph = self.module.graph(g);
        let var = self.param_label(g, i);
        let (a, b) = (first.value.broaden(), second.value.broaden());
        let what = difference(&a, &b);
        let (message, hint) = if graph.kind == GraphKind::LoopHeader {
            (
                format!("{var} changes from {a} to {b} between loop iterations ({what} differ)"),
                "a tensor carried through a loop must keep its dtype and rank (its sizes may change)",
            )
        } else {
            (
                format!(
                    "{var} is {a} {} and {b} {} ({what} differ)",
                    path_name(first.from, true),
                    path_name(second.from, false)
                ),
                "the branches of an `if` must give tensors of the same dtype and shape",
            )
        };
        let span = graph.span;
        let d = Diagnostic::error(JOIN_ERROR, message, span)
            .with_label(if graph.kind == GraphKind::LoopHeader {
                "in this loop"
            } else {
                "where the paths join"
            })
            .with_hint(hint)
            .with_related(first.span, format!("{a} here"))
            .with_related(second.span, format!("{b} here"));
        self.report(c, d);
    }

    /// Parameter `i` of graph `g` in messages: `'x'` (a phi named after its variable), or
    /// "the value" for a hidden variable (`and`/`or`, a conditional expression).
    pub(super) fn param_label(&self, g: GraphId, i: usize) -> String {
        let var = self
            .module
            .graph(g)
            .params
            .get(i)
            .and_then(|&p| self.module.node(p).name.clone())
            .map(|n| n.trim_start_matches('ф').to_string())
            .unwrap_or_default();
        if var.starts_with('.') || var.is_empty() {
            "the value".to_string()
        } else {
            format!("'{var}'")
        }
    }

    /// E0302 for the results of the functions a call may call (the branches of an `if` that
    /// both return, or a function value that is one of several functions).
    pub(super) fn results_join_error(
        &mut self,
        c: CtxId,
        n: NodeId,
        first: (&Func, &Abs),
        second: (&Func, &Abs),
    ) {
        let (a, b) = (first.1.broaden(), second.1.broaden());
        let what = difference(&a, &b);
        let kind = |f: &Func| match f {
            Func::Closure { graph, .. } => Some(self.module.graph(*graph).kind),
            _ => None,
        };
        let out_span = |f: &Func| match f {
            Func::Closure { graph, .. } => {
                let g = self.module.graph(*graph);
                g.output
                    .map(|o| self.module.node(o).span)
                    .filter(|s| !s.is_none())
                    .unwrap_or(g.span)
            }
            _ => Span::NONE,
        };
        let name = |f: &Func| match f {
            Func::Closure { graph, .. } => format!("'{}'", self.module.graph(*graph).function),
            Func::Prim(p) => format!("'{}'", p.python_name()),
            Func::Partial(..) => "a partial application".to_string(),
            Func::Method(m, _) => format!("'Tensor.{}'", m.name()),
        };
        let (k1, k2) = (kind(first.0), kind(second.0));
        let branches = matches!(
            (k1, k2),
            (Some(GraphKind::TrueBranch), Some(GraphKind::FalseBranch))
                | (Some(GraphKind::FalseBranch), Some(GraphKind::TrueBranch))
        );
        let (message, label, hint) = if branches {
            (
                format!(
                    "the branches of this `if` give tensors of different {what}: {a} {} and {b} {}",
                    path_name(k1.unwrap_or(GraphKind::Join), true),
                    path_name(k2.unwrap_or(GraphKind::Join), false)
                ),
                "the branches join here",
                "the branches of an `if` must give tensors of the same dtype and shape",
            )
        } else if k1.is_some_and(GraphKind::is_block) && k2.is_some_and(GraphKind::is_block) {
            (
                format!("the paths that join here give tensors of different {what}: {a} and {b}"),
                "the paths join here",
                "every path must give tensors of the same dtype and shape",
            )
        } else {
            (
                format!(
                    "the functions called here give tensors of different {what}: {a} from {} and {b} from {}",
                    name(first.0),
                    name(second.0)
                ),
                "one of several functions",
                "the functions one call may call must return tensors of the same dtype and shape",
            )
        };
        let mut d = Diagnostic::error(JOIN_ERROR, message, self.module.node(n).span)
            .with_label(label)
            .with_hint(hint);
        for (f, v) in [(first.0, &a), (second.0, &b)] {
            let s = out_span(f);
            if !s.is_none() {
                d = d.with_related(s, format!("{v} here"));
            }
        }
        self.report(c, d);
    }
}

/// The first two of `values` (by position) that do not join.
fn first_conflict<'a>(values: impl Iterator<Item = &'a Abs>) -> Option<(usize, usize)> {
    let values: Vec<&Abs> = values.collect();
    for j in 1..values.len() {
        for i in 0..j {
            if values[i].join(values[j]).is_err() {
                return Some((i, j));
            }
        }
    }
    None
}

/// How a path into a join is named in messages, from the kind of block that jumps.
fn path_name(kind: GraphKind, first: bool) -> &'static str {
    match kind {
        GraphKind::TrueBranch => "in the true branch",
        GraphKind::FalseBranch => "in the false branch",
        _ if first => "on one path",
        _ => "on another",
    }
}

/// What two abstracts that do not join disagree on: `dtypes`, `shapes` or both (of the first
/// pair of tensors that disagree).
fn difference(a: &Abs, b: &Abs) -> &'static str {
    fn find(a: &Abs, b: &Abs) -> Option<&'static str> {
        match (a, b) {
            (Abs::Tensor(x), Abs::Tensor(y)) => {
                let dtypes = x.dtype != y.dtype;
                let ranks = x.shape.len() != y.shape.len();
                let shapes = x.shape != y.shape;
                match (dtypes, ranks, shapes) {
                    (true, true, _) => Some("dtypes and ranks"),
                    (true, false, true) => Some("dtypes and shapes"),
                    (true, false, false) => Some("dtypes"),
                    (false, true, _) => Some("ranks"),
                    (false, false, true) => Some("shapes"),
                    (false, false, false) => None,
                }
            }
            (Abs::Tuple(xs), Abs::Tuple(ys)) | (Abs::List(xs), Abs::List(ys))
                if xs.len() == ys.len() =>
            {
                xs.iter().zip(ys.iter()).find_map(|(x, y)| find(x, y))
            }
            _ => None,
        }
    }
    find(a, b).unwrap_or("dtypes or shapes")
}

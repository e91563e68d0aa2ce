//! Lowering details: SSA phis, CheckBound pruning, block graphs, static argument binding.

use std::collections::HashMap;

use anfora_front::ast::StmtKind;
use anfora_front::{Frontend, FunctionRef, Resolved, Resolver, ScopeId};
use anfora_ir::{Const, GraphId, GraphKind, Module, Prim};

struct Functions(HashMap<String, FunctionRef>);

impl Resolver for Functions {
    fn resolve_global(&mut self, _scope: ScopeId, name: &str) -> Resolved {
        match self.0.get(name) {
            Some(f) => Resolved::Function(*f),
            None => Resolved::Unknown,
        }
    }
}

/// Compiles `entry` of `src`; panics on diagnostics.
fn compile(src: &str, entry: &str) -> (Frontend, GraphId) {
    let mut fe = Frontend::new();
    let m = fe.parse_file("t.py", src);
    let mut funcs = HashMap::new();
    for s in &m.body {
        if let StmtKind::FunctionDef(d) = &s.kind {
            funcs.insert(
                d.name.to_string(),
                fe.register_function(d.clone(), ScopeId(0)),
            );
        }
    }
    let mut r = Functions(funcs);
    let f = r.0[entry];
    let g = fe.compile_function(f, &mut r);
    assert!(fe.diagnostics().is_empty(), "{:?}", fe.diagnostics());
    anfora_ir::verify::assert_valid(&fe.module, &[g], "test");
    (fe, g)
}

fn graphs_of(m: &Module, root: GraphId) -> Vec<GraphId> {
    anfora_ir::analysis::analyze(m, &[root]).graphs
}

fn count_prim(m: &Module, root: GraphId, p: Prim) -> usize {
    graphs_of(m, root)
        .iter()
        .flat_map(|&g| m.graph_nodes(g))
        .filter(|&n| m.callee_prim(n) == Some(p))
        .count()
}

fn graph_named<'a>(m: &'a Module, root: GraphId, name: &str) -> &'a anfora_ir::Graph {
    let g = graphs_of(m, root)
        .into_iter()
        .find(|&g| m.graph(g).name == name)
        .unwrap_or_else(|| panic!("no graph {name}"));
    m.graph(g)
}

#[test]
fn loop_invariant_variables_get_no_phi() {
    let (fe, g) = compile(
        "def f(n, k):\n    i = 0\n    s = 0\n    while i < n:\n        s = s + k\n        i = i + 1\n    return s\n",
        "f",
    );
    let header = graph_named(&fe.module, g, "↵f");
    assert_eq!(header.kind, GraphKind::LoopHeader);
    // Only i and s change in the loop: n and k stay free variables of the entry graph.
    let names: Vec<&str> = header
        .params
        .iter()
        .map(|&p| fe.module.node(p).name.as_deref().unwrap())
        .collect();
    assert_eq!(names, vec!["фi", "фs"]);
}

#[test]
fn check_bound_only_where_a_variable_may_be_unassigned() {
    let (fe, g) = compile(
        "def f(c):\n    x = 1\n    if c:\n        x = 2\n    return x\n",
        "f",
    );
    assert_eq!(count_prim(&fe.module, g, Prim::CheckBound), 0);
    let (fe, g) = compile("def f(c):\n    if c:\n        x = 2\n    return x\n", "f");
    assert_eq!(count_prim(&fe.module, g, Prim::CheckBound), 1);
    // The loop variable after a loop that may not run.
    let (fe, g) = compile(
        "def f(n):\n    for i in range(n):\n        pass\n    return i\n",
        "f",
    );
    assert_eq!(count_prim(&fe.module, g, Prim::CheckBound), 1);
}

#[test]
fn if_without_else_continues_in_the_false_branch_when_the_true_branch_returns() {
    let (fe, g) = compile(
        "def f(x):\n    if x < 0:\n        return 0\n    y = x * 2\n    return y\n",
        "f",
    );
    let names: Vec<String> = graphs_of(&fe.module, g)
        .iter()
        .map(|&g| fe.module.graph(g).name.clone())
        .collect();
    assert_eq!(names, vec!["f", "✓f", "✗f"], "no join block is needed");
}

#[test]
fn statically_known_callees_have_their_arguments_bound() {
    let (fe, g) = compile(
        "def g(a, b=2, *, c=3):\n    return a + b + c\n\ndef f(h):\n    return g(1, c=4), h(1, c=4)\n",
        "f",
    );
    let m = &fe.module;
    // g(1, c=4) becomes call @g(1, 2, 4); h(1, c=4) is bound at run time.
    let nodes = m.graph_nodes(g);
    let static_call = nodes
        .iter()
        .find(|&&n| m.callee_graph(n).is_some())
        .unwrap();
    let args: Vec<String> = m.inputs(*static_call)[1..]
        .iter()
        .map(|&i| m.constant(i).unwrap().to_string())
        .collect();
    assert_eq!(args, vec!["I64(1)", "I64(2)", "I64(4)"]);
    assert_eq!(count_prim(m, g, Prim::CallKw), 1);
}

#[test]
fn recursion_resolves_lazily_and_graphs_are_shared() {
    let (fe, g) = compile(
        "def even(n):\n    return True if n == 0 else odd(n - 1)\n\ndef odd(n):\n    return False if n == 0 else even(n - 1)\n",
        "even",
    );
    let a = anfora_ir::analysis::analyze(&fe.module, &[g]);
    assert!(a.recursive[g]);
    let functions = a
        .graphs
        .iter()
        .filter(|&&h| fe.module.graph(h).kind == GraphKind::Function)
        .count();
    assert_eq!(functions, 2);
}

#[test]
fn literal_tuples_fold_to_constants_and_negative_literals_are_constants() {
    let (fe, g) = compile("def f():\n    return (1, -2, 'a', (None, 2.5))\n", "f");
    let out = fe.module.graph(g).output.unwrap();
    assert_eq!(
        anfora_ir::print::constant(&fe.module, fe.module.constant(out).unwrap()),
        "(I64(1), I64(-2), \"a\", (None, F64(2.5)))"
    );
    assert!(matches!(fe.module.constant(out), Some(Const::Tuple(_))));
}

#[test]
fn unknown_names_suggest_ops_functions() {
    let mut fe = Frontend::new();
    let m = fe.parse_file("t.py", "def f(x):\n    return relu(x)\n");
    let StmtKind::FunctionDef(d) = &m.body[0].kind else {
        panic!()
    };
    let f = fe.register_function(d.clone(), ScopeId(0));
    fe.compile_function(f, &mut Functions(HashMap::new()));
    let d = &fe.diagnostics()[0];
    assert_eq!(d.code, "E0201");
    assert_eq!(d.message, "name 'relu' is not defined");
    assert_eq!(
        d.hint.as_deref(),
        Some("did you mean `ops.relu` (after `from anfora import ops`)?")
    );
}

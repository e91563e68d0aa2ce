//! Helpers shared by the optimizer tests: compile a program through the pipeline and summarize
//! the IR after each stage; run single passes on the specialized graphs; run programs on the
//! compiled engine and on the reference VM.

use std::collections::HashMap;

use anfora_ir::Options;
use anfora_ir::analysis::analyze;
use anfora_ir::{GraphId, GraphKind, Module, NodeId, NodeKind, Prim};
use anfora_ops::Abs;
use anfora_ops::Value;
use anfora_opt::Graphs;
use anfora_session::{Arg, Engine, Failure, Session, repr};
use anfora_vm::Vm;

/// What a call calls.
#[derive(Clone, Debug, PartialEq)]
pub enum Callee {
    Prim(Prim),
    /// A graph constant: the graph's name.
    Graph(String),
    /// A function computed at run time (a `Switch` result, a parameter, a closure).
    Dynamic,
}

/// An operand of a call or a graph's output.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A parameter of the same graph, by name.
    Param(String),
    /// A constant, as the dump writes it (`I64(1)`, `F64(2.0)`, graphs as `@name`).
    Const(String),
    /// A call of the same graph, by its index in [`GraphIr::calls`].
    Call(usize),
    /// A node of another graph (a free variable).
    Free,
}

#[derive(Clone, Debug)]
pub struct Call {
    pub callee: Callee,
    pub args: Vec<Operand>,
    /// Whether the call is in the graph's evaluation order (a tail call is not).
    pub ordered: bool,
}

#[derive(Clone, Debug)]
pub struct GraphIr {
    pub name: String,
    pub kind: GraphKind,
    pub recursive: bool,
    pub params: Vec<String>,
    /// Apply nodes in the order the graph computes them.
    pub calls: Vec<Call>,
    pub output: Operand,
}

impl GraphIr {
    pub fn prims(&self) -> Vec<Prim> {
        self.calls
            .iter()
            .filter_map(|c| match c.callee {
                Callee::Prim(p) => Some(p),
                _ => None,
            })
            .collect()
    }

    pub fn count(&self, p: Prim) -> usize {
        self.prims().iter().filter(|&&q| q == p).count()
    }

    /// Names of the graphs this graph calls directly.
    pub fn graph_calls(&self) -> Vec<String> {
        self.calls
            .iter()
            .filter_map(|c| match &c.callee {
                Callee::Graph(g) => Some(g.clone()),
                _ => None,
            })
            .collect()
    }

    /// Calls of `p`.
    pub fn calls_of(&self, p: Prim) -> Vec<&Call> {
        self.calls
            .iter()
            .filter(|c| c.callee == Callee::Prim(p))
            .collect()
    }
}

/// The IR reachable from an entry after some stage.
#[derive(Clone, Debug)]
pub struct Ir {
    /// The `.ir` dump (for failure messages).
    pub text: String,
    /// Reachable graphs, entry first.
    pub graphs: Vec<GraphIr>,
    /// Graph constants used other than as the callee of a call: closures made as values.
    pub graph_values: Vec<String>,
}

impl Ir {
    pub fn build(module: &Module, entry: GraphId, abstracts: Option<&HashMap<NodeId, Abs>>) -> Ir {
        let abs = |n: NodeId| abstracts.and_then(|a| a.get(&n)).map(|a| a.to_string());
        let opts = anfora_ir::print::PrintOptions {
            source_comments: false,
            abstract_of: abstracts.map(|_| &abs as &dyn Fn(NodeId) -> Option<String>),
        };
        let text = anfora_ir::print::print_with(module, entry, &opts);
        let a = analyze(module, &[entry]);
        let mut graph_values = Vec::new();
        let mut graphs = Vec::new();
        for &g in &a.graphs {
            let graph = module.graph(g);
            let nodes = &a.nodes[g];
            let index: HashMap<NodeId, usize> =
                nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
            let mut operand = |n: NodeId, as_callee: bool| -> Operand {
                let node = module.node(n);
                match &node.kind {
                    NodeKind::Value(c) => {
                        let mut named = c.to_string();
                        c.for_each_graph(&mut |h| {
                            let name = module.graph(h).name.clone();
                            if !as_callee {
                                graph_values.push(name.clone());
                            }
                            named = format!("@{name}");
                        });
                        Operand::Const(named)
                    }
                    _ if node.owner != Some(g) => Operand::Free,
                    NodeKind::Parameter => {
                        Operand::Param(node.name.as_deref().unwrap_or("").to_string())
                    }
                    NodeKind::Apply(_) => Operand::Call(index[&n]),
                }
            };
            let mut calls = Vec::new();
            for &n in nodes {
                let inputs = module.inputs(n);
                let callee = match module.constant(inputs[0]) {
                    Some(anfora_ir::Const::Prim(p)) => Callee::Prim(*p),
                    Some(anfora_ir::Const::Graph(h)) => {
                        Callee::Graph(module.graph(*h).name.clone())
                    }
                    _ => Callee::Dynamic,
                };
                let callee_is_const = !matches!(callee, Callee::Dynamic);
                // The callee position of a direct call is not a closure value.
                if !callee_is_const {
                    operand(inputs[0], false);
                }
                let args = inputs[1..].iter().map(|&i| operand(i, false)).collect();
                calls.push(Call {
                    callee,
                    args,
                    ordered: graph.order.contains(&n),
                });
            }
            let output = match graph.output {
                Some(o) => operand(o, false),
                None => Operand::Const("<none>".into()),
            };
            graphs.push(GraphIr {
                name: graph.name.clone(),
                kind: graph.kind,
                recursive: a.recursive[g],
                params: graph
                    .params
                    .iter()
                    .map(|&p| module.node(p).name.as_deref().unwrap_or("").to_string())
                    .collect(),
                calls,
                output,
            });
        }
        Ir {
            text,
            graphs,
            graph_values,
        }
    }

    pub fn entry(&self) -> &GraphIr {
        &self.graphs[0]
    }

    pub fn count(&self, p: Prim) -> usize {
        self.graphs.iter().map(|g| g.count(p)).sum()
    }

    /// Calls whose callee is computed at run time.
    pub fn dynamic_calls(&self) -> usize {
        self.graphs
            .iter()
            .flat_map(|g| &g.calls)
            .filter(|c| c.callee == Callee::Dynamic)
            .count()
    }

    /// Names of the graphs called directly anywhere.
    pub fn graph_calls(&self) -> Vec<String> {
        self.graphs.iter().flat_map(|g| g.graph_calls()).collect()
    }

    pub fn of_kind(&self, kind: GraphKind) -> Vec<&GraphIr> {
        self.graphs.iter().filter(|g| g.kind == kind).collect()
    }

    /// The fused graphs.
    pub fn fused(&self) -> Vec<&GraphIr> {
        self.of_kind(GraphKind::Fused)
    }

    /// The graph whose name starts with `prefix` (exactly one).
    pub fn graph(&self, prefix: &str) -> &GraphIr {
        let found: Vec<&GraphIr> = self
            .graphs
            .iter()
            .filter(|g| g.name.starts_with(prefix))
            .collect();
        assert_eq!(found.len(), 1, "one graph named {prefix}*:\n{}", self.text);
        found[0]
    }

    /// Asserts that each of `functions` is still a recursive graph (some specialization
    /// named after it), called from the program: recursion is never inlined away.
    pub fn assert_recursion_kept(&self, functions: &[&str]) {
        let calls = self.graph_calls();
        for f in functions {
            let recursive: Vec<&GraphIr> = self
                .graphs
                .iter()
                .filter(|g| g.name.starts_with(f) && g.kind == GraphKind::Function && g.recursive)
                .collect();
            assert!(
                !recursive.is_empty(),
                "a recursive graph for {f}:\n{}",
                self.text
            );
            for g in recursive {
                assert!(
                    calls.contains(&g.name),
                    "@{} is called:\n{}",
                    g.name,
                    self.text
                );
            }
        }
    }

    /// Asserts what the optimized IR of a program with static control flow must be: one graph
    /// (plus fused graphs), no `Switch` or `Partial` call, no closure made as a value, and no
    /// call of a function computed at run time.
    pub fn assert_static(&self) {
        assert_eq!(self.count(Prim::Switch), 0, "no Switch:\n{}", self.text);
        assert_eq!(self.count(Prim::Partial), 0, "no Partial:\n{}", self.text);
        assert!(
            self.graph_values.is_empty(),
            "no closure values ({:?}):\n{}",
            self.graph_values,
            self.text
        );
        assert_eq!(
            self.dynamic_calls(),
            0,
            "every callee is known:\n{}",
            self.text
        );
        for g in &self.graphs[1..] {
            assert_eq!(
                g.kind,
                GraphKind::Fused,
                "only the entry and fused graphs remain, not @{}:\n{}",
                g.name,
                self.text
            );
        }
    }
}

/// A program's IR after each stage and optimizer pass.
pub struct Pipeline {
    pub stages: Vec<(String, Ir)>,
}

impl Pipeline {
    /// The IR after the first run of `stage` (a stage or pass name).
    pub fn first(&self, stage: &str) -> &Ir {
        match self.stages.iter().find(|(s, _)| s == stage) {
            Some((_, ir)) => ir,
            None => panic!("no stage {stage} in {:?}", self.names()),
        }
    }

    pub fn infer(&self) -> &Ir {
        self.first("infer")
    }

    pub fn optimized(&self) -> &Ir {
        self.first("optimize")
    }

    pub fn names(&self) -> Vec<&str> {
        self.stages.iter().map(|(s, _)| s.as_str()).collect()
    }
}

/// Compiles `entry` of `src` for `args` and records the IR after every stage.
pub fn pipeline(src: &str, entry: &str, args: &[Arg]) -> Pipeline {
    let mut s = Session::load("prog.py", src, Options::default());
    let mut stages = Vec::new();
    let r = s.compile_pipeline(entry, Some(args), &mut |view| {
        if view.program.is_none() {
            stages.push((
                view.stage.to_string(),
                Ir::build(view.module, view.entry, view.abstracts),
            ));
        }
    });
    if let Err(f) = r {
        panic!("compile failed: {}", s.render(&f));
    }
    Pipeline { stages }
}

/// What running a program gave: the `repr` of its result or the headline of its exception,
/// and what it printed.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub result: Result<String, String>,
    pub printed: String,
}

fn outcome(s: &Session, r: Result<Value, Failure>, out: Vec<u8>) -> Outcome {
    let result = match r {
        Ok(v) => Ok(repr(&v)),
        Err(Failure::Runtime(e)) => Err(e.headline()),
        Err(f) => panic!("did not run: {}", s.render(&f)),
    };
    Outcome {
        result,
        printed: String::from_utf8(out).unwrap(),
    }
}

/// Runs `entry` on the compiled engine (infer, optimize, lower) and on the reference VM (the
/// unoptimized graphs), checks that they agree and returns the outcome.
pub fn run_both(src: &str, entry: &str, args: &[Arg]) -> Outcome {
    let (compiled, _) = run_values(src, entry, args);
    compiled
}

/// [`run_both`], also returning the compiled engine's result value.
pub fn run_values(src: &str, entry: &str, args: &[Arg]) -> (Outcome, Option<Value>) {
    let mut s = Session::load("prog.py", src, Options::default());
    let mut out = Vec::new();
    let r = s.call(entry, args.to_vec(), &mut out);
    let value = r.as_ref().ok().cloned();
    let compiled = outcome(&s, r, out);
    let mut s = Session::load("prog.py", src, Options::default());
    s.engine = Engine::Reference;
    let mut out = Vec::new();
    let r = s.call(entry, args.to_vec(), &mut out);
    let reference = outcome(&s, r, out);
    assert_eq!(
        compiled, reference,
        "the compiled engine and the reference VM disagree"
    );
    (compiled, value)
}

/// Asserts that `entry` returns `value` (its `repr`) and prints `printed` on both engines.
pub fn expect(src: &str, entry: &str, args: &[Arg], value: &str, printed: &str) {
    let o = run_both(src, entry, args);
    assert_eq!(
        o.result,
        Ok(value.to_string()),
        "result of {entry}{:?}",
        args
    );
    assert_eq!(o.printed, printed, "output of {entry}{:?}", args);
}

/// Asserts that `entry` raises `headline` after printing `printed`, on both engines.
pub fn expect_error(src: &str, entry: &str, args: &[Arg], headline: &str, printed: &str) {
    let o = run_both(src, entry, args);
    assert_eq!(
        o.result,
        Err(headline.to_string()),
        "result of {entry}{:?}",
        args
    );
    assert_eq!(o.printed, printed, "output of {entry}{:?}", args);
}

/// Several calls of one compiled version of `entry` (mutable arguments compile once).
pub fn run_many(src: &str, entry: &str, calls: &[Vec<Arg>]) -> Vec<Outcome> {
    let mut s = Session::load("prog.py", src, Options::default());
    let mut compiled = Vec::new();
    for args in calls {
        let mut out = Vec::new();
        let r = s.call(entry, args.clone(), &mut out);
        compiled.push(outcome(&s, r, out));
    }
    s.engine = Engine::Reference;
    for (args, c) in calls.iter().zip(&compiled) {
        let mut out = Vec::new();
        let r = s.call(entry, args.clone(), &mut out);
        assert_eq!(
            &outcome(&s, r, out),
            c,
            "the compiled engine and the reference VM disagree on {args:?}"
        );
    }
    compiled
}

/// A program specialized for its arguments (the infer stage), on which single passes run.
pub struct Specialized {
    pub session: Session,
    pub entry: GraphId,
    pub abstracts: HashMap<NodeId, Abs>,
    args: Vec<Value>,
}

pub fn specialize(src: &str, entry: &str, args: &[Arg]) -> Specialized {
    let mut session = Session::load("prog.py", src, Options::default());
    let g = match session.compile(entry) {
        Ok(g) => g,
        Err(f) => panic!("compile failed: {}", session.render(&f)),
    };
    let spec = match session.specialize(g, args) {
        Ok(s) => s,
        Err(f) => panic!("infer failed: {}", session.render(&f)),
    };
    Specialized {
        session,
        entry: spec.entry,
        abstracts: spec.abstracts,
        args: args.iter().map(|a| a.value.clone()).collect(),
    }
}

impl Specialized {
    pub fn ir(&self) -> Ir {
        Ir::build(
            &self.session.frontend.module,
            self.entry,
            Some(&self.abstracts),
        )
    }

    /// Runs one pass and verifies the IR; returns whether it changed anything.
    pub fn apply(&mut self, pass: fn(&mut Graphs) -> bool) -> bool {
        let mut p = Graphs {
            module: &mut self.session.frontend.module,
            entry: self.entry,
            abstracts: &mut self.abstracts,
        };
        let changed = pass(&mut p);
        if let Err(errors) = anfora_ir::verify::verify(p.module, &[self.entry]) {
            let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
            panic!(
                "invalid IR after the pass:\n{}\n{}",
                lines.join("\n"),
                self.ir().text
            );
        }
        changed
    }

    /// Runs `passes` in turn until none changes anything.
    pub fn apply_to_fixpoint(&mut self, passes: &[fn(&mut Graphs) -> bool]) {
        for _ in 0..20 {
            let mut changed = false;
            for &pass in passes {
                changed |= self.apply(pass);
            }
            if !changed {
                return;
            }
        }
        panic!("no fixpoint after 20 rounds:\n{}", self.ir().text);
    }

    /// Runs the specialized entry graph, as it is now, on the reference VM.
    pub fn eval(&self) -> Outcome {
        let module = &self.session.frontend.module;
        let mut vm = Vm::new(module, Options::default());
        let f = vm
            .function(self.entry)
            .expect("the entry needs no environment");
        let mut out = Vec::new();
        let result = match vm.call(&f, self.args.clone(), &mut out) {
            Ok(v) => Ok(repr(&v)),
            Err(e) => Err(e.headline()),
        };
        Outcome {
            result,
            printed: String::from_utf8(out).unwrap(),
        }
    }
}

/// A compile-time constant argument.
pub fn c(v: Value) -> Arg {
    Arg::from(v)
}

/// An argument compiled for its type only.
pub fn m(v: Value) -> Arg {
    Arg::mutable(v)
}

/// A tensor (or other value) from a Python literal: `[1.0, 2.0]` is a float32 tensor.
pub fn lit(text: &str) -> Value {
    anfora_session::literal_value(text).unwrap()
}

pub fn int(i: i64) -> Value {
    Value::Int(i)
}

pub fn float(f: f64) -> Value {
    Value::Float(f)
}

pub fn ok(printed: &str, value: &str) -> Outcome {
    Outcome {
        result: Ok(value.to_string()),
        printed: printed.to_string(),
    }
}

//! Helpers shared by anfora-infer's integration tests: load a program, infer an entry for some
//! arguments, and look at the specialized graphs, their abstracts and the diagnostics.

#![allow(dead_code)]

use std::collections::HashMap;

use anfora_infer::Specialized;
use anfora_ir::Options;
use anfora_ir::diag::Diagnostic;
use anfora_ir::{GraphId, GraphKind, NodeId, Prim};
use anfora_ops::Abs;
use anfora_ops::Value;
use anfora_session::{Arg, Failure, Session};

pub const FILE: &str = "model.py";

pub fn load(src: &str) -> Session {
    Session::load(FILE, src, Options::default())
}

/// A tensor argument from a Python literal (`"[[1.0, 2.0]]"`).
pub fn tensor(text: &str) -> Arg {
    Arg::from(anfora_session::literal_value(text).expect("a tensor literal"))
}

pub fn tensor_value(text: &str) -> Value {
    anfora_session::literal_value(text).expect("a literal")
}

/// A float32 tensor of zeros of this shape.
pub fn zeros(shape: &[usize]) -> Arg {
    Arg::from(Value::Tensor(
        anfora_tensor::Tensor::zeros(shape, anfora_tensor::DType::F32).expect("a small tensor"),
    ))
}

/// A compile-time constant int.
pub fn int(i: i64) -> Arg {
    Arg::from(Value::Int(i))
}

/// An int whose value is known only at run time.
pub fn mint(i: i64) -> Arg {
    Arg::mutable(Value::Int(i))
}

pub fn boolean(b: bool) -> Arg {
    Arg::from(Value::Bool(b))
}

pub fn mbool(b: bool) -> Arg {
    Arg::mutable(Value::Bool(b))
}

/// A program inferred and specialized for one signature.
pub struct Inferred {
    pub session: Session,
    pub spec: Specialized,
}

/// Compiles `entry` (parse, resolve) and infers it for `args`.
pub fn try_infer(
    src: &str,
    entry: &str,
    args: &[Arg],
) -> Result<Inferred, Box<(Session, Vec<Diagnostic>)>> {
    let mut session = load(src);
    let g = match session.compile(entry) {
        Ok(g) => g,
        Err(f) => panic!("{entry} does not compile:\n{}", session.render(&f)),
    };
    match session.specialize(g, args) {
        Ok(spec) => Ok(Inferred { session, spec }),
        Err(Failure::Compile(d)) => Err(Box::new((session, d))),
        Err(f) => panic!("unexpected failure:\n{}", session.render(&f)),
    }
}

pub fn infer(src: &str, entry: &str, args: &[Arg]) -> Inferred {
    match try_infer(src, entry, args) {
        Ok(i) => i,
        Err(e) => {
            let (s, d) = *e;
            panic!(
                "inference of {entry} failed:\n{}",
                s.render(&Failure::Compile(d))
            )
        }
    }
}

/// The diagnostics inference gives (it must fail).
pub fn errors(src: &str, entry: &str, args: &[Arg]) -> (Session, Vec<Diagnostic>) {
    match try_infer(src, entry, args) {
        Ok(i) => panic!("inference of {entry} succeeded:\n{}", i.ir()),
        Err(e) => *e,
    }
}

/// `(file, line, col)` of a diagnostic.
pub fn location(s: &Session, d: &Diagnostic) -> (String, u32, u32) {
    let (f, loc) = s
        .frontend
        .module
        .sources
        .location(d.span)
        .expect("the diagnostic has a location");
    (f.name.clone(), loc.line, loc.col)
}

/// `(code, message, line, col)` of each diagnostic.
pub fn summary(s: &Session, ds: &[Diagnostic]) -> Vec<(&'static str, String, u32, u32)> {
    ds.iter()
        .map(|d| {
            let (file, line, col) = location(s, d);
            assert_eq!(file, FILE);
            (d.code, d.message.clone(), line, col)
        })
        .collect()
}

/// The one diagnostic of `ds` as (code, message, line, col), and the rendered report.
pub fn single(s: &Session, ds: &[Diagnostic]) -> ((&'static str, String, u32, u32), String) {
    let all = summary(s, ds);
    assert_eq!(all.len(), 1, "expected one diagnostic, got {all:#?}");
    (all[0].clone(), render(s, ds))
}

/// Compares the single diagnostic `got` of `src` with `want` (code, message, line, col),
/// noting a difference in `bad`.
pub fn compare_diagnostic(
    bad: &mut Vec<String>,
    src: &str,
    want: (&str, &str, u32, u32),
    got: (&str, String, u32, u32),
) {
    if (got.0, got.1.as_str(), got.2, got.3) != want {
        bad.push(format!("{src}\n  want {want:?}\n  got  {got:?}"));
    }
}

/// Fails with every difference [`compare_diagnostic`] noted.
pub fn assert_no_differences(bad: &[String]) {
    assert!(
        bad.is_empty(),
        "{} cases differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

pub fn render(s: &Session, ds: &[Diagnostic]) -> String {
    s.render(&Failure::Compile(ds.to_vec()))
}

impl Inferred {
    pub fn module(&self) -> &anfora_ir::Module {
        &self.session.frontend.module
    }

    /// The specialized graphs reachable from the specialized entry.
    pub fn graphs(&self) -> Vec<GraphId> {
        anfora_ir::analysis::analyze(self.module(), &[self.spec.entry]).graphs
    }

    pub fn graphs_of_kind(&self, kind: GraphKind) -> Vec<GraphId> {
        self.graphs()
            .into_iter()
            .filter(|&g| self.module().graph(g).kind == kind)
            .collect()
    }

    /// How many specialized graphs there are of each Python function (blocks included).
    pub fn count_by_function(&self) -> HashMap<String, usize> {
        let mut m = HashMap::new();
        for g in self.graphs() {
            *m.entry(self.module().graph(g).function.to_string())
                .or_insert(0) += 1;
        }
        m
    }

    /// Specialized graphs of function kind (`def`s and lambdas) named `function`.
    pub fn functions_named(&self, function: &str) -> Vec<GraphId> {
        self.graphs()
            .into_iter()
            .filter(|&g| {
                let graph = self.module().graph(g);
                &*graph.function == function
                    && matches!(graph.kind, GraphKind::Function | GraphKind::Lambda)
            })
            .collect()
    }

    /// The Apply nodes of every reachable specialized graph.
    pub fn applies(&self) -> Vec<NodeId> {
        let m = self.module();
        self.graphs()
            .into_iter()
            .flat_map(|g| m.graph_nodes(g))
            .collect()
    }

    /// The nodes calling primitive `p` in the specialized program.
    pub fn prim_calls(&self, p: Prim) -> Vec<NodeId> {
        self.applies()
            .into_iter()
            .filter(|&n| self.module().callee_prim(n) == Some(p))
            .collect()
    }

    pub fn abs(&self, n: NodeId) -> Abs {
        self.spec
            .abstracts
            .get(&n)
            .cloned()
            .unwrap_or_else(|| panic!("no abstract for {n:?}"))
    }

    /// The abstracts of the nodes named `var` (a Python variable) in the specialized program.
    pub fn abs_of_var(&self, var: &str) -> Vec<Abs> {
        let m = self.module();
        let mut out = Vec::new();
        for g in self.graphs() {
            let graph = m.graph(g);
            for n in graph.params.iter().copied().chain(m.graph_nodes(g)) {
                if m.node(n).name.as_deref() == Some(var) {
                    out.push(self.abs(n));
                }
            }
        }
        out
    }

    /// The abstract of the single node named `var`.
    pub fn var(&self, var: &str) -> Abs {
        let v = self.abs_of_var(var);
        assert_eq!(v.len(), 1, "{var}: {v:?}\n{}", self.ir());
        v[0].clone()
    }

    /// The abstract of the entry's result.
    pub fn result(&self) -> Abs {
        let out = self
            .module()
            .graph(self.spec.entry)
            .output
            .expect("an output");
        self.spec.abstracts.get(&out).cloned().unwrap_or_else(|| {
            // A constant output: its abstract is its value.
            match self.module().constant(out) {
                Some(k) => {
                    anfora_ops::abs::from_value(&anfora_ops::value::from_const(k, &mut |_| {
                        Value::None
                    }))
                }
                None => Abs::Any,
            }
        })
    }

    /// The `.ir` dump of the specialized program, with abstracts.
    pub fn ir(&self) -> String {
        let abs = |n: NodeId| self.spec.abstracts.get(&n).map(|a| a.to_string());
        let opts = anfora_ir::print::PrintOptions {
            source_comments: true,
            abstract_of: Some(&abs),
        };
        anfora_ir::print::print_with(self.module(), self.spec.entry, &opts)
    }
}

/// The infer-stage dump the driver shows (`anfora dump --stage infer`).
pub fn infer_stage_ir(src: &str, entry: &str, args: &[Arg]) -> String {
    let mut s = load(src);
    let mut ir = None;
    let r = s.compile_pipeline(entry, Some(args), &mut |view| {
        if view.stage == "infer" {
            ir = Some(view.ir());
        }
    });
    if let Err(f) = r {
        panic!("{}", s.render(&f));
    }
    ir.expect("the infer stage ran")
}

/// Runs `entry` with the compiled engine.
pub fn run(src: &str, entry: &str, args: Vec<Arg>) -> Value {
    let mut s = load(src);
    match s.call(entry, args, &mut std::io::sink()) {
        Ok(v) => v,
        Err(f) => panic!("{entry} failed:\n{}", s.render(&f)),
    }
}

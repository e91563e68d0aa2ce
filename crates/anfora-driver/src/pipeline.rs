//! The compile pipeline as one table of stages ([`STAGES`]): parse, resolve, grad, infer,
//! auto_monad, optimize and lower. One helper runs each, times it, verifies the IR after it
//! (debug builds) and shows the program to an observer (dumps), as `anfora-opt` does for its
//! passes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anfora_front::{Frontend, FunctionRef, Resolver};
use anfora_infer::Specialized;
use anfora_ir::diag::{Diagnostic, render_all};
use anfora_ir::{GraphId, Module, NodeId, RuntimeError, SourceMap};
use anfora_ops::Abs;

use crate::dump::StageView;
use crate::grad::{Gradient, grad_entry};
use crate::key::Arg;

/// Why a compile or run did not produce a value.
#[derive(Debug)]
pub enum Failure {
    /// Diagnostics (unsupported constructs, name errors, ...): exit status 1.
    Compile(Vec<Diagnostic>),
    /// A Python exception while running: exit status 1.
    Runtime(RuntimeError),
    /// A mistake in how anfora was invoked (no such entry function, bad argument).
    Usage(String),
}

impl Failure {
    /// The text users see: diagnostics with their source lines, a Python traceback, or the
    /// usage error.
    pub fn render(&self, sources: &SourceMap) -> String {
        match self {
            Failure::Compile(diags) => render_all(diags, sources),
            Failure::Runtime(e) => e.render(sources),
            Failure::Usage(msg) => format!("error: {msg}\n"),
        }
    }
}

/// A compiled entry point: its graph (the optimized specialization when arguments were
/// given), the abstracts of its nodes and the time each stage took.
pub struct Compiled {
    pub graph: GraphId,
    pub abstracts: HashMap<NodeId, Abs>,
    /// The executable (after the lower stage).
    pub program: Option<anfora_exec::Program>,
    pub timings: Vec<(String, Duration)>,
}

impl Compiled {
    /// `stage: 0.123 ms` per stage and the total, as `--timings` prints them.
    pub fn timing_report(&self) -> String {
        let mut out = String::new();
        for (stage, d) in &self.timings {
            out.push_str(&format!("{stage}: {} ms\n", millis(*d)));
        }
        let total: Duration = self.timings.iter().map(|(_, d)| *d).sum();
        out.push_str(&format!("compile total: {} ms\n", millis(total)));
        out
    }
}

/// A duration in milliseconds, as the timing reports print it.
pub fn millis(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// A compilation between stages.
struct Work<'a> {
    fe: &'a mut Frontend,
    resolver: &'a mut dyn Resolver,
    /// The function to parse.
    function: FunctionRef,
    /// The gradient of the function to compile instead of the function.
    gradient: Option<Gradient<'a>>,
    /// The entry graph (the specialized one from inference on); `None` before parsing.
    graph: Option<GraphId>,
    args: Option<&'a [Arg]>,
    form: ArgForm,
    spec: Option<Specialized>,
    program: Option<anfora_exec::Program>,
}

impl Work<'_> {
    fn entry(&self) -> GraphId {
        self.graph.expect("the function is parsed")
    }
}

type Observer<'o> = dyn FnMut(StageView) + 'o;

/// One stage: its name in dumps and timings, and what it does to the compilation.
struct Stage {
    name: &'static str,
    /// It specializes for the call's arguments (it and the stages after it run only with them).
    specializes: bool,
    run: fn(&mut Work, &mut Observer) -> Result<(), Failure>,
}

/// The pipeline, in order.
const STAGES: [Stage; 7] = [
    Stage {
        name: "parse",
        specializes: false,
        run: parse,
    },
    Stage {
        name: "resolve",
        specializes: false,
        run: resolve,
    },
    Stage {
        name: "grad",
        specializes: false,
        run: grad,
    },
    Stage {
        name: "infer",
        specializes: true,
        run: infer,
    },
    Stage {
        name: "auto_monad",
        specializes: true,
        run: auto_monad,
    },
    Stage {
        name: "optimize",
        specializes: true,
        run: optimize,
    },
    Stage {
        name: "lower",
        specializes: true,
        run: lower,
    },
];

/// The names of the stages, in order (the optimizer's passes are reported between
/// `auto_monad` and `optimize`).
pub fn stage_names() -> impl Iterator<Item = &'static str> {
    STAGES.iter().map(|s| s.name)
}

fn diagnostics(fe: &Frontend) -> Failure {
    Failure::Compile(fe.diagnostics().to_vec())
}

fn parse(w: &mut Work, _: &mut Observer) -> Result<(), Failure> {
    let g = w.fe.parse_function(w.function, w.resolver);
    if w.fe.has_errors() {
        return Err(diagnostics(w.fe));
    }
    w.graph = Some(match &w.gradient {
        Some(gradient) => grad_entry(&mut w.fe.module, g, gradient),
        None => g,
    });
    Ok(())
}

fn resolve(w: &mut Work, _: &mut Observer) -> Result<(), Failure> {
    let g = w.entry();
    w.fe.resolve(&[g], w.resolver);
    match w.fe.has_errors() {
        true => Err(diagnostics(w.fe)),
        false => Ok(()),
    }
}

fn grad(w: &mut Work, _: &mut Observer) -> Result<(), Failure> {
    let g = w.entry();
    anfora_ad::expand(&mut w.fe.module, &[g])
        .map(|_| ())
        .map_err(Failure::Compile)
}

fn infer(w: &mut Work, _: &mut Observer) -> Result<(), Failure> {
    let args = w.args.expect("inference needs the arguments");
    let abstracts = args.iter().map(Arg::abstract_value).collect();
    let entry = w.entry();
    let g = match w.form {
        ArgForm::Bound => entry,
        ArgForm::Flat => crate::varargs::flat_entry(&mut w.fe.module, entry, args.len())
            .ok_or_else(|| {
                Failure::Usage(
                    "a keyword-only parameter without a default needs an argument".into(),
                )
            })?,
    };
    let spec = anfora_infer::infer(&mut w.fe.module, g, abstracts).map_err(Failure::Compile)?;
    w.graph = Some(spec.entry);
    w.spec = Some(spec);
    Ok(())
}

fn spec<'w>(w: &'w mut Work) -> (&'w mut Module, &'w mut Specialized) {
    let spec = w.spec.as_mut().expect("the program is specialized");
    (&mut w.fe.module, spec)
}

fn auto_monad(w: &mut Work, _: &mut Observer) -> Result<(), Failure> {
    let (module, spec) = spec(w);
    anfora_monad::auto_monad(module, spec).map_err(Failure::Compile)
}

fn optimize(w: &mut Work, observe: &mut Observer) -> Result<(), Failure> {
    let (module, spec) = spec(w);
    let mut program = anfora_opt::Graphs {
        module,
        entry: spec.entry,
        abstracts: &mut spec.abstracts,
    };
    anfora_opt::optimize(&mut program, &mut |pass, p| {
        observe(StageView {
            stage: pass,
            module: p.module,
            entry: p.entry,
            abstracts: Some(p.abstracts),
            program: None,
        })
    });
    Ok(())
}

fn lower(w: &mut Work, _: &mut Observer) -> Result<(), Failure> {
    let spec = w.spec.as_ref().expect("the program is specialized");
    let device = anfora_ops::kernels::default_device();
    let program = anfora_exec::lower(&w.fe.module, spec.entry, &spec.abstracts, device)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    w.program = Some(program);
    Ok(())
}

/// Runs the stages (the specializing ones only with arguments).
fn run(mut w: Work, observe: &mut Observer) -> Result<Compiled, Failure> {
    let mut timings = Vec::new();
    for stage in &STAGES {
        if stage.specializes && w.args.is_none() {
            break;
        }
        let start = Instant::now();
        (stage.run)(&mut w, observe)?;
        timings.push((stage.name.to_string(), start.elapsed()));
        if cfg!(debug_assertions) {
            anfora_ir::verify::assert_valid(&w.fe.module, &[w.entry()], stage.name);
        }
        observe(StageView {
            stage: stage.name,
            module: &w.fe.module,
            entry: w.entry(),
            abstracts: w.spec.as_ref().map(|s| &s.abstracts),
            program: w.program.as_ref(),
        });
    }
    let graph = w.entry();
    let abstracts = w.spec.map(|s| s.abstracts).unwrap_or_default();
    Ok(Compiled {
        graph,
        abstracts,
        program: w.program,
        timings,
    })
}

/// How the arguments of a compilation map to the function's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgForm {
    /// One by one, as a caller outside compiled code passes them (the CLI): the extra ones
    /// are packed into `*args`, and keyword-only parameters take their defaults.
    Flat,
    /// One per parameter, already bound as Python binds them (`*args` as one tuple, then the
    /// keyword-only ones): the Python package binds with `inspect.signature`.
    Bound,
}

/// The whole pipeline for user function `f` (or, with `gradient`, for that gradient of it).
/// Without `args` it stops after the grad stage (the graphs are parsed and resolved); with
/// them it infers, optimizes and lowers for them. `observe` sees the program after every
/// stage and optimizer pass. Diagnostics stay in the frontend (a session whose file has
/// errors keeps reporting them).
pub fn compile_function(
    fe: &mut Frontend,
    f: FunctionRef,
    gradient: Option<Gradient>,
    resolver: &mut dyn Resolver,
    args: Option<(&[Arg], ArgForm)>,
    observe: &mut dyn FnMut(StageView),
) -> Result<Compiled, Failure> {
    let w = Work {
        fe,
        resolver,
        function: f,
        gradient,
        graph: None,
        args: args.map(|(a, _)| a),
        form: args.map_or(ArgForm::Flat, |(_, form)| form),
        spec: None,
        program: None,
    };
    run(w, observe)
}

/// Infers and specializes graph `g` for arguments `args` (the infer stage alone).
pub fn specialize(module: &mut Module, g: GraphId, args: &[Arg]) -> Result<Specialized, Failure> {
    let abstracts = args.iter().map(Arg::abstract_value).collect();
    let spec = anfora_infer::infer(module, g, abstracts).map_err(Failure::Compile)?;
    if cfg!(debug_assertions) {
        anfora_ir::verify::assert_valid(module, &[spec.entry], "infer");
    }
    Ok(spec)
}

//! The pipeline driver: loads a Python file as a module (running its module-level assignments
//! once, in order), resolves the globals its functions read, compiles an entry function and
//! everything it reaches, verifies the IR, and runs it on the reference VM.

use std::collections::HashMap;
use std::io::Write;
use std::rc::Rc;
use std::time::{Duration, Instant};

use anfora_front::ast::{StmtKind, Target};
use anfora_front::py_ast::{PyLiteral, parse_literal};
use anfora_front::{
    Frontend, FunctionRef, Namespace, Resolved, Resolver, ScopeId, codes, namespace_attr,
};
use anfora_infer::Specialized;
use anfora_ir::diag::{Diagnostic, render_all};
use anfora_ir::{Const, FileId, GraphId, NodeId, Span};
use anfora_ir::{Options, RuntimeError};
use anfora_ops::Abs;
use anfora_ops::Value;
use anfora_ops::value::to_const;
use anfora_tensor::{Nested, Scalar, Tensor};
use anfora_vm::Vm;

pub use anfora_ops::value::repr;

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

#[derive(Clone, Debug)]
enum Global {
    Value(Const),
    Function(FunctionRef),
    Namespace(Namespace),
}

struct Globals<'a>(&'a HashMap<String, Global>);

impl Resolver for Globals<'_> {
    fn resolve_global(&mut self, _scope: ScopeId, name: &str) -> Resolved {
        match self.0.get(name) {
            Some(Global::Value(c)) => Resolved::Value(c.clone()),
            Some(Global::Function(f)) => Resolved::Function(*f),
            Some(Global::Namespace(ns)) => Resolved::Namespace(*ns),
            None => Resolved::Unknown,
        }
    }
}

/// How `run` executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// The whole pipeline: infer, optimize, compiled execution.
    #[default]
    Compiled,
    /// The parsed and resolved graphs on the reference VM (the oracle).
    Reference,
}

/// The abstract a call argument is compiled for: Python scalars and strings by value (a
/// different value compiles again), tensors by dtype and shape.
pub fn arg_abstract(v: &Value) -> Abs {
    match v {
        Value::Tensor(t) => Abs::tensor(anfora_ops::TensorAbs::new(
            t.dtype(),
            t.shape().iter().map(|&d| Some(d)).collect(),
        )),
        Value::Tuple(items) => Abs::tuple(items.iter().map(arg_abstract).collect()),
        Value::List(items) => Abs::List(items.iter().map(arg_abstract).collect()),
        other => anfora_ops::abs::from_value(other),
    }
}

/// The stages of [`Session::compile_pipeline`], in order (their names in dumps and timings;
/// the optimizer's passes are reported between `optimize`'s start and end).
pub const STAGES: [&str; 7] = [
    "parse",
    "resolve",
    "grad",
    "infer",
    "auto_monad",
    "optimize",
    "lower",
];

/// The program after one stage (or optimizer pass) of the pipeline.
pub struct StageView<'a> {
    pub stage: &'a str,
    pub module: &'a anfora_ir::Module,
    pub entry: GraphId,
    pub abstracts: Option<&'a HashMap<NodeId, Abs>>,
    /// The linear program, after the lower stage.
    pub program: Option<&'a anfora_exec::Program>,
}

impl StageView<'_> {
    /// The `.ir` text, with the abstract of each node once inference has run.
    pub fn ir(&self) -> String {
        if let Some(p) = self.program {
            return p.dump(&self.module.sources);
        }
        let abs = |n: NodeId| {
            self.abstracts
                .and_then(|a| a.get(&n))
                .map(|a| a.to_string())
        };
        let opts = anfora_ir::print::PrintOptions {
            source_comments: true,
            abstract_of: self
                .abstracts
                .map(|_| &abs as &dyn Fn(NodeId) -> Option<String>),
        };
        anfora_ir::print::print_with(self.module, self.entry, &opts)
    }

    pub fn dot(&self) -> String {
        if let Some(p) = self.program {
            return p.dot();
        }
        anfora_ir::dot::to_dot(self.module, self.entry)
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

/// A call argument. Python scalars are compile-time constants — a different value compiles
/// again — unless the argument is marked mutable (as MindSpore's `mutable`).
#[derive(Clone, Debug)]
pub struct Arg {
    pub value: Value,
    pub mutable: bool,
}

impl From<Value> for Arg {
    fn from(value: Value) -> Arg {
        Arg {
            value,
            mutable: false,
        }
    }
}

impl Arg {
    pub fn mutable(value: Value) -> Arg {
        Arg {
            value,
            mutable: true,
        }
    }

    /// The abstract the argument is compiled for.
    pub fn abstract_value(&self) -> Abs {
        let a = arg_abstract(&self.value);
        if self.mutable { a.broaden() } else { a }
    }

    /// Whether the argument has abstract `abs` (what `abstract_value() == *abs` says, without
    /// building the abstract for tensors: the cache checks this on every call).
    pub fn has_abstract(&self, abs: &Abs) -> bool {
        match (&self.value, abs) {
            (Value::Tensor(t), Abs::Tensor(ta)) => {
                ta.value.is_none()
                    && ta.dtype == t.dtype()
                    && ta.shape.len() == t.shape().len()
                    && ta.shape.iter().zip(t.shape()).all(|(a, &b)| *a == Some(b))
            }
            (Value::Tensor(_), _) | (_, Abs::Tensor(_)) => false,
            _ => self.abstract_value() == *abs,
        }
    }
}

struct CacheEntry {
    key: Vec<Abs>,
    compiled: Rc<Compiled>,
    last_used: u64,
}

/// Why a call compiles: the first signature, or what changed from the signature `previous`
/// compiled last.
pub fn explain(entry: &str, key: &[Abs], previous: Option<&[Abs]>, names: Vec<String>) -> String {
    let sig: Vec<String> = key.iter().map(|a| a.to_string()).collect();
    let Some(prev) = previous else {
        return format!("compiling '{entry}' for ({}): first call", sig.join(", "));
    };
    if prev.len() != key.len() {
        return format!(
            "recompiling '{entry}': called with {} arguments instead of {}",
            key.len(),
            prev.len()
        );
    }
    let mut changes = Vec::new();
    for (i, (old, new)) in prev.iter().zip(key).enumerate() {
        if old != new {
            let name = names
                .get(i)
                .map(|n| format!(" ('{n}')"))
                .unwrap_or_default();
            changes.push(format!(
                "argument {}{name} changed from {old} to {new}",
                i + 1
            ));
        }
    }
    let numbers = prev
        .iter()
        .zip(key)
        .any(|(o, n)| o != n && o.is_number() && n.is_number());
    let hint = if numbers {
        "; Python numbers are compile-time constants: mark the argument mutable to compile once for any value"
    } else {
        ""
    };
    format!("recompiling '{entry}': {}{hint}", changes.join(", "))
}

/// One loaded Python file.
pub struct Session {
    pub frontend: Frontend,
    pub file: FileId,
    pub options: Options,
    pub engine: Engine,
    globals: HashMap<String, Global>,
    cache: HashMap<String, Vec<CacheEntry>>,
    /// Most signatures compiled per function before the least recently used is evicted.
    pub max_signatures: usize,
    clock: u64,
    warned: std::collections::HashSet<String>,
    warnings: Vec<String>,
    last_explanation: Option<String>,
    last_compiled: Option<Rc<Compiled>>,
    last_run: Option<Duration>,
    /// Whether calls measure how long they run (`last_run_time`).
    pub time_runs: bool,
    /// Every `def` at module level, in source order (for `check`).
    functions: Vec<FunctionRef>,
    /// An exception raised while running module-level code.
    init_error: Option<RuntimeError>,
}

const SCOPE: ScopeId = ScopeId(0);

impl Session {
    /// Parses `text` and runs its module-level statements. Problems are kept in the session
    /// and reported by [`Session::compile`].
    pub fn load(name: &str, text: &str, options: Options) -> Session {
        let mut frontend = Frontend::new();
        let module_ast = frontend.parse_file(name, text);
        let mut s = Session {
            frontend,
            file: module_ast.file,
            options,
            engine: Engine::default(),
            cache: HashMap::new(),
            max_signatures: 8,
            clock: 0,
            warned: Default::default(),
            warnings: Vec::new(),
            last_explanation: None,
            last_compiled: None,
            last_run: None,
            time_runs: false,
            globals: HashMap::new(),
            functions: Vec::new(),
            init_error: None,
        };
        for stmt in &module_ast.body {
            match &stmt.kind {
                StmtKind::Import(names) => {
                    for n in names {
                        s.import(&n.module, &n.bound, n.span);
                    }
                }
                StmtKind::FunctionDef(def) => {
                    let f = s.frontend.register_function(def.clone(), SCOPE);
                    s.functions.push(f);
                    s.globals.insert(def.name.to_string(), Global::Function(f));
                }
                StmtKind::Expr(value) => {
                    s.evaluate(value);
                    if s.init_error.is_some() {
                        break;
                    }
                }
                StmtKind::Assign { targets, value } => {
                    let Some(v) = s.evaluate(value) else {
                        if s.init_error.is_some() {
                            break;
                        }
                        for t in targets {
                            s.bind_failed(t);
                        }
                        continue;
                    };
                    for t in targets {
                        if let Err(e) = s.bind(t, &v, value.span) {
                            s.init_error = Some(e);
                            break;
                        }
                    }
                    if s.init_error.is_some() {
                        break;
                    }
                }
                _ => {}
            }
        }
        s
    }

    fn import(&mut self, module: &str, bound: &str, span: Span) {
        let resolved = match module {
            "anfora" => Some(Resolved::Namespace(Namespace::Anfora)),
            "anfora.ops" => Some(Resolved::Namespace(Namespace::Ops)),
            other => other
                .strip_prefix("anfora.")
                .and_then(|attr| namespace_attr(Namespace::Anfora, attr)),
        };
        let global = match resolved {
            Some(Resolved::Namespace(ns)) => Global::Namespace(ns),
            Some(Resolved::Value(c)) => Global::Value(c),
            _ => {
                self.frontend.push_diagnostic(
                    Diagnostic::error(codes::IMPORT, format!("cannot import `{module}`"), span)
                        .with_label("not part of anfora")
                        .with_hint("anfora provides `ops`, `Tensor` and the dtypes float16, bfloat16, float32, float64, int32, int64, bool_"),
                );
                return;
            }
        };
        self.globals.insert(bound.to_string(), global);
    }

    /// Compiles and runs a module-level expression; `None` if it did not compile or raised.
    fn evaluate(&mut self, expr: &anfora_front::ast::Expr) -> Option<Value> {
        let errors_before = self.frontend.diagnostics().len();
        let g = {
            let mut resolver = Globals(&self.globals);
            self.frontend.compile_expr(expr, SCOPE, &mut resolver)
        };
        if self.frontend.diagnostics().len() > errors_before {
            return None;
        }
        if let Err(diags) = anfora_ad::expand(&mut self.frontend.module, &[g]) {
            for d in diags {
                self.frontend.push_diagnostic(d);
            }
            return None;
        }
        self.verify(g, "module initialization");
        let mut vm = Vm::new(&self.frontend.module, self.options.clone());
        let f = vm.function(g)?;
        match vm.call(&f, Vec::new(), &mut std::io::stdout()) {
            Ok(v) => Some(v),
            Err(e) => {
                self.init_error = Some(e);
                None
            }
        }
    }

    fn bind(&mut self, target: &Target, v: &Value, span: Span) -> Result<(), RuntimeError> {
        match target {
            Target::Name(name, name_span) => match to_const(v) {
                Some(c) => {
                    self.globals.insert(name.to_string(), Global::Value(c));
                }
                None => {
                    self.frontend.push_diagnostic(
                        Diagnostic::error(
                            codes::MODULE_INIT,
                            format!(
                                "module-level '{name}' is a {} value, which compiled functions cannot use as a constant",
                                v.type_name()
                            ),
                            *name_span,
                        )
                        .with_label("assigned here")
                        .with_hint("module-level values must be numbers, strings, tuples, lists, tensors, dtypes or module-level functions"),
                    );
                    self.globals
                        .insert(name.to_string(), Global::Value(Const::None));
                }
            },
            Target::Tuple(items, _) => {
                let unpacked = anfora_ops::python::unpack(v, items.len() as i64).map_err(
                    |(kind, message)| RuntimeError {
                        kind: kind.to_string(),
                        message,
                        span,
                        trace: vec![anfora_ir::TraceEntry {
                            function: "<module>".into(),
                            span,
                        }],
                    },
                )?;
                let Value::Tuple(parts) = &unpacked else {
                    unreachable!("unpack returns a tuple")
                };
                for (t, part) in items.iter().zip(parts.iter()) {
                    self.bind(t, part, span)?;
                }
            }
            Target::Invalid(_) => {}
        }
        Ok(())
    }

    fn bind_failed(&mut self, target: &Target) {
        let mut names = Vec::new();
        target.names(&mut names);
        for (n, _) in names {
            self.globals
                .insert(n.to_string(), Global::Value(Const::None));
        }
    }

    fn verify(&self, g: GraphId, stage: &str) {
        verify(&self.frontend.module, g, stage);
    }

    /// Compiles the module-level function `entry` and everything it reaches (parse and
    /// resolve).
    pub fn compile(&mut self, entry: &str) -> Result<GraphId, Failure> {
        self.compile_pipeline(entry, None, &mut |_| {})
            .map(|c| c.graph)
    }

    fn entry_function(&self, entry: &str) -> Result<FunctionRef, Failure> {
        if let Some(e) = &self.init_error {
            return Err(Failure::Runtime(e.clone()));
        }
        let f = match self.globals.get(entry) {
            Some(Global::Function(f)) => *f,
            Some(_) => {
                return Err(Failure::Usage(format!(
                    "'{entry}' in {} is not a function",
                    self.file_name()
                )));
            }
            None => {
                if self.frontend.has_errors() {
                    return Err(Failure::Compile(self.frontend.diagnostics().to_vec()));
                }
                return Err(Failure::Usage(format!(
                    "no function named '{entry}' in {}",
                    self.file_name()
                )));
            }
        };
        Ok(f)
    }

    /// Runs the compile pipeline on `entry`: parse and resolve, and with `args`, infer and
    /// optimize for them. `observe` sees the program after every stage and optimizer pass
    /// (for dumps); the result has the time each stage took.
    pub fn compile_pipeline(
        &mut self,
        entry: &str,
        args: Option<&[Arg]>,
        observe: &mut dyn FnMut(StageView),
    ) -> Result<Compiled, Failure> {
        let f = self.entry_function(entry)?;
        let mut resolver = Globals(&self.globals);
        compile_function(&mut self.frontend, f, &mut resolver, args, observe)
    }

    /// Compiles every module-level function and returns all diagnostics (`anfora check`).
    pub fn check(&mut self) -> Vec<Diagnostic> {
        let mut resolver = Globals(&self.globals);
        for &f in &self.functions {
            self.frontend.compile_function(f, &mut resolver);
        }
        self.frontend.diagnostics().to_vec()
    }

    /// Infers and specializes graph `g` for arguments `args` (the infer stage).
    pub fn specialize(&mut self, g: GraphId, args: &[Arg]) -> Result<Specialized, Failure> {
        specialize(&mut self.frontend.module, g, args)
    }

    /// Compiles `entry` and calls it with `args` (Python scalars as compile-time constants);
    /// `print` output goes to `out`.
    pub fn run(
        &mut self,
        entry: &str,
        args: Vec<Value>,
        out: &mut dyn Write,
    ) -> Result<Value, Failure> {
        self.call(entry, args.into_iter().map(Arg::from).collect(), out)
    }

    /// Calls `entry` with `args`, compiling it for their abstract signature unless a compiled
    /// version for that signature is cached.
    pub fn call(
        &mut self,
        entry: &str,
        args: Vec<Arg>,
        out: &mut dyn Write,
    ) -> Result<Value, Failure> {
        let g = match self.engine {
            Engine::Reference => self.compile(entry)?,
            Engine::Compiled => {
                let compiled = self.compiled(entry, &args)?;
                let values: Vec<Value> = args.into_iter().map(|a| a.value).collect();
                let program = compiled
                    .program
                    .as_ref()
                    .expect("compiled entries are lowered");
                // Reading the clock costs as much as a small call: only when asked.
                let run_start = self.time_runs.then(Instant::now);
                let result = program
                    .call(values, out, &self.options)
                    .map_err(Failure::Runtime);
                self.last_run = run_start.map(|t| t.elapsed());
                return result;
            }
        };
        let values: Vec<Value> = args.into_iter().map(|a| a.value).collect();
        let run_start = Instant::now();
        let mut vm = Vm::new(&self.frontend.module, self.options.clone());
        let f = vm
            .function(g)
            .ok_or_else(|| Failure::Usage(format!("'{entry}' needs an environment")))?;
        let result = vm.call(&f, values, out).map_err(Failure::Runtime);
        self.last_run = Some(run_start.elapsed());
        result
    }

    /// The compiled version of `entry` for `args`: from the cache, or compiled now.
    pub fn compiled(&mut self, entry: &str, args: &[Arg]) -> Result<Rc<Compiled>, Failure> {
        self.clock += 1;
        let clock = self.clock;
        let matches = |e: &CacheEntry| {
            e.key.len() == args.len() && e.key.iter().zip(args).all(|(k, a)| a.has_abstract(k))
        };
        if let Some(hit) = self
            .cache
            .get_mut(entry)
            .and_then(|entries| entries.iter_mut().find(|e| matches(e)))
        {
            hit.last_used = clock;
            self.last_explanation = None;
            self.last_compiled = None;
            return Ok(hit.compiled.clone());
        }
        let key: Vec<Abs> = args.iter().map(Arg::abstract_value).collect();
        let compiled = Rc::new(self.compile_pipeline(entry, Some(args), &mut |_| {})?);
        let names = self.param_names(entry);
        let previous = self
            .cache
            .get(entry)
            .and_then(|entries| entries.iter().max_by_key(|e| e.last_used));
        self.last_explanation = Some(explain(
            entry,
            &key,
            previous.map(|e| e.key.as_slice()),
            names,
        ));
        let entries = self.cache.entry(entry.to_string()).or_default();
        if entries.len() >= self.max_signatures {
            if let Some(lru) = entries
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(i, _)| i)
            {
                entries.remove(lru);
            }
            if !self.warned.contains(entry) {
                self.warned.insert(entry.to_string());
                self.warnings.push(format!(
                    "warning: '{entry}' has been compiled for more than {} different argument signatures; \
                     Python numbers are compile-time constants, so a number that changes on every call \
                     compiles again each time: mark such arguments mutable",
                    self.max_signatures
                ));
            }
        }
        entries.push(CacheEntry {
            key,
            compiled: compiled.clone(),
            last_used: clock,
        });
        self.last_compiled = Some(compiled.clone());
        Ok(compiled)
    }

    fn param_names(&self, entry: &str) -> Vec<String> {
        match self.globals.get(entry) {
            Some(Global::Function(f)) => self.frontend.function_params(*f),
            _ => Vec::new(),
        }
    }

    /// Why the last call compiled (None if it used a cached version).
    pub fn last_explanation(&self) -> Option<&str> {
        self.last_explanation.as_deref()
    }

    /// Warnings for the user, such as a function compiled for too many signatures.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// What the last call compiled (None if it used a cached version or the reference engine).
    pub fn last_compiled(&self) -> Option<&Compiled> {
        self.last_compiled.as_deref()
    }

    /// How long the last call ran (compilation excluded), when `time_runs` is set or the
    /// reference engine ran it.
    pub fn last_run_time(&self) -> Option<Duration> {
        self.last_run
    }

    pub fn file_name(&self) -> &str {
        &self.frontend.module.sources.file(self.file).name
    }

    /// The text users see for a failure.
    pub fn render(&self, failure: &Failure) -> String {
        let sources = &self.frontend.module.sources;
        match failure {
            Failure::Compile(diags) => render_all(diags, sources),
            Failure::Runtime(e) => e.render(sources),
            Failure::Usage(msg) => format!("error: {msg}\n"),
        }
    }
}

fn verify(module: &anfora_ir::Module, g: GraphId, stage: &str) {
    if cfg!(debug_assertions) {
        anfora_ir::verify::assert_valid(module, &[g], stage);
    }
}

/// The whole pipeline for user function `f`: parse, then [`compile_graph`].
pub fn compile_function(
    fe: &mut Frontend,
    f: FunctionRef,
    resolver: &mut dyn Resolver,
    args: Option<&[Arg]>,
    observe: &mut dyn FnMut(StageView),
) -> Result<Compiled, Failure> {
    let start = Instant::now();
    let g = fe.parse_function(f, resolver);
    let parse_time = start.elapsed();
    if fe.has_errors() {
        return Err(Failure::Compile(fe.diagnostics().to_vec()));
    }
    observe(StageView {
        stage: "parse",
        module: &fe.module,
        entry: g,
        abstracts: None,
        program: None,
    });
    let mut compiled = compile_graph(fe, g, resolver, args, observe)?;
    compiled
        .timings
        .insert(0, ("parse".to_string(), parse_time));
    Ok(compiled)
}

/// The pipeline from the resolve stage on, for graph `g` (a parsed function, or a wrapper
/// built around one): resolve, grad, and with `args`, infer, auto_monad, optimize and lower
/// for them. Diagnostics stay in the frontend (a session whose file has errors keeps
/// reporting them).
pub fn compile_graph(
    fe: &mut Frontend,
    g: GraphId,
    resolver: &mut dyn Resolver,
    args: Option<&[Arg]>,
    observe: &mut dyn FnMut(StageView),
) -> Result<Compiled, Failure> {
    let mut timings = Vec::new();
    let start = Instant::now();
    fe.resolve(&[g], resolver);
    timings.push(("resolve".to_string(), start.elapsed()));
    if fe.has_errors() {
        return Err(Failure::Compile(fe.diagnostics().to_vec()));
    }
    verify(&fe.module, g, "resolve");
    observe(StageView {
        stage: "resolve",
        module: &fe.module,
        entry: g,
        abstracts: None,
        program: None,
    });
    let start = Instant::now();
    anfora_ad::expand(&mut fe.module, &[g]).map_err(Failure::Compile)?;
    timings.push(("grad".to_string(), start.elapsed()));
    verify(&fe.module, g, "grad");
    observe(StageView {
        stage: "grad",
        module: &fe.module,
        entry: g,
        abstracts: None,
        program: None,
    });
    let Some(args) = args else {
        return Ok(Compiled {
            graph: g,
            abstracts: HashMap::new(),
            program: None,
            timings,
        });
    };
    let start = Instant::now();
    let mut spec = specialize(&mut fe.module, g, args)?;
    timings.push(("infer".to_string(), start.elapsed()));
    observe(StageView {
        stage: "infer",
        module: &fe.module,
        entry: spec.entry,
        abstracts: Some(&spec.abstracts),
        program: None,
    });
    let start = Instant::now();
    anfora_monad::auto_monad(&mut fe.module, &mut spec).map_err(Failure::Compile)?;
    timings.push(("auto_monad".to_string(), start.elapsed()));
    verify(&fe.module, spec.entry, "auto_monad");
    observe(StageView {
        stage: "auto_monad",
        module: &fe.module,
        entry: spec.entry,
        abstracts: Some(&spec.abstracts),
        program: None,
    });
    let start = Instant::now();
    {
        let mut program = anfora_opt::Program {
            module: &mut fe.module,
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
    }
    timings.push(("optimize".to_string(), start.elapsed()));
    observe(StageView {
        stage: "optimize",
        module: &fe.module,
        entry: spec.entry,
        abstracts: Some(&spec.abstracts),
        program: None,
    });
    let start = Instant::now();
    let device = anfora_ops::kernels::default_device();
    let program = anfora_exec::lower(&fe.module, spec.entry, &spec.abstracts, device)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    timings.push(("lower".to_string(), start.elapsed()));
    observe(StageView {
        stage: "lower",
        module: &fe.module,
        entry: spec.entry,
        abstracts: Some(&spec.abstracts),
        program: Some(&program),
    });
    Ok(Compiled {
        graph: spec.entry,
        abstracts: spec.abstracts,
        program: Some(program),
        timings,
    })
}

/// A graph computing the gradient of function graph `g` (parsed and resolved) at its
/// arguments: `grad(g, argnums, weights)(*params)` when `value` is false, `value_and_grad`
/// when it is true. With `weights`, the result is `(input gradients, weight gradients)`. With
/// `sens`, the entry takes the output's sensitivity as an extra last argument.
pub fn grad_entry(
    module: &mut anfora_ir::Module,
    g: GraphId,
    argnums: &[usize],
    weights: &[anfora_ir::ParamRef],
    value: bool,
    sens: bool,
) -> GraphId {
    let (name, function, span) = {
        let graph = module.graph(g);
        (graph.name.clone(), graph.function.clone(), graph.span)
    };
    let w = module.add_graph(
        format!("grad_entry_{name}"),
        function,
        anfora_ir::GraphKind::Function,
        span,
    );
    let mut params: Vec<NodeId> = (module.graph(g).params.clone().iter())
        .map(|&q| {
            let p = module.node(q).clone();
            module.add_param(w, p.name.as_deref().unwrap_or("x"), p.span)
        })
        .collect();
    if sens {
        params.push(module.add_param(w, "sens", span));
    }
    let argnums = Const::tuple(argnums.iter().map(|&i| Const::Int(i as i64)).collect());
    let weights = if weights.is_empty() {
        Const::None
    } else {
        Const::tuple(weights.iter().cloned().map(Const::Ref).collect())
    };
    let inputs =
        [Const::Graph(g), argnums, weights, Const::Bool(sens)].map(|c| module.value_at(c, span));
    let prim = if value {
        anfora_ir::Prim::ValueAndGrad
    } else {
        anfora_ir::Prim::Grad
    };
    let grad_fn = module.apply_prim(w, prim, &inputs, span);
    let mut call = vec![grad_fn];
    call.extend(params);
    let out = module.apply(w, call, span);
    module.set_output(w, out);
    w
}

/// Infers and specializes graph `g` for arguments `args` (the infer stage).
pub fn specialize(
    module: &mut anfora_ir::Module,
    g: GraphId,
    args: &[Arg],
) -> Result<Specialized, Failure> {
    let abstracts = args.iter().map(Arg::abstract_value).collect();
    let spec = anfora_infer::infer(module, g, abstracts).map_err(Failure::Compile)?;
    verify(module, spec.entry, "infer");
    Ok(spec)
}

/// Converts a command-line literal to a value: nested lists of numbers become tensors.
pub fn literal_value(text: &str) -> Result<Value, String> {
    let lit = parse_literal(text)?;
    literal(&lit)
}

fn literal(lit: &PyLiteral) -> Result<Value, String> {
    Ok(match lit {
        PyLiteral::None => Value::None,
        PyLiteral::Bool(b) => Value::Bool(*b),
        PyLiteral::Int(i) => Value::Int(*i),
        PyLiteral::Float(f) => Value::Float(*f),
        PyLiteral::Str(s) => Value::Str(s.clone()),
        PyLiteral::Tuple(items) => {
            Value::tuple(items.iter().map(literal).collect::<Result<_, _>>()?)
        }
        PyLiteral::List(_) => {
            let n = nested(lit)?;
            Value::Tensor(Tensor::from_nested(&n, None).map_err(|e| e.to_string())?)
        }
    })
}

fn nested(lit: &PyLiteral) -> Result<Nested, String> {
    Ok(match lit {
        PyLiteral::List(items) | PyLiteral::Tuple(items) => {
            Nested::List(items.iter().map(nested).collect::<Result<_, _>>()?)
        }
        PyLiteral::Bool(b) => Nested::Scalar(Scalar::Bool(*b)),
        PyLiteral::Int(i) => Nested::Scalar(Scalar::Int(*i)),
        PyLiteral::Float(f) => Nested::Scalar(Scalar::Float(*f)),
        _ => return Err("lists must hold only numbers (they become tensors)".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_become_values_and_lists_tensors() {
        assert_eq!(
            repr(&literal_value("(1, -2.5, 'x', None, True)").unwrap()),
            "(1, -2.5, 'x', None, True)"
        );
        assert_eq!(
            repr(&literal_value("[[1, 2], [3, 4]]").unwrap()),
            "Tensor([[1, 2],\n        [3, 4]])"
        );
        assert_eq!(
            repr(&literal_value("[1.5, 2]").unwrap()),
            "Tensor([1.5, 2. ], dtype=float32)"
        );
        assert_eq!(
            repr(&literal_value("([True], 3)").unwrap()),
            "(Tensor([ True]), 3)"
        );
        assert!(literal_value("['a']").unwrap_err().contains("only numbers"));
        assert!(
            literal_value("[[1], [2, 3]]")
                .unwrap_err()
                .contains("inhomogeneous")
        );
        assert!(literal_value("f(x)").is_err());
    }

    #[test]
    fn globals_resolve_in_module_order() {
        let mut s = Session::load(
            "m.py",
            "A = 1\nB = A + 1\nA = 5\n\ndef main():\n    return A, B\n",
            Options::default(),
        );
        let v = s.run("main", vec![], &mut std::io::sink()).unwrap();
        assert_eq!(repr(&v), "(5, 2)");
    }

    #[test]
    fn imports_bind_anfora_names() {
        let src = "import anfora\nimport anfora as af\nfrom anfora import ops, float64 as f64\n\ndef main():\n    return anfora.int32, af.ops.add(1, 2), f64, ops.zeros(1, f64)\n";
        let mut s = Session::load("m.py", src, Options::default());
        let v = s
            .run("main", vec![], &mut std::io::sink())
            .unwrap_or_else(|f| panic!("{}", s.render(&f)));
        assert_eq!(repr(&v), "(anfora.int32, 3, anfora.float64, Tensor([0.]))");
        let mut s = Session::load(
            "m.py",
            "from anfora import nothing\n\ndef main():\n    return 1\n",
            Options::default(),
        );
        let f = s.run("main", vec![], &mut std::io::sink()).unwrap_err();
        assert!(
            matches!(f, Failure::Compile(ref d) if d[0].code == "E0114"),
            "{}",
            s.render(&f)
        );
    }
}

#[cfg(test)]
mod resolve_tests {
    use super::*;

    #[test]
    fn functions_shared_by_several_entries_are_resolved_once() {
        let src = "def show(x):\n    print(x, end='!')\n    return x\n\ndef a():\n    return show(1)\n\ndef main():\n    return show(2), a()\n";
        let mut s = Session::load("m.py", src, Options::default());
        assert!(s.check().is_empty());
        let mut out = Vec::new();
        let v = s.run("main", vec![], &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "2!1!");
        assert_eq!(repr(&v), "(2, 1)");
    }
}

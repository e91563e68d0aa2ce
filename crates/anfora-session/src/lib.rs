//! A Python file loaded as a module: its module-level statements run once, in order, on the
//! reference VM (assignments become the constants its functions read); its functions compile
//! through the driver's pipeline when called, cached per argument signature, and run on the
//! compiled engine or, for checking, on the reference VM. The `anfora` command and the tests
//! use it.

use std::collections::HashMap;
use std::io::Write;
use std::rc::Rc;
use std::time::{Duration, Instant};

use anfora_front::ast::{StmtKind, Target};
use anfora_front::py_ast::parse_literal;
use anfora_front::{
    Frontend, FunctionRef, Namespace, Resolved, Resolver, ScopeId, codes, namespace_attr,
};
use anfora_infer::Specialized;
use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, FileId, GraphId, Span};
use anfora_ir::{Options, RuntimeError};
use anfora_ops::Abs;
use anfora_ops::Value;
use anfora_ops::value::{from_const, to_const};
use anfora_tensor::{Nested, Scalar, Tensor};
use anfora_vm::Vm;

pub use anfora_driver::{Arg, Compiled, Failure, StageView, arg_abstract, explain, repr};
use anfora_driver::{ArgForm, compile_function, specialize};

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

struct CacheEntry {
    key: Vec<Abs>,
    compiled: Rc<Compiled>,
    last_used: u64,
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
                let star = items.iter().position(|t| matches!(t, Target::Starred(..)));
                let unpacked = match star {
                    None => anfora_ops::python::unpack(v, items.len() as i64),
                    Some(_) => anfora_ops::python::unpack_at_least(v, items.len() as i64 - 1),
                }
                .map_err(|(kind, message)| RuntimeError {
                    kind: kind.to_string(),
                    message,
                    span,
                    trace: vec![anfora_ir::TraceEntry {
                        function: "<module>".into(),
                        span,
                    }],
                })?;
                let Value::Tuple(parts) = &unpacked else {
                    unreachable!("unpack returns a tuple")
                };
                let parts = match star {
                    // The starred name takes what the others leave, as a list.
                    Some(k) => {
                        let rest = parts.len() + 1 - items.len();
                        let mut grouped = parts[..k].to_vec();
                        grouped.push(Value::List(parts[k..k + rest].into()));
                        grouped.extend(parts[k + rest..].iter().cloned());
                        grouped
                    }
                    None => parts.to_vec(),
                };
                for (t, part) in items.iter().zip(parts.iter()) {
                    self.bind(t, part, span)?;
                }
            }
            Target::Starred(name, s) => self.bind(&Target::Name(name.clone(), *s), v, span)?,
            Target::Item { span, .. } => {
                self.frontend.push_diagnostic(
                    Diagnostic::error(
                        codes::ITEM_ASSIGN,
                        "assignment to an item at module level is not supported",
                        *span,
                    )
                    .with_label("cannot assign here")
                    .with_hint("module-level values are constants: compute the whole value in one expression, or in a function"),
                );
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
        if cfg!(debug_assertions) {
            anfora_ir::verify::assert_valid(&self.frontend.module, &[g], stage);
        }
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
        compile_function(
            &mut self.frontend,
            f,
            None,
            &mut resolver,
            args.map(|a| (a, ArgForm::Flat)),
            observe,
        )
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
        failure.render(&self.frontend.module.sources)
    }
}

/// Converts a command-line literal to a value: nested lists of numbers become tensors.
pub fn literal_value(text: &str) -> Result<Value, String> {
    let lit = parse_literal(text)?;
    literal(&lit)
}

fn literal(c: &Const) -> Result<Value, String> {
    Ok(match c {
        Const::Tuple(items) => Value::tuple(items.iter().map(literal).collect::<Result<_, _>>()?),
        Const::List(_) => {
            Value::Tensor(Tensor::from_nested(&nested(c)?, None).map_err(|e| e.to_string())?)
        }
        c => from_const(c, &mut |_| Value::None),
    })
}

fn nested(c: &Const) -> Result<Nested, String> {
    Ok(match c {
        Const::List(items) | Const::Tuple(items) => {
            Nested::List(items.iter().map(nested).collect::<Result<_, _>>()?)
        }
        Const::Bool(b) => Nested::Scalar(Scalar::Bool(*b)),
        Const::Int(i) => Nested::Scalar(Scalar::Int(*i)),
        Const::Float(f) => Nested::Scalar(Scalar::Float(*f)),
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

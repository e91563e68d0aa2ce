//! `@anfora.jit`: compiled functions and methods, their gradients, and the per-thread compiler
//! they share.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

use anfora_driver::{Arg, Compiled, Failure, StageView};
use anfora_front::Frontend;
use anfora_ir::Options;
use anfora_ir::ParamRef;
use anfora_ir::diag::render_all;
use anfora_ir::span::SourceMap;
use anfora_ops::Abs;
use anfora_ops::Value;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::host::{Host, PyResolver};
use crate::tensor::{Parameter, Tensor, from_value, py_error, to_value};

pyo3::create_exception!(
    anfora,
    CompileError,
    pyo3::exceptions::PyException,
    "A function could not be compiled; the message lists every problem with its file:line:col."
);

/// Dump settings (`anfora.set_context`), for every thread.
#[derive(Clone, Default)]
struct Context {
    save_graphs: u8,
    save_graphs_path: Option<PathBuf>,
    dumps: u32,
}

static CONTEXT: std::sync::Mutex<Context> = std::sync::Mutex::new(Context {
    save_graphs: 0,
    save_graphs_path: None,
    dumps: 0,
});

fn shared_context() -> std::sync::MutexGuard<'static, Context> {
    CONTEXT.lock().unwrap_or_else(|e| e.into_inner())
}

/// Bumped by `forget_parsed_functions`; each thread's compiler starts afresh when it sees a
/// new value (its parsed functions folded attributes and globals that may have changed).
static FORGET_EPOCH: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The compiler of one thread: the frontend holding every graph compiled so far and the
/// Python objects they refer to. A compile that fails while parsing or resolving leaves
/// graphs that must not be reused, so the compiler then starts afresh; programs compiled
/// before keep running, and their errors are rendered with the sources of their generation.
struct Compiler {
    fe: Frontend,
    host: Host,
    generation: usize,
    /// The sources of earlier generations.
    old_sources: Vec<SourceMap>,
    /// The `FORGET_EPOCH` this compiler's parsed functions belong to.
    epoch: usize,
}

impl Compiler {
    fn new() -> Compiler {
        Compiler {
            fe: Frontend::new(),
            host: Host::default(),
            generation: 0,
            old_sources: Vec::new(),
            epoch: FORGET_EPOCH.load(std::sync::atomic::Ordering::Acquire),
        }
    }

    fn sources(&self, generation: usize) -> &SourceMap {
        self.old_sources
            .get(generation)
            .unwrap_or(&self.fe.module.sources)
    }

    fn reset(&mut self) {
        let fe = std::mem::take(&mut self.fe);
        self.old_sources.push(fe.module.sources);
        self.host = Host::default();
        self.generation += 1;
    }
}

thread_local! {
    static COMPILER: RefCell<Compiler> = RefCell::new(Compiler::new());
}

fn with_compiler<R>(f: impl FnOnce(&mut Compiler) -> R) -> R {
    COMPILER.with(|c| {
        let mut c = c.borrow_mut();
        let epoch = FORGET_EPOCH.load(std::sync::atomic::Ordering::Acquire);
        if c.epoch != epoch {
            c.reset();
            c.epoch = epoch;
        }
        f(&mut c)
    })
}

/// Forgets every parsed function, so that the next compile reads sources, globals and
/// attributes afresh.
#[pyfunction]
pub fn forget_parsed_functions() {
    // Attributes of `self` and globals are folded when a function is parsed; after a change
    // every thread's compiler must read them afresh (`Cell.set_train`). Compiled programs
    // keep running.
    FORGET_EPOCH.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
}

/// `anfora.set_context(save_graphs=0|1|2|3, save_graphs_path=..., device=...)`: 1 writes the
/// final IR of every compile, 2 the IR after every stage, 3 adds a `.dot` graph beside each;
/// `device` ("cpu", "cuda:N") is where functions compiled from then on run.
#[pyfunction]
#[pyo3(signature = (save_graphs=None, save_graphs_path=None, device=None))]
pub fn set_context(
    save_graphs: Option<u8>,
    save_graphs_path: Option<PathBuf>,
    device: Option<&str>,
) -> PyResult<()> {
    if let Some(name) = device {
        let d = anfora_tensor::Device::parse(name).map_err(|e| PyValueError::new_err(e.message))?;
        anfora_ops::kernels::set_default_device(d)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
    }
    if let Some(level) = save_graphs
        && level > 3
    {
        return Err(PyValueError::new_err(format!(
            "save_graphs must be 0, 1, 2 or 3, not {level}"
        )));
    }
    let mut c = shared_context();
    if let Some(level) = save_graphs {
        c.save_graphs = level;
    }
    if let Some(p) = save_graphs_path {
        c.save_graphs_path = Some(p);
    }
    Ok(())
}

/// `anfora.devices()`: the devices that have a backend, each as `(name, description)`.
#[pyfunction]
pub fn devices() -> Vec<(String, String)> {
    anfora_tensor::device::devices()
        .into_iter()
        .filter_map(|d| anfora_tensor::device::backend(d).ok())
        .map(|b| (b.device().to_string(), b.describe()))
        .collect()
}

/// `anfora.get_device()`: the device functions compiled now run on.
#[pyfunction]
pub fn get_device() -> String {
    anfora_ops::kernels::default_device().to_string()
}

/// The IR texts of one compile.
#[derive(Default, Clone)]
struct Dumps {
    /// The optimized graphs, with the abstract of every node.
    ir: String,
    dot: String,
    /// The linear program the executor runs.
    program: String,
}

/// One compiled signature.
struct Entry {
    key: Vec<Abs>,
    /// The Parameters a gradient is taken with respect to (their keys; empty otherwise).
    weights: Vec<u64>,
    compiled: Compiled,
    generation: usize,
    dumps: Dumps,
}

impl Entry {
    fn device(&self) -> anfora_tensor::Device {
        (self.compiled.program.as_ref()).map_or(anfora_tensor::Device::CPU, |p| p.device)
    }
}

/// The compiled signatures of one function, or of one of its gradients, per Python thread:
/// at most `MAX_SIGNATURES` each, the oldest dropped first.
///
/// Compiled programs share `Rc`s with the compiler of the thread that made them (a
/// thread-local), so each thread compiles and keeps its own entries, and only that thread
/// ever touches them; a function called from several threads compiles once in each.
#[derive(Default)]
// Boxed: `local` hands out references that must not move when the vector grows.
#[allow(clippy::vec_box)]
struct Cache(std::sync::Mutex<Vec<Box<ThreadEntries>>>);

/// One thread's entries, touched only by that thread (see [`Cache`]).
struct ThreadEntries {
    thread: std::thread::ThreadId,
    entries: std::mem::ManuallyDrop<RefCell<Vec<Rc<Entry>>>>,
}

// SAFETY: the entries are reached only from their own thread (`Cache::local`) and, when the
// cache is dropped on another thread, leaked instead of dropped (`Drop` below).
unsafe impl Send for ThreadEntries {}
unsafe impl Sync for ThreadEntries {}

impl Drop for ThreadEntries {
    fn drop(&mut self) {
        if std::thread::current().id() == self.thread {
            // SAFETY: dropped once, here, on the owning thread.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.entries) };
        }
        // Otherwise leaked: their `Rc`s may be shared with that thread's compiler.
    }
}

impl Cache {
    /// This thread's entries.
    fn local(&self) -> &RefCell<Vec<Rc<Entry>>> {
        let me = std::thread::current().id();
        let mut threads = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let i = match threads.iter().position(|t| t.thread == me) {
            Some(i) => i,
            None => {
                threads.push(Box::new(ThreadEntries {
                    thread: me,
                    entries: Default::default(),
                }));
                threads.len() - 1
            }
        };
        let ptr: *const RefCell<Vec<Rc<Entry>>> = &*threads[i].entries;
        // SAFETY: boxes are never removed before the cache is dropped and do not move when
        // the vector grows, and only this thread uses its entries.
        unsafe { &*ptr }
    }

    /// The entry for these arguments compiled for the current device.
    fn get(&self, args: &[Arg], weights: &[u64]) -> Option<Rc<Entry>> {
        let device = anfora_ops::kernels::default_device();
        (self.local().borrow().iter())
            .find(|e| e.weights == weights && e.device() == device && fits(&e.key, args))
            .cloned()
    }

    /// The entry compiled last.
    fn last(&self) -> Option<Rc<Entry>> {
        self.local().borrow().last().cloned()
    }

    fn insert(&self, entry: Entry) -> Rc<Entry> {
        let entry = Rc::new(entry);
        let mut entries = self.local().borrow_mut();
        if entries.len() >= MAX_SIGNATURES {
            entries.remove(0);
        }
        entries.push(entry.clone());
        entry
    }

    fn len(&self) -> usize {
        self.local().borrow().len()
    }
}

/// Which gradients a [`GradFunction`] computes.
struct GradSpec {
    argnums: Argnums,
    /// Whether `argnums` was a single int (the result is then one gradient, not a tuple).
    single: bool,
    /// Parameters to differentiate with respect to: given, or (for a bound method's `.grad`)
    /// every Parameter the object holds.
    weights: Weights,
    /// `value_and_grad`: the result is `(value, gradients)`.
    value: bool,
    /// The call's last argument is the output's sensitivity (GradOperation's `sens_param`).
    sens: bool,
}

/// Which arguments a gradient is taken with respect to.
enum Argnums {
    /// Every float tensor argument (`f.grad`).
    FloatTensors,
    /// Every argument (`argnums=...`, GradOperation's `get_all`).
    All,
    Given(Vec<usize>),
}

/// What a gradient entry computes (see `anfora_driver::grad_entry`).
struct GradCall<'a> {
    argnums: &'a [usize],
    weights: &'a [ParamRef],
    value: bool,
    sens: bool,
}

enum Weights {
    None,
    Given(Vec<Py<Parameter>>),
    /// The Parameters of the bound object, found when called; their `.grad` accumulates.
    OfSelf,
}

/// A function (or method) compiled on its first call for each argument signature.
#[pyclass(module = "anfora", name = "Function")]
pub struct JitFunction {
    pub func: Py<PyAny>,
    pub bound: Option<Py<PyAny>>,
    /// `TensorSpec`s of a typed signature (every parameter annotated).
    specs: Option<Vec<Py<PyAny>>>,
    /// The number of parameters (after a bound `self`) when all are plain
    /// positional-or-keyword ones: a call passing that many needs no binding.
    arity: Option<usize>,
    cache: Cache,
    explanation: std::sync::Mutex<Option<String>>,
    grad: std::sync::Mutex<Option<Py<GradFunction>>>,
}

/// Most signatures kept per function; the least recently compiled is dropped beyond.
const MAX_SIGNATURES: usize = 16;

fn args_of(args: &Bound<'_, PyTuple>) -> PyResult<Vec<Arg>> {
    args.iter().map(|a| to_arg(&a)).collect()
}

fn to_arg(a: &Bound<'_, PyAny>) -> PyResult<Arg> {
    if let Ok(m) = a.cast::<crate::Mutable>() {
        return Ok(Arg::mutable(to_value(m.get().value.bind(a.py()))?));
    }
    Ok(Arg::from(to_value(a)?))
}

/// Whether `args` have the signature `key` was compiled for.
fn fits(key: &[Abs], args: &[Arg]) -> bool {
    key.len() == args.len() && key.iter().zip(args).all(|(k, a)| a.has_abstract(k))
}

/// Writes what compiled code printed to Python's `sys.stdout` (so capture works).
fn flush_output(py: Python<'_>, out: &[u8]) -> PyResult<()> {
    if out.is_empty() {
        return Ok(());
    }
    let stdout = py.import("sys")?.getattr("stdout")?;
    stdout.call_method1("write", (String::from_utf8_lossy(out),))?;
    Ok(())
}

/// A computation that touches no Python object, run with the GIL released (and its result).
///
/// `Python::detach` asks for `Send` (its stand-in for "holds nothing of Python's") while
/// compiled programs share `Rc`s. The closure runs on this same thread before `detach`
/// returns, and the `Rc`s it reaches belong to this thread's compiler and to this thread's
/// entries of the function's cache (each thread compiles its own; see [`Cache`]), so no `Rc`
/// is touched from two threads.
struct NotPython<F>(F);

// SAFETY: see above: the value never leaves the calling thread.
unsafe impl<F> Send for NotPython<F> {}

impl<R, F: FnOnce() -> R> NotPython<F> {
    fn run(self) -> R {
        (self.0)()
    }
}

/// Runs a compiled program and converts its result (or its exception) for Python.
fn run<'py>(py: Python<'py>, entry: &Entry, args: Vec<Arg>) -> PyResult<Bound<'py, PyAny>> {
    let values: Vec<Value> = args.into_iter().map(|a| a.value).collect();
    let program = (entry.compiled)
        .program
        .as_ref()
        .expect("compiled entries are lowered");
    let mut out = Vec::new();
    // Other Python threads run while the program does (it never touches Python objects:
    // printed text is buffered and written afterwards).
    let work = NotPython(|| program.call(values, &mut out, &Options::default()));
    let result = py.detach(move || NotPython(work.run())).0;
    flush_output(py, &out)?;
    match result {
        Ok(v) => from_value(py, &v),
        Err(e) => {
            let err = py_error(&e.kind, e.message.clone());
            let trace = with_compiler(|c| e.render(c.sources(entry.generation)));
            let _ = err.value(py).call_method1("add_note", (trace,));
            Err(err)
        }
    }
}

impl JitFunction {
    pub fn new(
        py: Python<'_>,
        func: Py<PyAny>,
        bound: Option<Py<PyAny>>,
        specs: Option<Vec<Py<PyAny>>>,
    ) -> Self {
        let arity = arity(func.bind(py), bound.is_some());
        JitFunction {
            func,
            bound,
            specs,
            arity,
            cache: Cache::default(),
            explanation: Default::default(),
            grad: Default::default(),
        }
    }

    fn name(&self, py: Python<'_>) -> String {
        self.func
            .bind(py)
            .getattr("__qualname__")
            .and_then(|q| q.extract())
            .unwrap_or_else(|_| "<function>".into())
    }

    /// The arguments of a call, one per parameter in order, bound as Python binds them
    /// (keywords, defaults, and Python's TypeError for a call that does not fit). A call
    /// passing exactly the positional parameters needs no binding.
    fn positional<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let kwargs = kwargs.filter(|k| !k.is_empty());
        if kwargs.is_none() && Some(args.len()) == self.arity {
            return Ok(args.clone());
        }
        let inspect = py.import("inspect")?;
        let sig = inspect.call_method1("signature", (self.func.bind(py),))?;
        let mut full: Vec<Bound<'py, PyAny>> = Vec::new();
        if let Some(b) = &self.bound {
            full.push(b.bind(py).clone());
        }
        full.extend(args.iter());
        let bound = sig.call_method("bind", PyTuple::new(py, &full)?, kwargs)?;
        bound.call_method0("apply_defaults")?;
        // `arguments` holds every parameter (keyword-only ones too) in declaration order.
        let values = bound.getattr("arguments")?.call_method0("values")?;
        let skip = usize::from(self.bound.is_some());
        let all: Vec<Bound<'py, PyAny>> = values.try_iter()?.collect::<PyResult<_>>()?;
        PyTuple::new(py, all.into_iter().skip(skip))
    }

    fn check_specs(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<()> {
        let Some(specs) = &self.specs else {
            return Ok(());
        };
        // `positional` has bound the call: there is one argument per spec.
        for (i, (a, s)) in args.iter().zip(specs).enumerate() {
            let ok: bool = s.bind(py).call_method1("matches", (&a,))?.extract()?;
            if !ok {
                let param = self.param_names(py).get(i).cloned().unwrap_or_default();
                return Err(PyTypeError::new_err(format!(
                    "{}() argument '{param}' must be {}, got {}",
                    self.name(py),
                    s.bind(py).repr()?,
                    describe(&a)
                )));
            }
        }
        Ok(())
    }

    fn param_names(&self, py: Python<'_>) -> Vec<String> {
        let names = (|| -> PyResult<Vec<String>> {
            let code = self.func.bind(py).getattr("__code__")?;
            let n: usize = code.getattr("co_argcount")?.extract()?;
            let vars: Vec<String> = code.getattr("co_varnames")?.extract()?;
            Ok(vars.into_iter().take(n).collect())
        })()
        .unwrap_or_default();
        let skip = usize::from(self.bound.is_some());
        names.into_iter().skip(skip).collect()
    }

    /// Compiles the function (or, with `grad`, its gradient) for `args`.
    fn compile(&self, py: Python<'_>, args: &[Arg], grad: Option<GradCall<'_>>) -> PyResult<Entry> {
        let func = self.func.bind(py).clone();
        let bound = self.bound.as_ref().map(|b| b.bind(py).clone());
        let qualname = self.name(py);
        with_compiler(|c| {
            let generation = c.generation;
            let context = shared_context().clone();
            let mut dumps = Dumps::default();
            let result = {
                let Compiler { fe, host, .. } = c;
                let h = host
                    .function(&func, bound.as_ref())
                    .map_err(CompileError::new_err)?;
                let mut resolver = PyResolver { py, host };
                let mut observe = |v: StageView| {
                    if v.stage == "optimize" {
                        dumps.ir = v.ir();
                        dumps.dot = v.dot();
                    }
                    if v.stage == "lower" {
                        dumps.program = v.ir();
                    }
                    save_stage(&context, &qualname, &v);
                };
                match fe.host_function(&h) {
                    None => Err(Failure::Compile(fe.diagnostics().to_vec())),
                    Some(f) => match grad {
                        None => anfora_driver::compile_function(
                            fe,
                            f,
                            &mut resolver,
                            Some(args),
                            &mut observe,
                        ),
                        Some(GradCall {
                            argnums,
                            weights,
                            value,
                            sens,
                        }) => {
                            let g = fe.parse_function(f, &mut resolver);
                            if fe.has_errors() {
                                Err(Failure::Compile(fe.diagnostics().to_vec()))
                            } else {
                                let w = anfora_driver::grad_entry(
                                    &mut fe.module,
                                    g,
                                    argnums,
                                    weights,
                                    value,
                                    sens,
                                );
                                anfora_driver::compile_graph(
                                    fe,
                                    w,
                                    &mut resolver,
                                    Some(args),
                                    &mut observe,
                                )
                            }
                        }
                    },
                }
            };
            match result {
                Ok(compiled) => {
                    shared_context().dumps += 1;
                    Ok(Entry {
                        key: args.iter().map(Arg::abstract_value).collect(),
                        weights: grad.map_or(Vec::new(), |g| {
                            g.weights.iter().map(ParamRef::key).collect()
                        }),
                        compiled,
                        generation,
                        dumps,
                    })
                }
                Err(failure) => {
                    let text = match &failure {
                        Failure::Compile(diags) => render_all(diags, &c.fe.module.sources),
                        Failure::Runtime(e) => e.render(&c.fe.module.sources),
                        Failure::Usage(m) => format!("error: {m}\n"),
                    };
                    // Errors of parsing or resolving stay in graphs that are now unusable.
                    if c.fe.has_errors() {
                        c.reset();
                    }
                    Err(CompileError::new_err(text))
                }
            }
        })
    }

    /// The cached entry for `args`, compiling it when missing.
    fn entry(&self, py: Python<'_>, args: &[Arg]) -> PyResult<Rc<Entry>> {
        if let Some(hit) = self.cache.get(args, &[]) {
            *self.explanation.lock().unwrap_or_else(|e| e.into_inner()) = None;
            return Ok(hit);
        }
        let entry = self.compile(py, args, None)?;
        let previous = self.cache.last();
        *self.explanation.lock().unwrap_or_else(|e| e.into_inner()) = Some(anfora_driver::explain(
            &self.name(py),
            &entry.key,
            previous.as_ref().map(|e| e.key.as_slice()),
            self.param_names(py),
        ));
        Ok(self.cache.insert(entry))
    }
}

/// The number of parameters of Python function `func` (after a bound `self`) when all of
/// them are plain positional-or-keyword ones; `None` otherwise.
fn arity(func: &Bound<'_, PyAny>, bound: bool) -> Option<usize> {
    let code = func.getattr("__code__").ok()?;
    let count = |attr: &str| -> Option<usize> { code.getattr(attr).ok()?.extract().ok() };
    let flags: u32 = code.getattr("co_flags").ok()?.extract().ok()?;
    // CO_VARARGS | CO_VARKEYWORDS
    if count("co_kwonlyargcount")? > 0 || count("co_posonlyargcount")? > 0 || flags & 0x0c != 0 {
        return None;
    }
    count("co_argcount")?.checked_sub(usize::from(bound))
}

/// A short description of a call argument, for messages.
fn describe(a: &Bound<'_, PyAny>) -> String {
    match a.cast::<Tensor>() {
        Ok(t) => {
            let t = &t.get().inner;
            format!("Tensor(shape={:?}, dtype={})", t.shape(), t.dtype().name())
        }
        Err(_) => a
            .get_type()
            .name()
            .map(|n| format!("a '{n}' object"))
            .unwrap_or_else(|_| "an object".into()),
    }
}

fn save_stage(context: &Context, qualname: &str, v: &StageView) {
    let level = context.save_graphs;
    if level == 0 || (level == 1 && v.stage != "optimize") {
        return;
    }
    let dir = context
        .save_graphs_path
        .clone()
        .unwrap_or_else(|| PathBuf::from("anfora_graphs"));
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let stem = format!(
        "{:04}_{}_{}",
        context.dumps,
        qualname.replace(['<', '>', '/'], "_"),
        v.stage
    );
    let _ = std::fs::write(dir.join(format!("{stem}.ir")), v.ir());
    if level >= 3 {
        let _ = std::fs::write(dir.join(format!("{stem}.dot")), v.dot());
    }
}

#[pymethods]
impl JitFunction {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = self.positional(py, args, kwargs)?;
        self.check_specs(py, &args)?;
        let args = args_of(&args)?;
        let entry = self.entry(py, &args)?;
        run(py, &entry, args)
    }

    /// Binding to an instance: `obj.method` is the method compiled with `self` = `obj`. The
    /// bound function is stored in the instance's `__dict__`, so later lookups (and its
    /// compile cache) find it directly.
    fn __get__(
        slf: &Bound<'_, Self>,
        obj: Option<&Bound<'_, PyAny>>,
        _owner: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let Some(obj) = obj.filter(|o| !o.is_none()) else {
            return Ok(slf.clone().into_any().unbind());
        };
        let this = slf.borrow();
        let specs = this
            .specs
            .as_ref()
            .map(|s| s.iter().map(|x| x.clone_ref(py)).collect());
        let bound = Bound::new(
            py,
            JitFunction::new(
                py,
                this.func.clone_ref(py),
                Some(obj.clone().unbind()),
                specs,
            ),
        )?;
        let name: String = this.func.bind(py).getattr("__name__")?.extract()?;
        if let Ok(d) = obj.getattr("__dict__") {
            let _ = d.set_item(name, &bound);
        }
        Ok(bound.into_any().unbind())
    }

    /// The gradient of this function with respect to its float tensor arguments (and, for a
    /// method, the Parameters of its object): `f.grad(*args)`.
    #[getter]
    fn grad(slf: &Bound<'_, Self>) -> PyResult<Py<GradFunction>> {
        let py = slf.py();
        if let Some(g) = slf
            .borrow()
            .grad
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            return Ok(g.clone_ref(py));
        }
        let weights = if slf.borrow().bound.is_some() {
            Weights::OfSelf
        } else {
            Weights::None
        };
        let g = Py::new(
            py,
            GradFunction::new(
                slf.clone().unbind(),
                GradSpec {
                    argnums: Argnums::FloatTensors,
                    single: false,
                    weights,
                    value: false,
                    sens: false,
                },
            ),
        )?;
        *slf.borrow().grad.lock().unwrap_or_else(|e| e.into_inner()) = Some(g.clone_ref(py));
        Ok(g)
    }

    /// `grad` / `value_and_grad` with explicit `argnums` (None: no argument, `...`: every
    /// argument, an int or a tuple of ints) and `weights`; with `sens`, the gradient function
    /// takes the output's sensitivity as its last argument.
    #[pyo3(signature = (argnums, weights=None, value=false, sens=false))]
    fn _grad_transform(
        slf: &Bound<'_, Self>,
        argnums: &Bound<'_, PyAny>,
        weights: Option<&Bound<'_, PyAny>>,
        value: bool,
        sens: bool,
    ) -> PyResult<GradFunction> {
        let (argnums, single) = if argnums.is_none() {
            (Argnums::Given(vec![]), false)
        } else if argnums.is(pyo3::types::PyEllipsis::get(slf.py())) {
            (Argnums::All, false)
        } else if let Ok(i) = argnums.extract::<usize>() {
            (Argnums::Given(vec![i]), true)
        } else {
            let a = argnums.extract::<Vec<usize>>().map_err(|_| {
                PyTypeError::new_err("argnums must be None, ..., an int or a tuple of ints")
            })?;
            (Argnums::Given(a), false)
        };
        let weights = match weights {
            None => Weights::None,
            Some(w) if w.is_none() => Weights::None,
            Some(w) => {
                let mut ps = Vec::new();
                for item in w.try_iter()? {
                    let item = item?;
                    let p = item.cast::<Parameter>().map_err(|_| {
                        PyTypeError::new_err(
                            "weights must be Parameters (a list, tuple or ParameterTuple)",
                        )
                    })?;
                    ps.push(p.clone().unbind());
                }
                Weights::Given(ps)
            }
        };
        Ok(GradFunction::new(
            slf.clone().unbind(),
            GradSpec {
                argnums,
                single,
                weights,
                value,
                sens,
            },
        ))
    }

    /// Why the last call compiled, or None if it used a cached compile.
    fn explain(&self) -> Option<String> {
        self.explanation
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Compiles for `args` (without running) and returns the IR.
    #[pyo3(signature = (*args))]
    fn lower<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>) -> PyResult<Lowered> {
        let args = self.positional(py, args, None)?;
        self.check_specs(py, &args)?;
        let e = self.entry(py, &args_of(&args)?)?;
        Ok(Lowered {
            signature: e.key.iter().map(|a| a.to_string()).collect(),
            dumps: e.dumps.clone(),
        })
    }

    /// How many signatures are compiled.
    #[getter]
    fn cache_size(&self) -> usize {
        self.cache.len()
    }

    #[getter]
    fn __wrapped__(&self, py: Python<'_>) -> Py<PyAny> {
        self.func.clone_ref(py)
    }

    #[getter]
    fn __self__(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.bound.as_ref().map(|b| b.clone_ref(py))
    }

    #[getter]
    fn __name__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.func.bind(py).getattr("__name__")?.unbind())
    }

    #[getter]
    fn __qualname__(&self, py: Python<'_>) -> String {
        self.name(py)
    }

    #[getter]
    fn __doc__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.func.bind(py).getattr("__doc__")?.unbind())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match &self.bound {
            Some(_) => format!("<anfora.jit bound method {}>", self.name(py)),
            None => format!("<anfora.jit function {}>", self.name(py)),
        }
    }
}

/// `@anfora.jit` on a function (or a method, bound on attribute access).
#[pyfunction]
#[pyo3(signature = (func, specs=None))]
pub fn jit(
    py: Python<'_>,
    func: &Bound<'_, PyAny>,
    specs: Option<Vec<Py<PyAny>>>,
) -> PyResult<Py<JitFunction>> {
    if !func.is_callable() {
        return Err(PyTypeError::new_err("anfora.jit needs a function"));
    }
    if let Ok(j) = func.cast::<JitFunction>() {
        return Ok(j.clone().unbind());
    }
    // A bound method (`anfora.grad(net.construct)`): its function, bound to its object.
    if func.is_instance(&py.import("types")?.getattr("MethodType")?)? {
        let (f, this) = (func.getattr("__func__")?, func.getattr("__self__")?);
        return Py::new(
            py,
            JitFunction::new(py, f.unbind(), Some(this.unbind()), specs),
        );
    }
    Py::new(py, JitFunction::new(py, func.clone().unbind(), None, specs))
}

/// The IR of one compiled signature: `f.lower(*args)`.
#[pyclass(module = "anfora", name = "Lowered")]
pub struct Lowered {
    dumps: Dumps,
    signature: Vec<String>,
}

#[pymethods]
impl Lowered {
    /// The optimized graphs as `.ir` text, with the abstract of every node.
    fn ir(&self) -> String {
        self.dumps.ir.clone()
    }

    /// The optimized graphs in Graphviz format.
    fn dot(&self) -> String {
        self.dumps.dot.clone()
    }

    /// The linear program the executor runs.
    fn program(&self) -> String {
        self.dumps.program.clone()
    }

    #[getter]
    fn signature(&self) -> Vec<String> {
        self.signature.clone()
    }
}

/// The gradient of a compiled function: `f.grad`, `anfora.grad(f)`,
/// `anfora.value_and_grad(f)`.
#[pyclass(module = "anfora", name = "GradFunction")]
pub struct GradFunction {
    of: Py<JitFunction>,
    spec: GradSpec,
    cache: Cache,
}

impl GradFunction {
    fn new(of: Py<JitFunction>, spec: GradSpec) -> Self {
        GradFunction {
            of,
            spec,
            cache: Cache::default(),
        }
    }
}

/// The Parameters an object holds, depth first through attributes, lists, tuples and dicts,
/// each once, with its attribute path (`layer1.weight`).
pub fn parameters_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(String, Py<Parameter>)>> {
    fn walk(
        obj: &Bound<'_, PyAny>,
        path: &str,
        seen: &mut HashMap<usize, ()>,
        out: &mut Vec<(String, Py<Parameter>)>,
        depth: usize,
    ) -> PyResult<()> {
        if depth > 64 || seen.insert(obj.as_ptr() as usize, ()).is_some() {
            return Ok(());
        }
        if let Ok(p) = obj.cast::<Parameter>() {
            out.push((path.to_string(), p.clone().unbind()));
            return Ok(());
        }
        let join = |k: &str| {
            if path.is_empty() {
                k.to_string()
            } else {
                format!("{path}.{k}")
            }
        };
        if let Ok(t) = obj.cast::<PyTuple>() {
            for (i, x) in t.iter().enumerate() {
                walk(&x, &join(&i.to_string()), seen, out, depth + 1)?;
            }
        } else if let Ok(l) = obj.cast::<pyo3::types::PyList>() {
            for (i, x) in l.iter().enumerate() {
                walk(&x, &join(&i.to_string()), seen, out, depth + 1)?;
            }
        } else if let Ok(d) = obj.cast::<PyDict>() {
            for (k, v) in d.iter() {
                walk(&v, &join(&k.str()?.to_string()), seen, out, depth + 1)?;
            }
        } else if obj.cast::<Tensor>().is_err()
            && obj.cast::<JitFunction>().is_err()
            // Objects (Cells are callable too), not functions, methods or classes.
            && !obj.hasattr("__code__")?
            && !obj.hasattr("__func__")?
            && !obj.is_instance_of::<pyo3::types::PyType>()
            && let Ok(d) = obj.getattr("__dict__")
            && let Ok(d) = d.cast::<PyDict>()
        {
            for (k, v) in d.iter() {
                let k = k.str()?.to_string();
                if k.starts_with("__") {
                    continue;
                }
                walk(&v, &join(&k), seen, out, depth + 1)?;
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    let mut seen = HashMap::new();
    if let Ok(d) = obj.getattr("__dict__")
        && let Ok(d) = d.cast::<PyDict>()
    {
        seen.insert(obj.as_ptr() as usize, ());
        for (k, v) in d.iter() {
            let k = k.str()?.to_string();
            if k.starts_with("__") {
                continue;
            }
            walk(&v, &k, &mut seen, &mut out, 1)?;
        }
    }
    Ok(out)
}

#[pymethods]
impl GradFunction {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let of = self.of.bind(py).borrow();
        // With sens_param the last positional argument is the sensitivity, not the function's.
        let (args, sens) = if self.spec.sens {
            let n = args.len();
            if n == 0 {
                return Err(PyTypeError::new_err(format!(
                    "{}: the gradient function takes the output sensitivity as its last \
                     argument (sens_param=True), and none was given",
                    of.name(py)
                )));
            }
            (args.get_slice(0, n - 1), Some(args.get_item(n - 1)?))
        } else {
            (args.clone(), None)
        };
        let args = of.positional(py, &args, kwargs)?;
        of.check_specs(py, &args)?;
        let mut args = args_of(&args)?;
        let argnums: Vec<usize> = match &self.spec.argnums {
            Argnums::Given(a) => a.clone(),
            Argnums::All => (0..args.len()).collect(),
            Argnums::FloatTensors => (args.iter().enumerate())
                .filter(|(_, a)| matches!(&a.value, Value::Tensor(t) if t.dtype().is_float()))
                .map(|(i, _)| i)
                .collect(),
        };
        if let Some(&i) = argnums.iter().find(|&&i| i >= args.len()) {
            return Err(PyValueError::new_err(format!(
                "argnums {i} is out of range for a call with {} argument(s)",
                args.len()
            )));
        }
        let params: Vec<Py<Parameter>> = match &self.spec.weights {
            Weights::None => Vec::new(),
            Weights::Given(ps) => ps.iter().map(|p| p.clone_ref(py)).collect(),
            Weights::OfSelf => match &of.bound {
                Some(b) => parameters_of(b.bind(py))?
                    .into_iter()
                    .map(|(_, p)| p)
                    .filter(|p| p.bind(py).borrow().inner.requires_grad())
                    .collect(),
                None => Vec::new(),
            },
        };
        if argnums.is_empty() && params.is_empty() {
            return Err(PyValueError::new_err(format!(
                "{}.grad: nothing to differentiate: no float tensor arguments and no Parameters",
                of.name(py)
            )));
        }
        let refs: Vec<ParamRef> = params
            .iter()
            .map(|p| p.bind(py).borrow().inner.clone())
            .collect();
        let keys: Vec<u64> = refs.iter().map(|r| r.key()).collect();
        if let Some(s) = sens {
            args.push(to_arg(&s)?);
        }
        let entry = match self.cache.get(&args, &keys) {
            Some(hit) => hit,
            None => self.cache.insert(of.compile(
                py,
                &args,
                Some(GradCall {
                    argnums: &argnums,
                    weights: &refs,
                    value: self.spec.value,
                    sens: self.spec.sens,
                }),
            )?),
        };
        let result = run(py, &entry, args)?;
        // The wrapper returns (value, grads) for value_and_grad, and grads are
        // (inputs, weights) when there are weights; inputs is a tuple (argnums is one).
        let (value, grads) = if self.spec.value {
            let t = result.cast::<PyTuple>()?;
            (Some(t.get_item(0)?), t.get_item(1)?)
        } else {
            (None, result)
        };
        let unwrap_inputs = |inputs: Bound<'py, PyAny>| -> PyResult<Bound<'py, PyAny>> {
            let t = inputs.cast::<PyTuple>()?;
            let auto_single = matches!(self.spec.argnums, Argnums::FloatTensors) && t.len() == 1;
            if self.spec.single || auto_single {
                t.get_item(0)
            } else {
                Ok(inputs)
            }
        };
        let grads = if params.is_empty() {
            unwrap_inputs(grads)?
        } else {
            let (inputs, wgrads) = if argnums.is_empty() {
                (PyTuple::empty(py).into_any(), grads)
            } else {
                let t = grads.cast::<PyTuple>()?;
                (t.get_item(0)?, t.get_item(1)?)
            };
            if matches!(self.spec.weights, Weights::OfSelf) {
                accumulate(py, &params, &wgrads)?;
            }
            // `argnums=None` asks for the weights' gradients only (as in compiled code).
            if matches!(&self.spec.argnums, Argnums::Given(a) if a.is_empty()) {
                return Ok(match value {
                    Some(v) => PyTuple::new(py, [v, wgrads])?.into_any(),
                    None => wgrads,
                });
            }
            let inputs = if argnums.is_empty() {
                inputs
            } else {
                unwrap_inputs(inputs)?
            };
            PyTuple::new(py, [inputs, wgrads])?.into_any()
        };
        match value {
            Some(v) => Ok(PyTuple::new(py, [v, grads])?.into_any()),
            None => Ok(grads),
        }
    }
}

/// Adds each gradient to its Parameter's `.grad` (setting it the first time).
fn accumulate(py: Python<'_>, params: &[Py<Parameter>], grads: &Bound<'_, PyAny>) -> PyResult<()> {
    let grads = grads.cast::<PyTuple>()?;
    for (p, g) in params.iter().zip(grads.iter()) {
        let g = g.cast::<Tensor>()?.get().inner.clone();
        let mut p = p.bind(py).borrow_mut();
        let sum = match &p.grad {
            Some(old) => {
                let old = old.bind(py).get().inner.clone();
                anfora_ops::call::call_prim(
                    anfora_ir::Prim::Add,
                    &[Value::Tensor(old), Value::Tensor(g)],
                    &mut std::io::sink(),
                )
                .map_err(crate::tensor::vm_error)?
            }
            None => Value::Tensor(g),
        };
        let Value::Tensor(sum) = &sum else {
            unreachable!("tensor + tensor is a tensor")
        };
        p.grad = Some(Py::new(py, Tensor { inner: sum.clone() })?);
    }
    Ok(())
}

/// An eager call of `anfora.ops.<name>` outside compiled code.
#[pyfunction]
#[pyo3(signature = (name, args, kwargs=None))]
pub fn call_op<'py>(
    py: Python<'py>,
    name: &str,
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let p = anfora_ir::Prim::op(name).ok_or_else(|| {
        pyo3::exceptions::PyAttributeError::new_err(format!(
            "module 'anfora.ops' has no attribute '{name}'"
        ))
    })?;
    let values = args
        .iter()
        .map(|a| to_value(&a))
        .collect::<PyResult<Vec<_>>>()?;
    let kw = match kwargs {
        Some(k) if !k.is_empty() => {
            let mut names = Vec::new();
            let mut vals = Vec::new();
            for (key, v) in k.iter() {
                names.push(key.extract::<String>()?);
                vals.push(to_value(&v)?);
            }
            Some((names, vals))
        }
        _ => None,
    };
    let bound = anfora_ops::call::bind_prim(p, values, kw).map_err(crate::tensor::vm_error)?;
    let mut out = Vec::new();
    let result = anfora_ops::call::call_prim(p, &bound, &mut out);
    flush_output(py, &out)?;
    let v = result.map_err(crate::tensor::vm_error)?;
    from_value(py, &v)
}

/// The names of `anfora.ops`.
#[pyfunction]
pub fn op_names() -> Vec<&'static str> {
    anfora_ir::Prim::op_names().collect()
}

/// The Parameters an object holds: `[(path, Parameter)]`.
#[pyfunction]
#[pyo3(name = "parameters_of")]
pub fn py_parameters_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(String, Py<Parameter>)>> {
    parameters_of(obj)
}

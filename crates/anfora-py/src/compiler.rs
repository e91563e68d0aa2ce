//! The compiler each Python thread keeps (a frontend holding every graph compiled so far and
//! the Python objects they refer to), the process-wide context (`set_context`: dumps and the
//! device), and compiling one function through the driver's pipeline.

use std::cell::RefCell;
use std::path::PathBuf;

use anfora_driver::{Arg, Compiled, DumpSpec, Dumps, Failure, Gradient, StageView};
use anfora_front::Frontend;
use anfora_ir::ParamRef;
use anfora_ir::span::SourceMap;
use anfora_ops::Abs;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::host::{Host, PyResolver};

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

impl Context {
    /// The dumps `save_graphs` asks for: 1 the optimized IR, 2 the IR after every stage and
    /// optimizer pass, 3 a `.dot` graph beside each.
    fn dump_spec(&self) -> Option<DumpSpec> {
        (self.save_graphs > 0).then(|| DumpSpec {
            stage: (self.save_graphs == 1).then(|| "optimize".to_string()),
            ir: true,
            dot: self.save_graphs >= 3,
        })
    }

    /// Writes the dumps of one compile, numbered after the compiles before it.
    fn save(&self, dumps: &Dumps, qualname: &str) {
        let dir = (self.save_graphs_path.clone()).unwrap_or_else(|| PathBuf::from("anfora_graphs"));
        let mut shared = shared_context();
        let prefix = format!(
            "{:04}_{}_",
            shared.dumps,
            qualname.replace(['<', '>', '/'], "_")
        );
        shared.dumps += 1;
        // Dumps are a debugging aid: a directory that cannot be written loses them, not the
        // compile.
        let _ = dumps.write(&dir, &prefix);
    }
}

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
pub(crate) struct Compiler {
    fe: Frontend,
    host: Host,
    generation: usize,
    /// The sources of earlier generations.
    old_sources: Vec<SourceMap>,
    /// The `FORGET_EPOCH` this compiler's parsed functions belong to.
    epoch: usize,
}

impl Compiler {
    /// The module an entry of `generation` was compiled into; `None` once the compiler was
    /// reset since.
    pub(crate) fn module(&self, generation: usize) -> Option<&anfora_ir::Module> {
        (self.generation == generation).then_some(&self.fe.module)
    }

    fn new() -> Compiler {
        Compiler {
            fe: Frontend::new(),
            host: Host::default(),
            generation: 0,
            old_sources: Vec::new(),
            epoch: FORGET_EPOCH.load(std::sync::atomic::Ordering::Acquire),
        }
    }

    pub(crate) fn sources(&self, generation: usize) -> &SourceMap {
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

pub(crate) fn with_compiler<R>(f: impl FnOnce(&mut Compiler) -> R) -> R {
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
/// `device` ("cpu", "cuda:N") is where functions compiled from then on run;
/// `matmul_precision` ("float32" or "tf32") the arithmetic of float32 products on devices
/// with TensorFloat-32 (JAX's and PyTorch's switch; the CPU always computes in float32).
#[pyfunction]
#[pyo3(signature = (save_graphs=None, save_graphs_path=None, device=None, matmul_precision=None))]
pub fn set_context(
    save_graphs: Option<u8>,
    save_graphs_path: Option<PathBuf>,
    device: Option<&str>,
    matmul_precision: Option<&str>,
) -> PyResult<()> {
    if let Some(name) = matmul_precision {
        let p = anfora_ops::kernels::MatmulPrecision::parse(name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "matmul_precision must be 'float32' or 'tf32', not '{name}'"
            ))
        })?;
        anfora_ops::kernels::set_matmul_precision(p);
    }
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

/// Compiles Python function `func` (bound to `bound`, called `qualname`) or, with `gradient`,
/// that gradient of it, for `args`, on this thread's compiler; the stages go to the
/// `save_graphs` dumps.
pub(crate) fn compile(
    py: Python<'_>,
    func: &Bound<'_, PyAny>,
    bound: Option<&Bound<'_, PyAny>>,
    qualname: &str,
    args: &[Arg],
    gradient: Option<Gradient<'_>>,
    writing: bool,
) -> PyResult<Entry> {
    let context = shared_context().clone();
    let mut writes = None;
    with_compiler(|c| {
        let generation = c.generation;
        let mut kept = EntryDumps::default();
        let mut saved = context.dump_spec().map(Dumps::new);
        let result = {
            let Compiler { fe, host, .. } = c;
            let h = host.function(func, bound).map_err(CompileError::new_err)?;
            let mut resolver = PyResolver { py, host };
            let mut observe = |v: StageView| {
                kept.observe(&v);
                if let Some(saved) = &mut saved {
                    saved.observe(&v);
                }
            };
            match fe.host_function(&h) {
                None => Err(Failure::Compile(fe.diagnostics().to_vec())),
                Some(f) => {
                    // With numpy arrays to update, the variant returning the updated objects.
                    let f = match writing.then(|| fe.entry_write_back(f, &mut resolver)) {
                        Some(Some((v, positions))) => {
                            writes = Some(positions);
                            v
                        }
                        _ => f,
                    };
                    // The variant returns `(value, objects)`: its gradient differentiates the
                    // value and passes the objects on as the aux.
                    let gradient = gradient.map(|g| anfora_driver::Gradient {
                        has_aux: g.has_aux || writes.is_some(),
                        ..g
                    });
                    anfora_driver::compile_function(
                        fe,
                        f,
                        gradient,
                        &mut resolver,
                        Some((args, anfora_driver::ArgForm::Bound)),
                        &mut observe,
                    )
                }
            }
        };
        if let Some(saved) = saved {
            context.save(&saved, qualname);
        }
        match result {
            Ok(compiled) => Ok(Entry {
                key: args.iter().map(Arg::abstract_value).collect(),
                weights: gradient.map_or(Vec::new(), |g| {
                    g.weights.iter().map(ParamRef::key).collect()
                }),
                compiled,
                generation,
                dumps: kept,
                writing,
                writes,
            }),
            Err(failure) => {
                let text = failure.render(&c.fe.module.sources);
                // Errors of parsing or resolving stay in graphs that are now unusable.
                if c.fe.has_errors() {
                    c.reset();
                }
                Err(CompileError::new_err(text))
            }
        }
    })
}

/// The IR texts of one compile.
#[derive(Default, Clone)]
pub(crate) struct EntryDumps {
    /// The optimized graphs, with the abstract of every node.
    pub ir: String,
    pub dot: String,
    /// The linear program the executor runs.
    pub program: String,
}

impl EntryDumps {
    /// Keeps the optimized graphs and the lowered program.
    pub fn observe(&mut self, v: &StageView) {
        match v.stage {
            "optimize" => {
                self.ir = v.ir();
                self.dot = v.dot();
            }
            "lower" => self.program = v.ir(),
            _ => {}
        }
    }
}

/// One compiled signature.
pub(crate) struct Entry {
    pub(crate) key: Vec<Abs>,
    /// The Parameters a gradient is taken with respect to (their keys; empty otherwise).
    pub(crate) weights: Vec<u64>,
    pub(crate) compiled: Compiled,
    pub(crate) generation: usize,
    pub(crate) dumps: EntryDumps,
    /// Compiled for a call with numpy arrays its function may update in place.
    pub(crate) writing: bool,
    /// Then: the positions of the arguments whose updated objects follow the result.
    pub(crate) writes: Option<Vec<usize>>,
}

impl Entry {
    pub(crate) fn device(&self) -> anfora_tensor::Device {
        (self.compiled.program.as_ref()).map_or(anfora_tensor::Device::CPU, |p| p.device)
    }
}

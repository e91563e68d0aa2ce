//! anfora's runtime: loads a model file (`anfora-model`), plans it (the lower stage of
//! `anfora-exec`) and runs it on a device through the `Backend` interface, with a C API
//! ([`capi`], header `include/anfora_runtime.h`). It holds no parser, inference, autodiff or
//! optimizer: its dependency tree is the kernels, the primitives, the IR, the executor and
//! the model format (tested in `tests/layers.rs`).
//!
//! A [`Model`] may run from several threads at once: each call takes a planned program from
//! a pool (planning another when all are busy), and the Parameters are shared.

pub mod capi;
mod memory;
pub mod npy;
mod threads;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anfora_exec::Program;
use anfora_ir::{GraphId, Module, NodeId, Options};
use anfora_model::types::{InputKind, OutputKind, ScalarKind};
use anfora_model::{InputSpec, Limits, Loaded, ModelError, OutputSpec, ResultTree, TensorSpec};
use anfora_ops::value::from_const;
use anfora_ops::{Abs, ParamRef, Value};
use anfora_tensor::{DType, Device, Scalar, Tensor};

pub use threads::{num_threads, set_num_threads};

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The model file was refused.
    Model(ModelError),
    /// The file could not be read or written.
    Io(String),
    /// The caller passed something the model does not take.
    Argument(String),
    /// The program raised a Python exception: its class, its message and the traceback.
    Raised {
        kind: String,
        message: String,
        traceback: String,
    },
    /// A tensor or the process's memory budget was exhausted.
    Memory(String),
    /// The program could not be planned: an anfora bug or a model this build cannot run.
    Plan(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Model(e) => write!(f, "{e}"),
            Error::Io(m) | Error::Argument(m) | Error::Memory(m) | Error::Plan(m) => f.write_str(m),
            Error::Raised { traceback, .. } => f.write_str(traceback.trim_end()),
        }
    }
}

impl std::error::Error for Error {}

impl From<ModelError> for Error {
    fn from(e: ModelError) -> Error {
        Error::Model(e)
    }
}

/// How a model is loaded.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    pub limits: Limits,
    /// The device to run on (the CPU when `None`).
    pub device: Option<Device>,
}

/// The graphs and what saving needs: read only once loaded (planning, saving, tracebacks).
struct Graphs {
    module: Module,
    entry: GraphId,
    abstracts: HashMap<NodeId, Abs>,
    message: anfora_model::schema::Model,
    constant_blobs: HashMap<u32, Vec<u8>>,
}

/// A planned program and the fixed inputs as its values.
struct Planned {
    program: Program,
    fixed: Vec<Option<Value>>,
}

// SAFETY: a `Planned` holds `Rc`s (constants and registers of the program) that no value
// outside it shares: it is built from the module's constants by one thread, is used by one
// call at a time (it sits in the pool's mutex or is owned by that call), and every value a
// call returns is converted to tensors (`Arc`-backed) and the rest dropped before the
// program goes back to the pool.
unsafe impl Send for Planned {}

/// A loaded model.
pub struct Model {
    graphs: Graphs,
    pool: Mutex<Vec<Planned>>,
    inputs: Vec<InputSpec>,
    outputs: Vec<OutputSpec>,
    result: ResultTree,
    parameters: Vec<ParamRef>,
    writes_parameters: bool,
    producer: String,
    device: Device,
    file_len: usize,
    /// The time limit of a run in microseconds; 0 for none.
    timeout_us: AtomicU64,
}

impl Model {
    /// Loads and validates the model file at `path`.
    pub fn load(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Model, Error> {
        let path = path.as_ref();
        let bytes = read_bounded(path, options.limits.max_bytes)?;
        Model::from_bytes(&bytes, options)
    }

    /// Loads and validates a model file held in memory.
    pub fn from_bytes(bytes: &[u8], options: &LoadOptions) -> Result<Model, Error> {
        let loaded = anfora_model::read_model(bytes, &options.limits)?;
        let device = options.device.unwrap_or(Device::CPU);
        let model = Model::new(loaded, device, bytes.len());
        // Plan once now: a model that cannot be planned is refused at load, and the first
        // call finds a program ready.
        let planned = model.plan()?;
        model.pool.lock().map_err(poisoned)?.push(planned);
        Ok(model)
    }

    fn new(l: Loaded, device: Device, file_len: usize) -> Model {
        Model {
            graphs: Graphs {
                module: l.module,
                entry: l.entry,
                abstracts: l.abstracts,
                message: l.message,
                constant_blobs: l.constant_blobs,
            },
            pool: Mutex::new(Vec::new()),
            inputs: l.inputs,
            outputs: l.outputs,
            result: l.result,
            parameters: l.parameters,
            writes_parameters: l.writes_parameters,
            producer: l.producer,
            device,
            file_len,
            timeout_us: AtomicU64::new(0),
        }
    }

    fn plan(&self) -> Result<Planned, Error> {
        let g = &self.graphs;
        let program = anfora_exec::lower(&g.module, g.entry, &g.abstracts, self.device)
            .map_err(|e| Error::Plan(e.to_string()))?;
        let fixed = (self.inputs.iter())
            .map(|i| match &i.kind {
                InputKind::Fixed(c) => Some(from_const(c, &mut |_| Value::None)),
                InputKind::Tensor(_) => None,
            })
            .collect();
        Ok(Planned { program, fixed })
    }

    /// The inputs a caller passes, in order (the tensor inputs; fixed ones are not listed).
    pub fn inputs(&self) -> Vec<(&str, &TensorSpec)> {
        self.inputs
            .iter()
            .filter_map(|i| match &i.kind {
                InputKind::Tensor(t) => Some((i.name.as_str(), t)),
                InputKind::Fixed(_) => None,
            })
            .collect()
    }

    /// Every entry parameter, fixed ones included.
    pub fn all_inputs(&self) -> &[InputSpec] {
        &self.inputs
    }

    /// The leaves of the result, in order.
    pub fn outputs(&self) -> &[OutputSpec] {
        &self.outputs
    }

    /// The structure of the result (leaves index [`Model::outputs`]).
    pub fn result_tree(&self) -> &ResultTree {
        &self.result
    }

    /// The model's Parameters (shared with every call).
    pub fn parameters(&self) -> &[ParamRef] {
        &self.parameters
    }

    pub fn parameter(&self, name: &str) -> Option<&ParamRef> {
        self.parameters.iter().find(|p| &*p.name() == name)
    }

    /// Whether calling it writes Parameters (an exported training step).
    pub fn writes_parameters(&self) -> bool {
        self.writes_parameters
    }

    pub fn producer(&self) -> &str {
        &self.producer
    }

    /// The graphs, one line each: name, kind, parameters and nodes (for `anfora inspect`).
    pub fn graph_summary(&self) -> String {
        let g = &self.graphs;
        let m = &g.module;
        let mut out = format!(
            "graphs: {} ({} nodes), entry @{}\n",
            m.graphs.len(),
            m.nodes.len(),
            m.graphs[g.entry].name
        );
        for graph in m.graphs.values() {
            let kind = format!("{:?}", graph.kind).to_lowercase();
            out.push_str(&format!(
                "  @{} ({kind}, {} params, {} calls)\n",
                graph.name,
                graph.params.len(),
                graph.order.len()
            ));
            // The primitives each graph calls, in order of first call, with their counts
            // (how a quantized model shows that nothing dequantizes between its layers).
            let mut counts: Vec<(&str, usize)> = Vec::new();
            for &n in &graph.order {
                let Some(p) = m.callee_prim(n) else { continue };
                match counts.iter_mut().find(|(name, _)| *name == p.name()) {
                    Some((_, c)) => *c += 1,
                    None => counts.push((p.name(), 1)),
                }
            }
            let calls: Vec<String> = (counts.iter())
                .map(|(name, c)| {
                    if *c == 1 {
                        name.to_string()
                    } else {
                        format!("{name} x{c}")
                    }
                })
                .collect();
            out.push_str(&format!("    {}\n", calls.join(", ")));
        }
        out
    }

    /// The size of the file it was loaded from.
    pub fn file_len(&self) -> usize {
        self.file_len
    }

    /// Bounds how long each run may take (`None`: no bound): past it, the run stops at its
    /// next call or loop iteration with a `TimeoutError`. For models that may not terminate.
    pub fn set_timeout(&self, limit: Option<Duration>) {
        let us = limit.map_or(0, |d| {
            u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
        });
        self.timeout_us.store(us, Ordering::Relaxed);
    }

    /// Sets Parameter `name` to `value`, which must have its dtype and shape.
    pub fn set_parameter(&self, name: &str, value: Tensor) -> Result<(), Error> {
        let p = self
            .parameter(name)
            .ok_or_else(|| Error::Argument(format!("the model has no Parameter '{name}'")))?;
        if value.dtype() != p.dtype() || value.shape() != p.shape() {
            return Err(Error::Argument(format!(
                "Parameter '{name}' is {}{:?}, not {}{:?}",
                p.dtype().name(),
                p.shape(),
                value.dtype().name(),
                value.shape()
            )));
        }
        p.set(value);
        Ok(())
    }

    /// The model file with the Parameters' current values.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let g = &self.graphs;
        let values: Vec<Tensor> = self.parameters.iter().map(ParamRef::get).collect();
        Ok(anfora_model::write::rewrite_parameters(
            &g.message,
            &g.constant_blobs,
            &values,
        ))
    }

    /// Writes the model with the Parameters' current values to `path` (through a temporary
    /// file, so a failed write leaves an existing file whole).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        let bytes = self.to_bytes()?;
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".tmp{}", std::process::id()));
        let io = |e: std::io::Error| Error::Io(format!("cannot write {}: {e}", path.display()));
        std::fs::write(&tmp, &bytes).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// Runs the model on `inputs` (one tensor per listed input) and returns the leaves of
    /// the result (a Python number as a 0-d tensor).
    pub fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>, Error> {
        self.check_inputs(inputs)?;
        let mut planned = match self.pool.lock().map_err(poisoned)?.pop() {
            Some(p) => p,
            None => self.plan()?,
        };
        let deadline = match self.timeout_us.load(Ordering::Relaxed) {
            0 => None,
            us => Instant::now().checked_add(Duration::from_micros(us)),
        };
        let result = threads::on_kernel_threads(|| {
            anfora_tensor::memory::with_deadline(deadline, || self.call(&mut planned, inputs))
        });
        self.pool.lock().map_err(poisoned)?.push(planned);
        result
    }

    fn check_inputs(&self, inputs: &[Tensor]) -> Result<(), Error> {
        let want = self.inputs();
        if inputs.len() != want.len() {
            return Err(Error::Argument(format!(
                "the model takes {} inputs ({}), {} were given",
                want.len(),
                want.iter()
                    .map(|(n, t)| format!("{n}: {}", t.text()))
                    .collect::<Vec<_>>()
                    .join(", "),
                inputs.len()
            )));
        }
        for (t, (name, spec)) in inputs.iter().zip(want) {
            if !spec.admits(t.dtype(), t.shape()) {
                return Err(Error::Argument(format!(
                    "input '{name}' must be {}, not {}",
                    spec.text(),
                    TensorSpec {
                        dtype: t.dtype(),
                        shape: t.shape().iter().map(|&d| Some(d)).collect()
                    }
                    .text()
                )));
            }
        }
        Ok(())
    }

    fn call(&self, planned: &mut Planned, inputs: &[Tensor]) -> Result<Vec<Tensor>, Error> {
        let mut given = inputs.iter();
        let args = planned
            .fixed
            .iter()
            .map(|f| match f {
                Some(v) => v.clone(),
                None => Value::Tensor(given.next().expect("inputs were counted").clone()),
            })
            .collect();
        let mut out = std::io::stdout();
        let options = Options::default();
        let value = match planned.program.call(args, &mut out, &options) {
            Ok(v) => v,
            Err(e) => return Err(self.raised(e)),
        };
        let mut leaves = Vec::with_capacity(self.outputs.len());
        let flat = self.flatten(&self.result, &value, &mut leaves);
        drop(value);
        flat?;
        Ok(leaves)
    }

    fn raised(&self, e: anfora_ir::RuntimeError) -> Error {
        let traceback = e.render(&self.graphs.module.sources);
        if e.kind == "MemoryError" {
            return Error::Memory(traceback);
        }
        Error::Raised {
            kind: e.kind,
            message: e.message,
            traceback,
        }
    }

    /// The result's leaves in order, each checked against its output's type.
    fn flatten(&self, tree: &ResultTree, v: &Value, out: &mut Vec<Tensor>) -> Result<(), Error> {
        let mismatch = |what: String| {
            Error::Plan(format!(
                "the model's result does not have the structure its file declares: {what}"
            ))
        };
        match (tree, v) {
            (ResultTree::None, Value::None) => Ok(()),
            (ResultTree::Tuple(items), Value::Tuple(vs))
            | (ResultTree::List(items), Value::List(vs))
                if items.len() == vs.len() =>
            {
                for (t, v) in items.iter().zip(vs.iter()) {
                    self.flatten(t, v, out)?;
                }
                Ok(())
            }
            (ResultTree::Leaf(i), v) => {
                let spec = &self.outputs[*i];
                let t =
                    leaf_tensor(&spec.kind, v).ok_or_else(|| mismatch(format!("output {i}")))?;
                if !spec.tensor_spec().admits(t.dtype(), t.shape()) {
                    return Err(mismatch(format!(
                        "output {i} is {}{:?}",
                        t.dtype().name(),
                        t.shape()
                    )));
                }
                out.push(t);
                Ok(())
            }
            (_, v) => Err(mismatch(format!("found {}", v.type_name()))),
        }
    }
}

fn leaf_tensor(kind: &OutputKind, v: &Value) -> Option<Tensor> {
    let scalar = |s: Scalar, d: DType| Tensor::scalar(s, d).ok();
    match (kind, v) {
        (OutputKind::Tensor(_), Value::Tensor(t)) => Some(t.clone()),
        (OutputKind::Scalar(ScalarKind::Bool), Value::Bool(b)) => {
            scalar(Scalar::Bool(*b), DType::Bool)
        }
        (OutputKind::Scalar(ScalarKind::Int), Value::Int(i)) => scalar(Scalar::Int(*i), DType::I64),
        (OutputKind::Scalar(ScalarKind::Float), Value::Float(f)) => {
            scalar(Scalar::Float(*f), DType::F64)
        }
        _ => None,
    }
}

fn poisoned<T>(_: std::sync::PoisonError<T>) -> Error {
    Error::Plan("a call on this model panicked earlier; load it again".into())
}

/// Reads a file of at most `cap` bytes.
fn read_bounded(path: &Path, cap: u64) -> Result<Vec<u8>, Error> {
    let io = |e: std::io::Error| Error::Io(format!("cannot read {}: {e}", path.display()));
    let len = std::fs::metadata(path).map_err(io)?.len();
    if len > cap {
        return Err(Error::Model(ModelError::TooLarge { needed: len, cap }));
    }
    std::fs::read(path).map_err(io)
}

// One model serves several threads at once.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Model>();
};

//! `@anfora.jit`: a function (or method) compiled on its first call for each argument
//! signature, and what `f.lower(*args)` shows of one.

use std::rc::Rc;
use std::sync::Arc;

use numpy::PyUntypedArray;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use anfora_driver::Arg;

use crate::cache::{Cache, args_of, run, run_writing};
use crate::compiler::{Entry, EntryDumps};
use crate::grad::{Argnums, GradFunction, GradSpec, Weights};
use crate::pycall::{Args, Kwargs, Returned};
use crate::source::Source;
use crate::tensor::{ArrayTensor, Parameter, Tensor};

/// A function (or method) compiled on its first call for each argument signature.
#[pyclass(module = "anfora", name = "Function")]
pub struct JitFunction {
    source: Arc<Source>,
    cache: Cache,
    explanation: std::sync::Mutex<Option<String>>,
    grad: std::sync::Mutex<Option<Py<GradFunction>>>,
}

impl JitFunction {
    fn new(source: Source) -> Self {
        JitFunction {
            source: Arc::new(source),
            cache: Cache::default(),
            explanation: Default::default(),
            grad: Default::default(),
        }
    }

    /// The cached entry for `args`, compiling it when missing (`writing`: for a call with
    /// numpy arrays the function may update in place).
    fn entry(&self, py: Python<'_>, args: &[Arg], writing: bool) -> PyResult<Rc<Entry>> {
        // A plain entry compiled for these arguments updates none of them in place (that
        // would have been refused): it serves a call with arrays too.
        let hit = (self.cache.get(args, &[], false))
            .or_else(|| writing.then(|| self.cache.get(args, &[], true)).flatten());
        if let Some(hit) = hit {
            *self.explanation.lock().unwrap_or_else(|e| e.into_inner()) = None;
            return Ok(hit);
        }
        let entry = self.source.compile(py, args, None, writing)?;
        let previous = self.cache.last();
        *self.explanation.lock().unwrap_or_else(|e| e.into_inner()) = Some(anfora_driver::explain(
            &self.source.name(py),
            &entry.key,
            previous.as_ref().map(|e| e.key.as_slice()),
            self.source.param_names(py),
        ));
        Ok(self.cache.insert(entry))
    }
}

/// Whether some argument is an array a function may update in place (numpy's or anfora's).
pub(crate) fn holds_arrays(given: &Bound<'_, PyTuple>) -> bool {
    (given.iter()).any(|a| a.cast::<PyUntypedArray>().is_ok() || a.cast::<ArrayTensor>().is_ok())
}

/// Whether every argument at `positions` (those the function of `source` may update in place)
/// can take the update: a numpy array or an anfora array that no other argument shares memory
/// with, or a value an update only rebinds (a number, an anfora scalar). A Parameter cannot
/// (`false`); an array also passed through another argument is an error, as the function
/// would update one and read the other unchanged.
pub(crate) fn updatable(
    source: &Source,
    py: Python<'_>,
    given: &Bound<'_, PyTuple>,
    positions: &[usize],
) -> PyResult<bool> {
    let numpy = py.import("numpy")?;
    let names = source.param_names(py);
    for &p in positions {
        let arg = given.get_item(p)?;
        if arg.cast::<Parameter>().is_ok() {
            return Ok(false);
        }
        let tensor = arg.cast::<ArrayTensor>().is_ok();
        if arg.cast::<PyUntypedArray>().is_err() && !tensor {
            continue;
        }
        for (q, other) in given.iter().enumerate().filter(|(q, _)| *q != p) {
            let shares = if tensor {
                other.cast::<Tensor>().is_ok() && root(&arg).is(root(&other))
            } else {
                other.cast::<PyUntypedArray>().is_ok()
                    && numpy
                        .call_method1("may_share_memory", (&arg, &other))?
                        .is_truthy()?
            };
            if shares {
                let name = |i: usize| names.get(i).cloned().unwrap_or_else(|| format!("#{i}"));
                return Err(PyValueError::new_err(format!(
                    "{}() updates its argument '{}' in place, and the same array is also passed as '{}': numpy would show the update through both, compiled code would not; pass a copy",
                    source.name(py),
                    name(p),
                    name(q)
                )));
            }
        }
    }
    Ok(true)
}

#[pymethods]
impl JitFunction {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(&self, args: &Args<'py>, kwargs: Option<&Kwargs<'py>>) -> Returned<'py> {
        let py = args.py();
        let given = self.source.positional(py, args, kwargs)?;
        self.source.check_specs(py, &given)?;
        let args = match args_of(&given) {
            Ok(a) => a,
            Err(e) => {
                let target = self.__anfora_jit__(py).into_pyobject(py)?.into_any();
                let original = (args.clone(), kwargs.cloned());
                return crate::grad::with_objects(py, target, original, e);
            }
        };
        // Arrays are mutable: a function that updates one in place updates the caller's.
        let writing = holds_arrays(&given);
        let entry = self.entry(py, &args, writing)?;
        match &entry.writes {
            Some(positions) if updatable(&self.source, py, &given, positions)? => {
                run_writing(py, &entry, positions, args, &given)
            }
            // A Parameter to update: the plain function refuses it (E0306).
            Some(_) => run(py, &*self.entry(py, &args, false)?, args),
            None => run(py, &entry, args),
        }
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
        let specs =
            (this.source.specs.as_ref()).map(|s| s.iter().map(|x| x.clone_ref(py)).collect());
        let source = Source::new(
            py,
            this.source.func.clone_ref(py),
            Some(obj.clone().unbind()),
            specs,
        );
        let bound = Bound::new(py, JitFunction::new(source))?;
        let name: String = this.source.func.bind(py).getattr("__name__")?.extract()?;
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
        let weights = if slf.borrow().source.bound.is_some() {
            Weights::OfSelf
        } else {
            Weights::None
        };
        let g = Py::new(
            py,
            GradFunction::new(
                slf.borrow().source.clone(),
                GradSpec {
                    argnums: Argnums::FloatTensors,
                    single: false,
                    weights,
                    value: false,
                    sens: false,
                    cast_integers: false,
                    has_aux: false,
                },
            ),
        )?;
        *slf.borrow().grad.lock().unwrap_or_else(|e| e.into_inner()) = Some(g.clone_ref(py));
        Ok(g)
    }

    /// `grad` / `value_and_grad` with explicit `argnums` (None: no argument, `...`: every
    /// argument, an int or a tuple of ints) and `weights`; with `sens`, the gradient function
    /// takes the output's sensitivity as its last argument; with `cast_integers`, integer
    /// values' sensitivities follow MindSpore's rule; with `has_aux`, the function returns
    /// `(value, aux)` and only the value is differentiated.
    #[pyo3(signature = (argnums, weights=None, value=false, sens=false, cast_integers=false, has_aux=false))]
    fn _grad_transform(
        slf: &Bound<'_, Self>,
        argnums: &Bound<'_, PyAny>,
        weights: Option<&Bound<'_, PyAny>>,
        value: bool,
        sens: bool,
        cast_integers: bool,
        has_aux: bool,
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
            slf.borrow().source.clone(),
            GradSpec {
                argnums,
                single,
                weights,
                value,
                sens,
                cast_integers,
                has_aux,
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
        let e = self.entry(py, &self.source.call_args(py, args, None)?, false)?;
        Ok(Lowered {
            signature: e.key.iter().map(|a| a.to_string()).collect(),
            dumps: e.dumps.clone(),
        })
    }

    /// Compiles for `args` (without running) and writes it to `path` in `format` (`anfora`
    /// or `onnx`); returns the file's size (`anfora.export`). `names` are `(name, Parameter)`
    /// pairs naming Parameters in an anfora model file (a Cell's paths).
    #[pyo3(signature = (path, *args, format="anfora", names=None))]
    fn _export<'py>(
        &self,
        py: Python<'py>,
        path: std::path::PathBuf,
        args: &Bound<'py, PyTuple>,
        format: &str,
        names: Option<Vec<(String, PyRef<'py, Parameter>)>>,
    ) -> PyResult<usize> {
        let format = anfora_driver::ExportFormat::parse(format)
            .map_err(pyo3::exceptions::PyValueError::new_err)?;
        let e = self.entry(py, &self.source.call_args(py, args, None)?, false)?;
        let names = (names.unwrap_or_default().iter())
            .map(|(n, p)| (p.inner.key(), n.clone()))
            .collect();
        crate::model::export_entry(&e, &path, format, &names)
    }

    /// How many signatures are compiled.
    #[getter]
    fn cache_size(&self) -> usize {
        self.cache.len()
    }

    /// `(function, bound object)`: how the compiler recognizes a compiled function it meets
    /// as a value (it compiles the function's source itself).
    #[getter]
    fn __anfora_jit__(&self, py: Python<'_>) -> (Py<PyAny>, Option<Py<PyAny>>) {
        let bound = self.source.bound.as_ref().map(|b| b.clone_ref(py));
        (self.source.func.clone_ref(py), bound)
    }

    #[getter]
    fn __wrapped__(&self, py: Python<'_>) -> Py<PyAny> {
        self.source.func.clone_ref(py)
    }

    #[getter]
    fn __self__(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.source.bound.as_ref().map(|b| b.clone_ref(py))
    }

    #[getter]
    fn __name__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.source.func.bind(py).getattr("__name__")?.unbind())
    }

    #[getter]
    fn __qualname__(&self, py: Python<'_>) -> String {
        self.source.name(py)
    }

    #[getter]
    fn __doc__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.source.func.bind(py).getattr("__doc__")?.unbind())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match &self.source.bound {
            Some(_) => format!("<anfora.jit bound method {}>", self.source.name(py)),
            None => format!("<anfora.jit function {}>", self.source.name(py)),
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
        let source = Source::new(py, f.unbind(), Some(this.unbind()), specs);
        return Py::new(py, JitFunction::new(source));
    }
    let source = Source::new(py, func.clone().unbind(), None, specs);
    Py::new(py, JitFunction::new(source))
}

/// The IR of one compiled signature: `f.lower(*args)`.
#[pyclass(module = "anfora", name = "Lowered")]
pub struct Lowered {
    dumps: EntryDumps,
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

/// The tensor whose elements an anfora tensor object shows: itself, or the base of its view.
fn root<'py>(t: &Bound<'py, PyAny>) -> Bound<'py, PyAny> {
    match t
        .cast::<Tensor>()
        .ok()
        .and_then(|t| t.get().cell.view_base())
    {
        Some(base) => root(base.bind(t.py()).as_any()),
        None => t.clone(),
    }
}

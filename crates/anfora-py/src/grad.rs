//! Gradients of compiled functions: `f.grad`, `anfora.grad(f)`, `anfora.value_and_grad(f)`,
//! and the Parameters of an object they accumulate into.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use anfora_ir::ParamRef;
use anfora_ops::Value;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use anfora_driver::{Arg, Gradient};

use crate::array::Cell;
use crate::cache::{Cache, args_of, run, run_writing_gradient, to_arg};
use crate::compiler::Entry;
use crate::function::{holds_arrays, updatable};
use crate::pycall::{Args, Kwargs, Returned};
use crate::source::Source;
use crate::tensor::{Parameter, Tensor, array_object};

/// Which gradients a [`GradFunction`] computes.
pub(crate) struct GradSpec {
    pub(crate) argnums: Argnums,
    /// Whether `argnums` was a single int (the result is then one gradient, not a tuple).
    pub(crate) single: bool,
    /// Parameters to differentiate with respect to: given, or (for a bound method's `.grad`)
    /// every Parameter the object holds.
    pub(crate) weights: Weights,
    /// `value_and_grad`: the result is `(value, gradients)`.
    pub(crate) value: bool,
    /// The call's last argument is the output's sensitivity (GradOperation's `sens_param`).
    pub(crate) sens: bool,
    /// Integer values' sensitivities are cast to their dtype (MindSpore's rule), not zero.
    pub(crate) cast_integers: bool,
    /// The function returns `(value, aux)`: the result is `(gradients, aux)`, or with `value`
    /// `((value, aux), gradients)`.
    pub(crate) has_aux: bool,
}

/// Which arguments a gradient is taken with respect to.
pub(crate) enum Argnums {
    /// Every float tensor argument (`f.grad`).
    FloatTensors,
    /// Every argument (`argnums=...`, GradOperation's `get_all`).
    All,
    Given(Vec<usize>),
}

pub(crate) enum Weights {
    None,
    Given(Vec<Py<Parameter>>),
    /// The Parameters of the bound object, found when called; their `.grad` accumulates.
    OfSelf,
}

/// The gradient of a compiled function: `f.grad`, `anfora.grad(f)`,
/// `anfora.value_and_grad(f)`.
#[pyclass(module = "anfora", name = "GradFunction")]
pub struct GradFunction {
    of: Arc<Source>,
    spec: GradSpec,
    cache: Cache,
}

impl GradFunction {
    pub(crate) fn new(of: Arc<Source>, spec: GradSpec) -> Self {
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
            && !obj.hasattr("__anfora_jit__")?
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
    /// What it differentiates, for `anfora.grad` of a gradient function (which compiles a
    /// function calling the same transform): `(function, bound object or None, argnums,
    /// weights, value, sens, integers, has_aux)`. `argnums` is as `grad` takes it, or `"float tensors"` for
    /// `f.grad`; `weights` a tuple of Parameters, None, or `"self"` for a bound method's
    /// `.grad`.
    #[getter]
    fn _spec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let argnums: Py<PyAny> = match &self.spec.argnums {
            Argnums::FloatTensors => "float tensors".into_pyobject(py)?.into_any().unbind(),
            Argnums::All => pyo3::types::PyEllipsis::get(py)
                .to_owned()
                .into_any()
                .unbind(),
            Argnums::Given(v) if self.spec.single && v.len() == 1 => {
                v[0].into_pyobject(py)?.into_any().unbind()
            }
            Argnums::Given(v) if v.is_empty() => py.None(),
            Argnums::Given(v) => PyTuple::new(py, v)?.into_any().unbind(),
        };
        let weights: Py<PyAny> = match &self.spec.weights {
            Weights::None => py.None(),
            Weights::Given(ps) => PyTuple::new(py, ps.iter().map(|p| p.clone_ref(py)))?
                .into_any()
                .unbind(),
            Weights::OfSelf => "self".into_pyobject(py)?.into_any().unbind(),
        };
        let flag = |b: bool| {
            pyo3::types::PyBool::new(py, b)
                .to_owned()
                .into_any()
                .unbind()
        };
        let bound = self
            .of
            .bound
            .as_ref()
            .map_or_else(|| py.None(), |b| b.clone_ref(py));
        PyTuple::new(
            py,
            [
                self.of.func.clone_ref(py),
                bound,
                argnums,
                weights,
                flag(self.spec.value),
                flag(self.spec.sens),
                (if self.spec.cast_integers {
                    "cast"
                } else {
                    "zero"
                })
                .into_pyobject(py)?
                .into_any()
                .unbind(),
                flag(self.spec.has_aux),
            ],
        )
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(&self, args: &Args<'py>, kwargs: Option<&Kwargs<'py>>) -> Returned<'py> {
        let py = args.py();
        let of = &self.of;
        let original = (args.clone(), kwargs.cloned());
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
        let given = of.positional(py, &args, kwargs)?;
        of.check_specs(py, &given)?;
        let mut args = match args_of(&given) {
            Ok(args) => args,
            Err(e) => {
                let spec = self._spec(py)?.into_any();
                return with_objects(py, spec, original, e);
            }
        };
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
        let gradient = Gradient {
            argnums: &argnums,
            weights: &refs,
            value: self.spec.value,
            sens: self.spec.sens,
            cast_integers: self.spec.cast_integers,
            has_aux: self.spec.has_aux,
        };
        // Arrays are mutable: the gradient of a function that updates one in place updates
        // the caller's as the function would (its own aux carries the objects back, so not
        // with has_aux; nor with sens_param, whose last argument is not the function's).
        let writing = !self.spec.has_aux && !self.spec.sens && holds_arrays(&given);
        let entry = self.entry(py, &args, &keys, writing, gradient)?;
        let result = match &entry.writes {
            Some(positions) if updatable(of, py, &given, positions)? => {
                run_writing_gradient(py, &entry, positions, args, &given, self.spec.value)?
            }
            // A Parameter to update: the plain function refuses it (E0306).
            Some(_) => run(py, &*self.entry(py, &args, &keys, false, gradient)?, args)?,
            None => run(py, &entry, args)?,
        };
        // The wrapper returns (value, grads) for value_and_grad, or (grads, aux) for grad with
        // has_aux, and grads are (inputs, weights) when there are weights; inputs is a tuple
        // (argnums is one).
        let (value, grads, aux) = match (self.spec.value, self.spec.has_aux) {
            (true, _) => {
                let t = result.cast::<PyTuple>()?;
                (Some(t.get_item(0)?), t.get_item(1)?, None)
            }
            (false, true) => {
                let t = result.cast::<PyTuple>()?;
                (None, t.get_item(0)?, Some(t.get_item(1)?))
            }
            (false, false) => (None, result, None),
        };
        let grads = self.shaped_grads(py, grads, &argnums, &params)?;
        Ok(match (value, aux) {
            (Some(v), _) => PyTuple::new(py, [v, grads])?.into_any(),
            (None, Some(aux)) => PyTuple::new(py, [grads, aux])?.into_any(),
            (None, None) => grads,
        })
    }
}

impl GradFunction {
    /// The cached entry for `args` and the weights `keys`, compiling `gradient` when missing
    /// (`writing`: for a call with arrays the function may update in place).
    fn entry(
        &self,
        py: Python<'_>,
        args: &[Arg],
        keys: &[u64],
        writing: bool,
        gradient: Gradient<'_>,
    ) -> PyResult<Rc<Entry>> {
        let hit = (self.cache.get(args, keys, false))
            .or_else(|| writing.then(|| self.cache.get(args, keys, true)).flatten());
        match hit {
            Some(hit) => Ok(hit),
            None => Ok(self
                .cache
                .insert(self.of.compile(py, args, Some(gradient), writing)?)),
        }
    }

    /// The gradients as `grad` returns them, from the wrapper's: one gradient for a single
    /// argnum, `(inputs, weights)` with weights (the weights' alone for `argnums=None`); a
    /// bound method's `.grad` also accumulates into its Parameters' `.grad`.
    fn shaped_grads<'py>(
        &self,
        py: Python<'py>,
        grads: Bound<'py, PyAny>,
        argnums: &[usize],
        params: &[Py<Parameter>],
    ) -> PyResult<Bound<'py, PyAny>> {
        let unwrap_inputs = |inputs: Bound<'py, PyAny>| -> PyResult<Bound<'py, PyAny>> {
            let t = inputs.cast::<PyTuple>()?;
            let auto_single = matches!(self.spec.argnums, Argnums::FloatTensors) && t.len() == 1;
            if self.spec.single || auto_single {
                t.get_item(0)
            } else {
                Ok(inputs)
            }
        };
        if params.is_empty() {
            return unwrap_inputs(grads);
        }
        let (inputs, wgrads) = if argnums.is_empty() {
            (PyTuple::empty(py).into_any(), grads)
        } else {
            let t = grads.cast::<PyTuple>()?;
            (t.get_item(0)?, t.get_item(1)?)
        };
        if matches!(self.spec.weights, Weights::OfSelf) {
            accumulate(py, params, &wgrads)?;
        }
        // `argnums=None` asks for the weights' gradients only (as in compiled code).
        if matches!(&self.spec.argnums, Argnums::Given(a) if a.is_empty()) {
            return Ok(wgrads);
        }
        let inputs = if argnums.is_empty() {
            inputs
        } else {
            unwrap_inputs(inputs)?
        };
        Ok(PyTuple::new(py, [inputs, wgrads])?.into_any())
    }
}

/// The call with arguments `(args, kwargs)` that could not be passed (`error`) when some are
/// objects: see `anfora/_objects.py`; `target` is a gradient's `_spec`, or a jit function's
/// `(function, bound object)`.
pub(crate) fn with_objects<'py>(
    py: Python<'py>,
    target: Bound<'py, PyAny>,
    (args, kwargs): (Bound<'py, PyTuple>, Option<Bound<'py, PyDict>>),
    error: PyErr,
) -> PyResult<Bound<'py, PyAny>> {
    let helper = py.import("anfora._objects")?.getattr("call_with_objects")?;
    let is_spec = target.cast::<PyTuple>().is_ok_and(|t| t.len() == 8);
    let (target, spec) = if is_spec {
        (py.None().into_bound(py), target)
    } else {
        (target, py.None().into_bound(py))
    };
    helper.call1((target, spec, args, kwargs, error.into_value(py)))
}

/// Adds each gradient to its Parameter's `.grad` (setting it the first time).
fn accumulate(py: Python<'_>, params: &[Py<Parameter>], grads: &Bound<'_, PyAny>) -> PyResult<()> {
    let grads = grads.cast::<PyTuple>()?;
    for (p, g) in params.iter().zip(grads.iter()) {
        let g = g.cast::<Tensor>()?.get().cell.read()?;
        let mut p = p.bind(py).borrow_mut();
        let sum = match &p.grad {
            Some(old) => {
                let old = old.bind(py).get().cell.read()?;
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
        p.grad = Some(
            array_object(py, Cell::own(sum.clone()))?
                .cast_into::<Tensor>()?
                .unbind(),
        );
    }
    Ok(())
}

/// The Parameters an object holds: `[(path, Parameter)]`.
#[pyfunction]
#[pyo3(name = "parameters_of")]
pub fn py_parameters_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(String, Py<Parameter>)>> {
    parameters_of(obj)
}

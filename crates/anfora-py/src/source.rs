//! The Python function a compiled function (or its gradient) is made from: its parameters,
//! how a call binds to them, its typed signature, and compiling it.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use anfora_driver::{Arg, Gradient};

use crate::cache::args_of;
use crate::compiler::Entry;
use crate::tensor::Tensor;

/// A Python function, bound to an object for a method, with its typed signature.
pub(crate) struct Source {
    pub func: Py<PyAny>,
    pub bound: Option<Py<PyAny>>,
    /// `TensorSpec`s of a typed signature (every parameter annotated).
    pub specs: Option<Vec<Py<PyAny>>>,
    /// The number of parameters (after a bound `self`) when all are plain
    /// positional-or-keyword ones: a call passing that many needs no binding.
    arity: Option<usize>,
}

impl Source {
    pub fn new(
        py: Python<'_>,
        func: Py<PyAny>,
        bound: Option<Py<PyAny>>,
        specs: Option<Vec<Py<PyAny>>>,
    ) -> Source {
        let arity = arity(func.bind(py), bound.is_some());
        Source {
            func,
            bound,
            specs,
            arity,
        }
    }

    pub fn name(&self, py: Python<'_>) -> String {
        self.func
            .bind(py)
            .getattr("__qualname__")
            .and_then(|q| q.extract())
            .unwrap_or_else(|_| "<function>".into())
    }

    /// The compiler's arguments for a call: bound to the parameters and checked against the
    /// typed signature.
    pub fn call_args(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Vec<Arg>> {
        let args = self.positional(py, args, kwargs)?;
        self.check_specs(py, &args)?;
        args_of(&args)
    }

    /// The arguments of a call, one per parameter in order, bound as Python binds them
    /// (keywords, defaults, and Python's TypeError for a call that does not fit). A call
    /// passing exactly the positional parameters needs no binding.
    pub fn positional<'py>(
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

    pub fn check_specs(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<()> {
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

    pub fn param_names(&self, py: Python<'_>) -> Vec<String> {
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
    pub fn compile(
        &self,
        py: Python<'_>,
        args: &[Arg],
        grad: Option<Gradient<'_>>,
        writing: bool,
    ) -> PyResult<Entry> {
        let bound = self.bound.as_ref().map(|b| b.bind(py).clone());
        crate::compiler::compile(
            py,
            self.func.bind(py),
            bound.as_ref(),
            &self.name(py),
            args,
            grad,
            writing,
        )
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
        Ok(t) => match t.get().cell.read() {
            Ok(t) => format!("Tensor(shape={:?}, dtype={})", t.shape(), t.dtype().name()),
            Err(_) => "a Tensor".into(),
        },
        Err(_) => a
            .get_type()
            .name()
            .map(|n| format!("a '{n}' object"))
            .unwrap_or_else(|_| "an object".into()),
    }
}

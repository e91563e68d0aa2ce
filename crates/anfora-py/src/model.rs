//! Model files from Python: `Function._export` (behind `anfora.export`) writes one, and
//! `anfora.load` returns a [`LoadedModel`], a callable over the runtime's `Model` whose
//! Parameters can be read, set and saved.

use std::path::PathBuf;

use pyo3::exceptions::{PyIOError, PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use anfora_driver::ExportFormat;
use anfora_model::ResultTree;
use anfora_model::types::{OutputKind, ScalarKind};
use anfora_runtime::{Error, LoadOptions, Model};
use anfora_tensor::Tensor as RTensor;

use crate::compiler::{CompileError, Entry, with_compiler};
use crate::tensor::{Parameter, py_error, tensor_object, to_tensor};

/// Writes a compiled entry to `path` in `format` (`names`: Parameter names by ref key);
/// returns the file's size.
pub(crate) fn export_entry(
    entry: &Entry,
    path: &PathBuf,
    format: ExportFormat,
    names: &std::collections::HashMap<u64, String>,
) -> PyResult<usize> {
    let bytes = with_compiler(|c| {
        let Some(module) = c.module(entry.generation) else {
            return Err(CompileError::new_err(
                "the function was compiled before the compiler was reset; call it again, then export",
            ));
        };
        anfora_driver::export(module, &entry.compiled, format, names)
            .map_err(|f| CompileError::new_err(f.render(&module.sources)))
    })?;
    std::fs::write(path, &bytes)
        .map_err(|e| PyIOError::new_err(format!("cannot write {}: {e}", path.display())))?;
    Ok(bytes.len())
}

fn runtime_error(e: Error) -> PyErr {
    match e {
        Error::Model(m) => PyValueError::new_err(m.to_string()),
        Error::Io(m) => PyIOError::new_err(m),
        Error::Argument(m) => PyTypeError::new_err(m),
        Error::Memory(m) => PyMemoryError::new_err(m),
        Error::Raised {
            kind,
            message,
            traceback,
        } => {
            let err = py_error(&kind, message);
            Python::attach(|py| {
                let _ = err.value(py).call_method1("add_note", (traceback,));
            });
            err
        }
        Error::Plan(m) => PyValueError::new_err(m),
    }
}

/// A model loaded from a file: call it with tensors (or arrays) as the compiled function
/// was called.
#[pyclass(module = "anfora", name = "Model", frozen)]
pub struct LoadedModel {
    model: Model,
}

/// `anfora.load(path)`.
#[pyfunction]
pub fn load(path: PathBuf) -> PyResult<LoadedModel> {
    let model = Model::load(&path, &LoadOptions::default()).map_err(runtime_error)?;
    Ok(LoadedModel { model })
}

#[pymethods]
impl LoadedModel {
    #[pyo3(signature = (*args))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let n = self.model.inputs().len();
        if args.len() != n {
            return Err(PyTypeError::new_err(format!(
                "the model takes {n} inputs, {} were given",
                args.len()
            )));
        }
        let tensors = (args.iter())
            .map(|a| to_tensor(&a, None))
            .collect::<PyResult<Vec<_>>>()?;
        let model = &self.model;
        let leaves = py
            .detach(move || model.run(&tensors))
            .map_err(runtime_error)?;
        self.rebuild(py, self.model.result_tree(), &leaves)
    }

    /// The inputs: `[(name, dtype name, shape)]` (None for a dimension not fixed).
    #[getter]
    fn inputs(&self) -> Vec<(String, String, Vec<Option<usize>>)> {
        (self.model.inputs().iter())
            .map(|(n, t)| (n.to_string(), t.dtype.name().to_string(), t.shape.clone()))
            .collect()
    }

    /// The outputs, flattened: `[(name, dtype name, shape)]`.
    #[getter]
    fn outputs(&self) -> Vec<(String, String, Vec<Option<usize>>)> {
        (self.model.outputs().iter())
            .map(|o| {
                let t = o.tensor_spec();
                (o.name.clone(), t.dtype.name().to_string(), t.shape)
            })
            .collect()
    }

    /// The Parameters by name; they are the model's own, so setting one (`p.set_data(...)`)
    /// changes what the next call computes.
    fn parameters_dict(&self) -> Vec<(String, Parameter)> {
        (self.model.parameters().iter())
            .map(|p| {
                (
                    p.name().to_string(),
                    Parameter {
                        inner: p.clone(),
                        grad: None,
                    },
                )
            })
            .collect()
    }

    /// Writes the model, with the Parameters' current values, to `path`.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        self.model.save(path).map_err(runtime_error)
    }

    /// Whether a call writes Parameters (an exported training step).
    #[getter]
    fn writes_parameters(&self) -> bool {
        self.model.writes_parameters()
    }

    fn __repr__(&self) -> String {
        let ins: Vec<String> = (self.model.inputs().iter())
            .map(|(n, t)| format!("{n}: {}", t.text()))
            .collect();
        format!("Model({})", ins.join(", "))
    }
}

impl LoadedModel {
    fn rebuild<'py>(
        &self,
        py: Python<'py>,
        tree: &ResultTree,
        leaves: &[RTensor],
    ) -> PyResult<Bound<'py, PyAny>> {
        Ok(match tree {
            ResultTree::None => py.None().into_bound(py),
            ResultTree::Leaf(i) => {
                let t = leaves[*i].clone();
                match &self.model.outputs()[*i].kind {
                    OutputKind::Tensor(_) => tensor_object(py, t)?,
                    OutputKind::Scalar(k) => scalar(py, *k, &t)?,
                }
            }
            ResultTree::Tuple(items) | ResultTree::List(items) => {
                let items = (items.iter())
                    .map(|i| self.rebuild(py, i, leaves))
                    .collect::<PyResult<Vec<_>>>()?;
                if matches!(tree, ResultTree::Tuple(_)) {
                    PyTuple::new(py, items)?.into_any()
                } else {
                    PyList::new(py, items)?.into_any()
                }
            }
        })
    }
}

fn scalar<'py>(py: Python<'py>, kind: ScalarKind, t: &RTensor) -> PyResult<Bound<'py, PyAny>> {
    let item = t.item().map_err(|e| PyValueError::new_err(e.message))?;
    Ok(match (kind, item) {
        (ScalarKind::Bool, anfora_tensor::Scalar::Bool(b)) => {
            b.into_pyobject(py)?.to_owned().into_any()
        }
        (ScalarKind::Int, anfora_tensor::Scalar::Int(i)) => i.into_pyobject(py)?.into_any(),
        (ScalarKind::Float, anfora_tensor::Scalar::Float(f)) => f.into_pyobject(py)?.into_any(),
        _ => return Err(PyValueError::new_err("a scalar output of the wrong kind")),
    })
}

/// `anfora.convert`'s work: the converted model file's bytes and the report's text. Bad
/// options and calibration data are ValueErrors (unknown names TypeErrors are not: the
/// converter's message says what is accepted).
#[pyfunction]
#[pyo3(signature = (path, quantize=None, calibration=Vec::new(), method="minmax", per_tensor=false))]
pub fn convert_model<'py>(
    py: Python<'py>,
    path: PathBuf,
    quantize: Option<&str>,
    calibration: Vec<Bound<'py, PyAny>>,
    method: &str,
    per_tensor: bool,
) -> PyResult<(Bound<'py, pyo3::types::PyBytes>, String)> {
    use anfora_convert::{ConvertError, Method, Options, Quantization, convert};
    let value = |e: ConvertError| PyValueError::new_err(e.to_string());
    let quantize = quantize
        .map(Quantization::parse)
        .transpose()
        .map_err(value)?;
    let method = Method::parse(method).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let arrays = (calibration.iter())
        .map(|a| to_tensor(a, None))
        .collect::<PyResult<Vec<_>>>()?;
    let bytes = std::fs::read(&path)
        .map_err(|e| PyIOError::new_err(format!("cannot read {}: {e}", path.display())))?;
    let options = Options {
        quantize,
        method,
        per_tensor,
    };
    let (out, report) = py
        .detach(move || convert(&bytes, &options, &arrays))
        .map_err(value)?;
    Ok((pyo3::types::PyBytes::new(py, &out), report.to_string()))
}

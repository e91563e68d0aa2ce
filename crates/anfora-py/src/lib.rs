//! `anfora._anfora`, the extension module behind the `anfora` Python package: tensors and
//! Parameters (`tensor`), eager operations (`eager`), and `@jit` compiled functions
//! (`function`) with their gradients (`grad`), made from Python functions (`source`), compiled
//! by each thread's compiler (`compiler`, `host`) and cached per signature (`cache`). Python
//! hands the compiler a function's source; the compiler calls back into Python only to
//! resolve names (globals, closure cells, attributes of `self`).

mod array;
mod cache;
mod checkpoint;
mod compiler;
mod dist;
mod eager;
mod function;
mod grad;
mod host;
mod model;
mod pycall;
mod source;
mod tensor;

use pyo3::prelude::*;

use tensor::{Parameter, PyDType, Tensor, attr_name, dtype_object, to_tensor};

/// A call argument compiled for its type rather than its value: `f(anfora.mutable(3))`
/// compiles once for every int (Python numbers are otherwise compile-time constants).
#[pyclass(module = "anfora", name = "mutable", frozen)]
pub struct Mutable {
    pub value: Py<PyAny>,
}

#[pymethods]
impl Mutable {
    #[new]
    fn new(value: Py<PyAny>) -> Self {
        Mutable { value }
    }

    #[getter]
    fn value(&self, py: Python<'_>) -> Py<PyAny> {
        self.value.clone_ref(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("mutable({})", self.value.bind(py).repr()?))
    }
}

/// `anfora.tensor(data, dtype=None, device=None)`: a tensor from a numpy array, a Tensor, or
/// nested lists of numbers (Python floats become float32, as in `ops.tensor`), on `device`
/// ("cpu", "cuda:N"; the CPU when omitted).
#[pyfunction]
#[pyo3(name = "tensor", signature = (data, dtype=None, device=None))]
fn make_tensor<'py>(
    data: &Bound<'py, PyAny>,
    dtype: Option<&PyDType>,
    device: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut t = to_tensor(data, dtype.map(|d| d.inner))?;
    if let Some(device) = device {
        t = tensor::moved_to(&t, device)?;
    }
    tensor::array_object(data.py(), array::Cell::own(t))
}

/// `anfora.set_seed(seed)`: restarts this thread's random generator (the one eager and
/// compiled random operations draw from), as the compiled `anfora.set_seed` does.
#[pyfunction]
fn set_seed(seed: i64) -> PyResult<()> {
    if seed < 0 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "set_seed: the seed must be non-negative",
        ));
    }
    anfora_ops::state::set_seed(seed as u64);
    Ok(())
}

#[pymodule]
fn _anfora(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    #[cfg(feature = "cuda")]
    anfora_cuda::install();
    m.add_class::<Tensor>()?;
    m.add_class::<tensor::TensorBuffer>()?;
    m.add_class::<PyDType>()?;
    m.add_class::<Parameter>()?;
    m.add_class::<Mutable>()?;
    m.add_class::<function::JitFunction>()?;
    m.add_class::<grad::GradFunction>()?;
    m.add_class::<function::Lowered>()?;
    m.add_class::<model::LoadedModel>()?;
    m.add_function(wrap_pyfunction!(model::load, m)?)?;
    m.add_function(wrap_pyfunction!(model::convert_model, m)?)?;
    m.add("CompileError", py.get_type::<compiler::CompileError>())?;
    for d in anfora_tensor::DType::ALL {
        m.add(attr_name(d), dtype_object(d))?;
    }
    m.add_function(wrap_pyfunction!(make_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(set_seed, m)?)?;
    m.add_function(wrap_pyfunction!(function::jit, m)?)?;
    m.add_function(wrap_pyfunction!(compiler::set_context, m)?)?;
    m.add_function(wrap_pyfunction!(compiler::devices, m)?)?;
    m.add_function(wrap_pyfunction!(compiler::get_device, m)?)?;
    m.add_function(wrap_pyfunction!(compiler::forget_parsed_functions, m)?)?;
    m.add_function(wrap_pyfunction!(eager::call_op, m)?)?;
    m.add_function(wrap_pyfunction!(dist::dist_init, m)?)?;
    m.add_function(wrap_pyfunction!(dist::dist_barrier, m)?)?;
    m.add_function(wrap_pyfunction!(dist::dist_finalize, m)?)?;
    m.add_function(wrap_pyfunction!(dist::dist_abort, m)?)?;
    m.add_function(wrap_pyfunction!(eager::op_names, m)?)?;
    m.add_function(wrap_pyfunction!(eager::op_signature, m)?)?;
    m.add_function(wrap_pyfunction!(grad::py_parameters_of, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint::save_safetensors, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint::load_safetensors, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint::load_safetensors_metadata, m)?)?;
    // Kernels run on rayon's pool with the calling thread as one of its workers.
    anfora_tensor::run_kernels_on_this_thread();
    Ok(())
}

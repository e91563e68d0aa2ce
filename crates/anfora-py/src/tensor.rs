//! `anfora.Tensor`, `anfora.Parameter`, the dtypes, and the conversions between Python objects
//! and the VM's values.

use std::rc::Rc;

use anfora_ir::{ParamRef, Prim};
use anfora_ops::Value;
use anfora_tensor::{DType, Tensor as RTensor};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};

use pyo3::exceptions::{
    PyIndexError, PyMemoryError, PyOverflowError, PyRuntimeError, PyTypeError, PyValueError,
    PyZeroDivisionError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyFloat, PyInt, PyList, PySlice, PyString, PyTuple};

use crate::array::{Cell, Relayout, ViewOf, Writable};
use crate::pycall::{Args, Kwargs, Returned};

/// A Python exception of the class the VM names (`ValueError`, ...).
pub fn py_error(kind: &str, message: String) -> PyErr {
    match kind {
        "TypeError" => PyTypeError::new_err(message),
        "ValueError" => PyValueError::new_err(message),
        "IndexError" => PyIndexError::new_err(message),
        "ZeroDivisionError" => PyZeroDivisionError::new_err(message),
        "OverflowError" => PyOverflowError::new_err(message),
        "MemoryError" => PyMemoryError::new_err(message),
        "RecursionError" => pyo3::exceptions::PyRecursionError::new_err(message),
        "AssertionError" => pyo3::exceptions::PyAssertionError::new_err(message),
        // The VM's message is the key's repr, which Python's KeyError shows of its argument.
        "KeyError" => pyo3::exceptions::PyKeyError::new_err(key_of_repr(message)),
        "AttributeError" => pyo3::exceptions::PyAttributeError::new_err(message),
        "NotImplementedError" => pyo3::exceptions::PyNotImplementedError::new_err(message),
        "UnboundLocalError" => pyo3::exceptions::PyUnboundLocalError::new_err(message),
        "NameError" => pyo3::exceptions::PyNameError::new_err(message),
        "StopIteration" => pyo3::exceptions::PyStopIteration::new_err(message),
        "LookupError" => pyo3::exceptions::PyLookupError::new_err(message),
        "ArithmeticError" => pyo3::exceptions::PyArithmeticError::new_err(message),
        "OSError" => pyo3::exceptions::PyOSError::new_err(message),
        "SystemError" => pyo3::exceptions::PySystemError::new_err(message),
        "RuntimeError" => PyRuntimeError::new_err(message),
        _ => PyRuntimeError::new_err(format!("{kind}: {message}")),
    }
}

/// The string a plain quoted repr (`'beta'`) stands for; anything else as it is.
fn key_of_repr(repr: String) -> String {
    let quoted = |q: char| repr.len() >= 2 && repr.starts_with(q) && repr.ends_with(q);
    if (quoted('\'') || quoted('"')) && !repr.contains('\\') {
        return repr[1..repr.len() - 1].to_string();
    }
    repr
}

pub fn vm_error(e: anfora_ops::pynum::PyErr) -> PyErr {
    py_error(e.0, e.1)
}

/// An n-dimensional array with numpy's semantics, computed by anfora's kernels. A plain
/// `Tensor` is what numpy gives as a scalar (the 0-d result of an operation): it has no
/// in-place operators. Arrays are [`ArrayTensor`]s (`crate::array` says how they update).
#[pyclass(module = "anfora", name = "Tensor", frozen, subclass)]
pub struct Tensor {
    pub cell: Cell,
}

/// numpy's array: a `Tensor` updated in place by `x op= v`, `x[i] = v` and `x[i] op= v`.
#[pyclass(module = "anfora", name = "Tensor", extends = Tensor, frozen)]
pub struct ArrayTensor;

/// The Python object for a computed tensor: a scalar if it is 0-d (as numpy's operations
/// return), else an array.
pub fn tensor_object(py: Python<'_>, t: RTensor) -> PyResult<Bound<'_, PyAny>> {
    if t.shape().is_empty() {
        Ok(Bound::new(py, Tensor { cell: Cell::own(t) })?.into_any())
    } else {
        array_object(py, Cell::own(t))
    }
}

/// An array (also when 0-d, as numpy's constructors and views make).
pub fn array_object(py: Python<'_>, cell: Cell) -> PyResult<Bound<'_, PyAny>> {
    let init = pyo3::PyClassInitializer::from(Tensor { cell }).add_subclass(ArrayTensor);
    Ok(Bound::new(py, init)?.into_any())
}

/// A tensor element type: `anfora.float32`, `anfora.int64`, ...
#[pyclass(module = "anfora", name = "dtype", frozen)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyDType {
    pub inner: DType,
}

#[pymethods]
impl PyDType {
    fn __repr__(&self) -> String {
        format!("anfora.{}", attr_name(self.inner))
    }

    /// Equal to the same dtype, or to its name (`"float32"`) or attribute name (`"bool_"`),
    /// as in compiled code.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        if let Ok(d) = other.cast::<PyDType>() {
            return d.get().inner == self.inner;
        }
        match other.extract::<String>() {
            Ok(name) => name == self.inner.name() || name == attr_name(self.inner),
            Err(_) => false,
        }
    }

    fn __ne__(&self, other: &Bound<'_, PyAny>) -> bool {
        !self.__eq__(other)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.inner.name().hash(&mut h);
        h.finish()
    }

    /// numpy's name, as `str()` of a dtype is in compiled code.
    fn __str__(&self) -> &'static str {
        self.inner.name()
    }

    /// numpy's name for it (`float32`).
    #[getter]
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    #[getter]
    fn itemsize(&self) -> usize {
        self.inner.size_of()
    }

    #[getter]
    fn is_floating_point(&self) -> bool {
        self.inner.is_float()
    }
}

/// `t` on the device named `device`: a ValueError for a name that is not a device or a device
/// without a backend, a TypeError for a dtype the device cannot hold.
pub fn moved_to(t: &RTensor, device: &str) -> PyResult<RTensor> {
    let d = anfora_tensor::Device::parse(device).map_err(|e| PyValueError::new_err(e.message))?;
    t.to_device(d)
        .map_err(|e| crate::tensor::py_error(e.kind.python_name(), e.message))
}

/// The attribute of the `anfora` module naming `d` (`float32`, ..., `bool_`).
pub fn attr_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "bool_",
        other => other.name(),
    }
}

pub fn dtype_object(d: DType) -> PyDType {
    PyDType { inner: d }
}

/// The array attributes and numeric operators, shared by `Tensor` and `Parameter` (which
/// computes on its current value, `current()`): each operator runs the VM's primitive, so eager
/// results are the compiled ones. Wraps the class's `#[pymethods]` block (a class has one).
macro_rules! tensor_pymethods {
    (impl $ty:ident { $($body:tt)* }) => {
        #[pymethods]
        impl $ty {
            $($body)*

            #[getter]
            fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
                PyTuple::new(py, self.current()?.shape())
            }
            #[getter]
            fn dtype(&self) -> PyResult<PyDType> {
                Ok(dtype_object(self.current()?.dtype()))
            }
            /// Where the elements are: "cpu" or "cuda:N".
            #[getter]
            fn device(&self) -> PyResult<String> {
                Ok(self.current()?.device().to_string())
            }
            /// This tensor on `device` ("cpu", "cuda:N"): itself when it is there, else a
            /// copy, as PyTorch's `Tensor.to(device)`.
            fn to<'py>(&self, py: Python<'py>, device: &str) -> PyResult<Bound<'py, PyAny>> {
                let t = moved_to(&self.current()?, device)?;
                tensor_object(py, t)
            }
            #[getter]
            fn ndim(&self) -> PyResult<usize> {
                Ok(self.current()?.shape().len())
            }
            /// The number of elements.
            #[getter]
            fn size(&self) -> PyResult<usize> {
                Ok(self.current()?.shape().iter().product())
            }
            fn numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                to_numpy(py, &self.current()?)
            }
            /// MindSpore's name for `numpy()`: a numpy array of the values (a copy to the
            /// host for a device tensor).
            fn asnumpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                to_numpy(py, &self.current()?)
            }
            /// MindSpore's `init_data()`: the tensor itself (anfora draws an initializer's
            /// values when the tensor is made; MindSpore draws them here).
            fn init_data<'py>(slf: Bound<'py, Self>) -> Bound<'py, Self> {
                slf
            }
            /// Above numpy's own: `np_scalar - t` and `np_array * t` defer to the reflected
            /// operators (a Tensor, as in compiled code) instead of converting it to an array.
            #[classattr]
            fn __array_priority__() -> f64 {
                1000.0
            }
            #[pyo3(signature = (dtype=None, copy=None))]
            fn __array__<'py>(
                &self,
                py: Python<'py>,
                dtype: Option<&Bound<'py, PyAny>>,
                copy: Option<bool>,
            ) -> PyResult<Bound<'py, PyAny>> {
                array(py, &self.current()?, dtype, copy)
            }

            fn __add__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::Add, slf.as_any(), o)?)
            }
            fn __radd__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::Add, o, slf.as_any())?)
            }
            fn __sub__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::Sub, slf.as_any(), o)?)
            }
            fn __rsub__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::Sub, o, slf.as_any())?)
            }
            fn __mul__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::Mul, slf.as_any(), o)?)
            }
            fn __rmul__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::Mul, o, slf.as_any())?)
            }
            fn __truediv__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::Div, slf.as_any(), o)?)
            }
            fn __rtruediv__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::Div, o, slf.as_any())?)
            }
            fn __floordiv__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::FloorDiv, slf.as_any(), o)?)
            }
            fn __rfloordiv__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::FloorDiv, o, slf.as_any())?)
            }
            fn __mod__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::Mod, slf.as_any(), o)?)
            }
            fn __rmod__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::Mod, o, slf.as_any())?)
            }
            fn __matmul__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::MatMul, slf.as_any(), o)?)
            }
            fn __rmatmul__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::MatMul, o, slf.as_any())?)
            }
            fn __and__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::BitAnd, slf.as_any(), o)?)
            }
            fn __rand__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::BitAnd, o, slf.as_any())?)
            }
            fn __or__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::BitOr, slf.as_any(), o)?)
            }
            fn __ror__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::BitOr, o, slf.as_any())?)
            }
            fn __xor__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::BitXor, slf.as_any(), o)?)
            }
            fn __rxor__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::BitXor, o, slf.as_any())?)
            }
            fn __lshift__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::LShift, slf.as_any(), o)?)
            }
            fn __rlshift__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::LShift, o, slf.as_any())?)
            }
            fn __rshift__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::RShift, slf.as_any(), o)?)
            }
            fn __rrshift__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &binary(Prim::RShift, o, slf.as_any())?)
            }
            fn __pow__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>, modulo: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                no_modulus(modulo)?;
                from_value(slf.py(), &binary(Prim::Pow, slf.as_any(), o)?)
            }
            fn __rpow__<'py>(slf: &Bound<'py, Self>, o: &Bound<'py, PyAny>, modulo: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                no_modulus(modulo)?;
                from_value(slf.py(), &binary(Prim::Pow, o, slf.as_any())?)
            }
            fn __neg__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &unary(Prim::Neg, slf.as_any())?)
            }
            fn __pos__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &unary(Prim::Pos, slf.as_any())?)
            }
            fn __abs__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &unary(Prim::Abs, slf.as_any())?)
            }
            fn __invert__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
                from_value(slf.py(), &unary(Prim::Invert, slf.as_any())?)
            }
        }
    };
}

/// Adds numpy's in-place operators to the `#[pymethods]` block that `$then!` makes: `x op= v`
/// is the primitive of `x op v`, cast back (`update_in_place`), and `x[i] = v` is `SetItem`;
/// both write through the class's `Self::writable`.
macro_rules! with_in_place_methods {
    ($then:ident! { impl $ty:ident { $($body:tt)* } }) => {
        $then! { impl $ty {
            $($body)*
            fn __iadd__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<()> {
                update_in_place(&Self::writable(slf), Prim::InplaceAdd, v)
            }
            fn __isub__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<()> {
                update_in_place(&Self::writable(slf), Prim::Sub, v)
            }
            fn __imul__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<()> {
                update_in_place(&Self::writable(slf), Prim::InplaceMul, v)
            }
            fn __itruediv__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<()> {
                update_in_place(&Self::writable(slf), Prim::Div, v)
            }
            fn __ifloordiv__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<()> {
                update_in_place(&Self::writable(slf), Prim::FloorDiv, v)
            }
            fn __imod__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<()> {
                update_in_place(&Self::writable(slf), Prim::Mod, v)
            }
            fn __imatmul__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<()> {
                update_in_place(&Self::writable(slf), Prim::MatMul, v)
            }
            fn __iand__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<()> {
                update_in_place(&Self::writable(slf), Prim::BitAnd, v)
            }
            fn __ior__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<()> {
                update_in_place(&Self::writable(slf), Prim::BitOr, v)
            }
            fn __ixor__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<()> {
                update_in_place(&Self::writable(slf), Prim::BitXor, v)
            }
            fn __ilshift__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<()> {
                update_in_place(&Self::writable(slf), Prim::LShift, v)
            }
            fn __irshift__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<()> {
                update_in_place(&Self::writable(slf), Prim::RShift, v)
            }
            fn __ipow__(
                slf: &Bound<'_, Self>,
                v: &Bound<'_, PyAny>,
                modulo: &Bound<'_, PyAny>,
            ) -> PyResult<()> {
                no_modulus(modulo)?;
                update_in_place(&Self::writable(slf), Prim::Pow, v)
            }
            fn __setitem__(
                slf: &Bound<'_, Self>,
                index: &Bound<'_, PyAny>,
                v: &Bound<'_, PyAny>,
            ) -> PyResult<()> {
                set_item(&Self::writable(slf), index, v)
            }
        } }
    };
}

/// A `#[pymethods]` block of exactly `$body`.
macro_rules! pymethods_of {
    (impl $ty:ident { $($body:tt)* }) => {
        #[pymethods]
        #[allow(unsafe_op_in_unsafe_fn)]
        impl $ty {
            $($body)*
        }
    };
}

fn no_modulus(modulo: &Bound<'_, PyAny>) -> PyResult<()> {
    if modulo.is_none() {
        Ok(())
    } else {
        Err(PyTypeError::new_err(
            "pow() with a modulus is not supported for tensors",
        ))
    }
}

/// A tensor method bound to its tensor or Parameter (`t.sum`), run by the VM as compiled code
/// runs it, on the object's value when it is called.
#[pyclass(module = "anfora", name = "TensorMethod", frozen)]
pub struct TensorMethod {
    owner: Py<PyAny>,
    method: anfora_ops::value::Method,
}

#[pymethods]
impl TensorMethod {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(&self, args: &Args<'py>, kwargs: Option<&Kwargs<'py>>) -> Returned<'py> {
        let py = args.py();
        let args = args
            .iter()
            .map(|a| to_value(&a).map(loaded))
            .collect::<PyResult<Vec<_>>>()?;
        let mut kw = Vec::new();
        for (k, v) in kwargs.into_iter().flatten() {
            kw.push((k.extract::<String>()?, loaded(to_value(&v)?)));
        }
        let owner = self.owner.bind(py);
        let Value::Tensor(tensor) = &loaded(to_value(owner)?) else {
            return Err(PyTypeError::new_err("a tensor method of a non-tensor"));
        };
        let relayout = Relayout::of_method(self.method);
        let v = anfora_ops::python::call_method(self.method, tensor, args.clone(), kw)
            .map_err(vm_error)?;
        if self.method.is_view() {
            let how = relayout.map(|r| (r, &args[..]));
            derived_object(owner, self.method.name(), how, v)
        } else {
            from_value(py, &v)
        }
    }

    fn __repr__(&self) -> String {
        format!("<bound method Tensor.{}>", self.method.name())
    }
}

/// The attribute `name` of a tensor that its class does not define: a method the VM
/// implements for compiled code (`sum`, `mean`, `max`, `min`, `prod`, `reshape`,
/// `transpose`, `permute`, `astype`, `item`).
fn tensor_method(owner: &Bound<'_, PyAny>, name: &str, class: &str) -> PyResult<TensorMethod> {
    match anfora_ops::value::Method::from_name(name) {
        Some(method) => Ok(TensorMethod {
            owner: owner.clone().unbind(),
            method,
        }),
        None => Err(pyo3::exceptions::PyAttributeError::new_err(format!(
            "'{class}' object has no attribute '{name}'"
        ))),
    }
}

/// A Parameter operand computes with its current value.
fn loaded(v: Value) -> Value {
    match &v {
        Value::Ref(p) => Value::Tensor(p.get()),
        _ => v,
    }
}

/// A trainable tensor, held by reference: compiled code reads it with `Load` and updates it
/// in place through the side-effect chain. `grad` accumulates gradients from `.grad` calls.
#[pyclass(module = "anfora", name = "Parameter")]
pub struct Parameter {
    pub inner: ParamRef,
    #[pyo3(get, set)]
    pub grad: Option<Py<Tensor>>,
}

impl Parameter {
    /// The value the shared methods of `tensor_pymethods!` compute on.
    fn current(&self) -> PyResult<RTensor> {
        Ok(self.inner.get())
    }

    /// In-place updates write the Parameter.
    fn writable(slf: &Bound<'_, Self>) -> Writable {
        Writable::Parameter(slf.clone().unbind())
    }
}

with_in_place_methods!(tensor_pymethods! {
impl Parameter {
    #[new]
    #[pyo3(signature = (data, name=None, requires_grad=true))]
    fn new(data: &Bound<'_, PyAny>, name: Option<&str>, requires_grad: bool) -> PyResult<Self> {
        let t = to_tensor(data, None)?;
        Ok(Parameter {
            inner: ParamRef::new(name, t, requires_grad),
            grad: None,
        })
    }

    #[getter]
    fn name(&self) -> String {
        self.inner.name().to_string()
    }

    /// Renames the Parameter (MindSpore's `param.name = ...`); it stays the same Parameter.
    #[setter]
    fn set_name(&self, name: &str) -> PyResult<()> {
        if name.is_empty() {
            return Err(PyValueError::new_err("a Parameter's name must not be empty"));
        }
        self.inner.set_name(name);
        Ok(())
    }

    #[getter]
    fn requires_grad(&self) -> bool {
        self.inner.requires_grad()
    }

    /// The current value, as an (immutable) Tensor.
    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        array_object(py, Cell::own(self.inner.get()))
    }

    /// Replaces the value; the dtype and shape must stay the same.
    fn set_data(&self, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let t = to_tensor(data, Some(self.inner.dtype()))?;
        if t.shape() != self.inner.shape() {
            return Err(PyValueError::new_err(format!(
                "Parameter '{}' has shape {:?}; cannot set a value of shape {:?}",
                self.inner.name(),
                self.inner.shape(),
                t.shape()
            )));
        }
        self.inner.set(t);
        Ok(())
    }

    /// `p.assign(v)`: writes `v` (broadcast and cast to the Parameter's shape and dtype).
    fn assign<'py>(slf: &Bound<'py, Self>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        from_value(slf.py(), &write(Prim::Assign, slf, value)?)
    }

    /// `p.assign_add(v)`: `p += v` in place.
    fn assign_add<'py>(slf: &Bound<'py, Self>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        from_value(slf.py(), &write(Prim::AssignAdd, slf, value)?)
    }

    /// `p.assign_sub(v)`: `p -= v` in place.
    fn assign_sub<'py>(slf: &Bound<'py, Self>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        from_value(slf.py(), &write(Prim::AssignSub, slf, value)?)
    }

    /// The methods of its value (`p.sum()`, `p.reshape(...)`), on the current value.
    fn __getattr__(slf: &Bound<'_, Self>, name: &str) -> PyResult<TensorMethod> {
        tensor_method(slf.as_any(), name, "anfora.Parameter")
    }

    /// `str()` of its current value, as `print(p)` shows it in compiled code.
    fn __str__(&self) -> String {
        self.inner.get().to_str()
    }

    /// numpy's indexing: a basic index is a view that reads and writes the Parameter.
    fn __getitem__<'py>(
        slf: &Bound<'py, Self>,
        index: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        item(slf.borrow().current()?, Some(Parameter::writable(slf)), index)
    }

    fn __repr__(&self) -> String {
        let body = self.inner.get().repr();
        format!(
            "Parameter(name='{}', {})",
            self.inner.name(),
            body.replace('\n', "\n ")
        )
    }
}
});

fn dtype_of_numpy(name: &str) -> Option<DType> {
    match name {
        "float32" => Some(DType::F32),
        "float64" => Some(DType::F64),
        "float16" => Some(DType::F16),
        "bfloat16" => Some(DType::BF16),
        "int32" => Some(DType::I32),
        "int64" => Some(DType::I64),
        "int8" => Some(DType::I8),
        "uint8" => Some(DType::U8),
        "bool" => Some(DType::Bool),
        _ => None,
    }
}

/// A copy of a numpy array as a tensor (any layout; dtype kept).
fn from_numpy(a: &Bound<'_, PyUntypedArray>) -> PyResult<RTensor> {
    let dtype_name = a.dtype().str()?.to_string();
    let Some(dtype) = dtype_of_numpy(&dtype_name) else {
        return Err(PyTypeError::new_err(format!(
            "anfora tensors hold float16, bfloat16, float32, float64, int8, uint8, int32, int64 or bool; this array is {dtype_name}"
        )));
    };
    let shape: Vec<usize> = a.shape().to_vec();
    fn data<T: numpy::Element + Copy>(a: &Bound<'_, PyUntypedArray>) -> PyResult<Vec<T>> {
        let typed = a.cast::<PyArrayDyn<T>>()?;
        let ro = typed.readonly();
        // numpy calls Fortran-ordered arrays contiguous too; only C order is copied flat.
        let view = ro.as_array();
        Ok(match view.as_slice() {
            Some(s) => s.to_vec(),
            None => view.iter().copied().collect(),
        })
    }
    let t = match dtype {
        DType::F32 => RTensor::from_f32(data(a)?, &shape),
        DType::F64 => RTensor::from_f64(data(a)?, &shape),
        DType::I32 => RTensor::from_i32(data(a)?, &shape),
        DType::I64 => RTensor::from_i64(data(a)?, &shape),
        DType::Bool => RTensor::from_bool(data(a)?, &shape),
        DType::I8 => RTensor::from_i8(data(a)?, &shape),
        DType::U8 => RTensor::from_u8(data(a)?, &shape),
        // 16-bit floats travel as their bits.
        DType::F16 | DType::BF16 => {
            let bits = a.call_method1("view", ("uint16",))?;
            RTensor::from_half_bits(&data(bits.cast::<PyUntypedArray>()?)?, &shape, dtype)
        }
    };
    t.map_err(|e| py_error(e.kind.python_name(), e.message))
}

/// Keeps a tensor's buffer alive while numpy arrays view it (their `base`).
#[pyclass(module = "anfora", name = "_TensorBuffer", frozen)]
pub struct TensorBuffer(#[allow(dead_code)] RTensor);

/// A read-only numpy array viewing the tensor's buffer (no copy). Tensors are immutable and
/// the kernels write into a buffer only when nothing else holds it, which the view's owner
/// (a `TensorBuffer` holding a clone of the tensor) rules out for as long as the view lives.
pub fn to_numpy<'py>(py: Python<'py>, t: &RTensor) -> PyResult<Bound<'py, PyAny>> {
    fn view<'py, T: numpy::Element>(
        data: Option<&[T]>,
        shape: &[usize],
        owner: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let data = data.unwrap_or(&[]);
        let v = numpy::ndarray::ArrayViewD::from_shape(numpy::ndarray::IxDyn(shape), data)
            .map_err(|e| PyRuntimeError::new_err(format!("tensor layout: {e}")))?;
        // SAFETY: `owner` keeps the buffer alive and unwritten (see above); the array is
        // made read-only, so numpy never writes into it either.
        let a = unsafe { PyArrayDyn::borrow_from_array(&v, owner) };
        unsafe { (*a.as_array_ptr()).fields.flags &= !numpy::npyffi::flags::NPY_ARRAY_WRITEABLE };
        Ok(a.into_any())
    }
    let owner = Bound::new(py, TensorBuffer(t.clone()))?.into_any();
    let shape = t.shape();
    match t.dtype() {
        DType::F32 => view(t.as_f32_slice(), shape, owner),
        DType::F64 => view(t.as_f64_slice(), shape, owner),
        DType::I32 => view(t.as_i32_slice(), shape, owner),
        DType::I64 => view(t.as_i64_slice(), shape, owner),
        DType::Bool => view(t.as_bool_slice(), shape, owner),
        DType::I8 => view(t.as_i8_slice(), shape, owner),
        DType::U8 => view(t.as_u8_slice(), shape, owner),
        DType::F16 => view(t.as_half_bits(), shape, owner)?.call_method1("view", ("float16",)),
        DType::BF16 => {
            let bf16 = py.import("ml_dtypes").map_err(|_| {
                PyTypeError::new_err(
                    "numpy has no bfloat16 (install ml_dtypes for it, or convert with \
                     t.astype(anfora.float32))",
                )
            })?;
            view(t.as_half_bits(), shape, owner)?.call_method1("view", (bf16.getattr("bfloat16")?,))
        }
    }
}

/// numpy's `__array__` protocol: the read-only view of `to_numpy` unless `copy=True` or a
/// different `dtype` asks for a (writable) copy.
fn array<'py>(
    py: Python<'py>,
    t: &RTensor,
    dtype: Option<&Bound<'py, PyAny>>,
    copy: Option<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    let a = to_numpy(py, t)?;
    match (dtype, copy) {
        (Some(d), _) => {
            let kw = pyo3::types::PyDict::new(py);
            kw.set_item("copy", copy == Some(true))?;
            a.call_method("astype", (d,), Some(&kw))
        }
        (None, Some(true)) => a.call_method0("copy"),
        (None, _) => Ok(a),
    }
}

/// Converts `obj` to a tensor: a Tensor, Parameter, numpy array, or nested lists/tuples of
/// numbers (through numpy, so the dtype rules are numpy's, with Python floats as float32
/// unless `dtype` says otherwise).
pub fn to_tensor(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<RTensor> {
    let t = if let Ok(t) = obj.cast::<Tensor>() {
        t.get().cell.read()?
    } else if let Ok(p) = obj.cast::<Parameter>() {
        p.borrow().inner.get()
    } else if let Ok(a) = obj.cast::<PyUntypedArray>() {
        from_numpy(a)?
    } else {
        let py = obj.py();
        let np = py.import("numpy")?;
        // A numpy scalar keeps its dtype, as a 0-d array does: np.float64(1.5) (a subclass
        // of Python's float) is a float64 tensor.
        let numpy_scalar = obj.is_instance(&np.getattr("generic")?)?;
        let a = np.call_method1("asarray", (obj,))?;
        let a = match (dtype, a.getattr("dtype")?.str()?.to_string().as_str()) {
            // Python floats are float32 tensors, as in `ops.tensor`.
            (None, "float64") if !numpy_scalar => a.call_method1("astype", ("float32",))?,
            _ => a,
        };
        from_numpy(a.cast::<PyUntypedArray>()?)?
    };
    Ok(match dtype {
        Some(d) if d != t.dtype() => t.cast(d),
        _ => t,
    })
}

/// The VM value of a Python object passed to compiled code or an eager op.
pub fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    to_value_nested(obj, 0)
}

/// Deepest nesting of tuples and lists passed to compiled code (a list holding itself would
/// otherwise recurse without end).
pub const MAX_NESTING: usize = 100;

fn to_value_nested(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if let Ok(t) = obj.cast::<Tensor>() {
        return Ok(Value::Tensor(t.get().cell.read()?));
    }
    if obj.is_none() {
        return Ok(Value::None);
    }
    if obj.is(pyo3::types::PyEllipsis::get(obj.py())) {
        return Ok(Value::Ellipsis);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.cast::<PyInt>().is_ok() {
        return match obj.extract::<i64>() {
            Ok(i) => Ok(Value::Int(i)),
            Err(_) => Err(PyOverflowError::new_err(
                "Python int too large for anfora (compiled ints are 64-bit)",
            )),
        };
    }
    // np.float64 subclasses float, but it is a numpy scalar (a 0-d float64 array to numpy's
    // promotion, not a weak Python float): it takes the numpy scalar path below.
    if let Ok(f) = obj.cast::<PyFloat>()
        && !obj.hasattr("dtype")?
    {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::Str(s.to_str()?.into()));
    }
    if (obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyList>()) && depth >= MAX_NESTING {
        return Err(PyValueError::new_err(format!(
            "tuples and lists nested more than {MAX_NESTING} deep (does a list hold itself?)"
        )));
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        let items = t
            .iter()
            .map(|x| to_value_nested(&x, depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Value::tuple(items));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        let items = l
            .iter()
            .map(|x| to_value_nested(&x, depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Value::List(Rc::from(items)));
    }
    if let Ok(d) = obj.cast::<pyo3::types::PyDict>() {
        if depth >= MAX_NESTING {
            return Err(PyValueError::new_err(format!(
                "dicts nested more than {MAX_NESTING} deep (does a dict hold itself?)"
            )));
        }
        let mut items = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(k) = k.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "anfora passes dicts with string keys only, not {} keys",
                    k.get_type().name()?
                )));
            };
            items.push((k.to_str()?.into(), to_value_nested(&v, depth + 1)?));
        }
        return Ok(Value::Dict(Rc::new(anfora_ops::value::Dict::from_items(
            items,
        ))));
    }
    if let Ok(p) = obj.cast::<Parameter>() {
        return Ok(Value::Ref(p.borrow().inner.clone()));
    }
    if let Ok(d) = obj.cast::<PyDType>() {
        return Ok(Value::DType(d.get().inner));
    }
    if let Ok(a) = obj.cast::<PyUntypedArray>() {
        return Ok(Value::Tensor(from_numpy(a)?));
    }
    if obj.cast::<PyEllipsis>().is_ok() {
        return Ok(Value::Ellipsis);
    }
    if let Ok(s) = obj.cast::<PySlice>() {
        let part = |name: &str| -> PyResult<Option<i64>> {
            let v = s.getattr(name)?;
            if v.is_none() {
                Ok(None)
            } else {
                v.extract().map(Some)
            }
        };
        return Ok(Value::Slice(Rc::new(anfora_ops::value::Slice {
            start: part("start")?,
            stop: part("stop")?,
            step: part("step")?,
        })));
    }
    if let Ok(name) = obj.getattr("__anfora_op__")
        && let Ok(name) = name.extract::<String>()
        && let Some(p) = Prim::op(&name)
    {
        return Ok(Value::Prim(p));
    }
    // numpy scalars (np.float32(1.5)) are 0-d arrays.
    if obj.hasattr("dtype")? && obj.hasattr("shape")? {
        let py = obj.py();
        let a = py.import("numpy")?.call_method1("asarray", (obj,))?;
        if let Ok(a) = a.cast::<PyUntypedArray>() {
            return Ok(Value::Tensor(from_numpy(a)?));
        }
    }
    Err(PyTypeError::new_err(format!(
        "anfora cannot pass a '{}' object to compiled code or an operation; pass tensors, numpy arrays, numbers, strings, tuples, lists, dicts with string keys or Parameters",
        obj.get_type().name()?
    )))
}

/// The Python object for a value a compiled function or eager op returned.
pub fn from_value<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    let objects =
        |xs: &[Value]| -> PyResult<Vec<_>> { xs.iter().map(|x| from_value(py, x)).collect() };
    Ok(match v {
        Value::None => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => f.into_pyobject(py)?.into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::Tuple(xs) => PyTuple::new(py, objects(xs)?)?.into_any(),
        Value::List(xs) => PyList::new(py, objects(xs)?)?.into_any(),
        Value::Tensor(t) => tensor_object(py, t.clone())?,
        Value::DType(d) => Bound::new(py, dtype_object(*d))?.into_any(),
        Value::Ref(p) => Bound::new(
            py,
            Parameter {
                inner: p.clone(),
                grad: None,
            },
        )?
        .into_any(),
        Value::Ellipsis => py.Ellipsis().into_bound(py),
        Value::Dict(d) => {
            let out = pyo3::types::PyDict::new(py);
            for (k, v) in &d.items {
                out.set_item(PyString::new(py, k), from_value(py, v)?)?;
            }
            out.into_any()
        }
        other => {
            return Err(PyTypeError::new_err(format!(
                "a compiled function returned a {} value, which cannot leave compiled code; return tensors, numbers, strings, tuples or lists",
                other.type_name()
            )));
        }
    })
}

impl Tensor {
    /// The value the shared methods of `tensor_pymethods!` compute on.
    fn current(&self) -> PyResult<RTensor> {
        self.cell.read()
    }

    /// `float(t)` / `int(t)` as compiled code computes them (one element, Python's rules).
    fn convert(&self, p: Prim) -> PyResult<Value> {
        let t = Value::Tensor(self.current()?);
        anfora_ops::call::call_prim(p, &[t], &mut std::io::sink()).map_err(vm_error)
    }
}

/// An eager Parameter write (`Assign`, `AssignAdd`, `AssignSub`), as `anfora.ops.assign`.
fn write(p: Prim, param: &Bound<'_, Parameter>, value: &Bound<'_, PyAny>) -> PyResult<Value> {
    let args = vec![
        Value::Ref(param.borrow().inner.clone()),
        loaded(to_value(value)?),
    ];
    let bound = anfora_ops::call::bind_prim(p, args, None).map_err(vm_error)?;
    anfora_ops::call::call_prim(p, &bound, &mut std::io::sink()).map_err(vm_error)
}

fn binary(p: Prim, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Value> {
    let (a, b) = (loaded(to_value(a)?), loaded(to_value(b)?));
    anfora_ops::call::call_prim(p, &[a, b], &mut std::io::sink()).map_err(vm_error)
}

fn unary(p: Prim, a: &Bound<'_, PyAny>) -> PyResult<Value> {
    let a = loaded(to_value(a)?);
    anfora_ops::call::call_prim(p, &[a], &mut std::io::sink()).map_err(vm_error)
}

tensor_pymethods! {
impl Tensor {
    /// The transpose (axes reversed), as numpy's `.T`: a view of an array.
    #[getter(T)]
    fn transposed<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let t = slf
            .get()
            .current()?
            .transpose(None)
            .map_err(|e| py_error(e.kind.python_name(), e.message))?;
        let how = Some((Relayout::Transpose, &[][..]));
        derived_object(slf.as_any(), "T", how, Value::Tensor(t))
    }

    fn tolist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_numpy(py, &self.current()?)?.call_method0("tolist")
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(self.current()?.tensor_repr())
    }

    fn __str__(&self) -> PyResult<String> {
        Ok(self.current()?.to_str())
    }

    fn __len__(&self) -> PyResult<usize> {
        self.current()?
            .shape()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of a 0-d tensor"))
    }

    fn __bool__(&self) -> PyResult<bool> {
        self.current()?
            .truth()
            .map_err(|e| py_error(e.kind.python_name(), e.message))
    }

    fn __float__(&self) -> PyResult<f64> {
        match self.convert(Prim::FloatType)? {
            Value::Float(f) => Ok(f),
            _ => Err(PyTypeError::new_err("float() of a tensor")),
        }
    }

    fn __int__(&self) -> PyResult<i64> {
        match self.convert(Prim::IntType)? {
            Value::Int(i) => Ok(i),
            _ => Err(PyTypeError::new_err("int() of a tensor")),
        }
    }

    fn __richcmp__<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'py, PyAny>,
        op: pyo3::basic::CompareOp,
    ) -> PyResult<Bound<'py, PyAny>> {
        use pyo3::basic::CompareOp::*;
        let p = match op {
            Lt => Prim::Lt,
            Le => Prim::Le,
            Gt => Prim::Gt,
            Ge => Prim::Ge,
            Eq => Prim::Eq,
            Ne => Prim::Ne,
        };
        from_value(slf.py(), &binary(p, slf.as_any(), other)?)
    }

    fn __getattr__(slf: &Bound<'_, Self>, name: &str) -> PyResult<TensorMethod> {
        tensor_method(slf.as_any(), name, "anfora.Tensor")
    }

    /// `item in t`: any element equal to it (numpy's `(t == item).any()`).
    fn __contains__(slf: &Bound<'_, Self>, item: &Bound<'_, PyAny>) -> PyResult<bool> {
        match binary(Prim::In, item, slf.as_any())? {
            Value::Bool(b) => Ok(b),
            other => Err(PyTypeError::new_err(format!("'in' gave {}", other.type_name()))),
        }
    }

    /// numpy's indexing: a basic index of an array is a view of it, a scalar's item or an
    /// advanced index is a new value.
    fn __getitem__<'py>(
        slf: &Bound<'py, Self>,
        index: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let base = slf.cast::<ArrayTensor>().ok().map(ArrayTensor::writable);
        item(slf.get().current()?, base, index)
    }
}
}

/// `value[index]` of an object whose elements are `value`: a view of `base` where numpy's
/// would be one (a basic index of an array, unless it picks one element: numpy's scalar).
fn item<'py>(
    value: RTensor,
    base: Option<Writable>,
    index: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = index.py();
    let idx = loaded(to_value(index)?);
    let v = anfora_ops::python::getitem(&Value::Tensor(value), &idx).map_err(vm_error)?;
    match (&v, base, crate::array::basic_index(index)) {
        (Value::Tensor(t), Some(base), Some(all_ints)) if !(all_ints && t.ndim() == 0) => {
            let of = ViewOf::Index(index.clone().unbind());
            array_object(py, Cell::view(base, of, t.clone()))
        }
        _ => from_value(py, &v),
    }
}

/// `x op= v` on an array: numpy's in-place ufunc (its output keeps `x`'s dtype and shape).
fn update_in_place(t: &Writable, p: Prim, v: &Bound<'_, PyAny>) -> PyResult<()> {
    let old = Value::Tensor(t.read()?);
    let new = anfora_ops::call::call_prim(
        p,
        &[old.clone(), loaded(to_value(v)?)],
        &mut std::io::sink(),
    )
    .map_err(vm_error)?;
    match &anfora_ops::indexing::inplace_cast(&old, &new).map_err(vm_error)? {
        Value::Tensor(n) => t.write(n.clone()),
        other => Err(PyTypeError::new_err(format!(
            "an in-place update gave {}",
            other.type_name()
        ))),
    }
}

/// `x[index] = v` on an array.
fn set_item(t: &Writable, index: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>) -> PyResult<()> {
    let args = [
        Value::Tensor(t.read()?),
        loaded(to_value(index)?),
        loaded(to_value(v)?),
    ];
    match &anfora_ops::call::call_prim(Prim::SetItem, &args, &mut std::io::sink())
        .map_err(vm_error)?
    {
        Value::Tensor(n) => t.write(n.clone()),
        other => Err(PyTypeError::new_err(format!(
            "an item assignment gave {}",
            other.type_name()
        ))),
    }
}

with_in_place_methods!(pymethods_of! { impl ArrayTensor {} });

impl ArrayTensor {
    fn writable(slf: &Bound<'_, Self>) -> Writable {
        Writable::Array(slf.as_super().clone().unbind())
    }
}

/// What `made_by`, which numpy may answer with a view of `base`, returned, as objects: the
/// view where `how` (its layout change and the arguments after the tensor) tells numpy's, else
/// copies that remember `base` (`crate::array`).
pub fn derived_object<'py>(
    base: &Bound<'py, PyAny>,
    made_by: &str,
    how: Option<(Relayout, &[Value])>,
    v: Value,
) -> PyResult<Bound<'py, PyAny>> {
    let py = base.py();
    if let (Some((relayout, args)), Some(writable), Value::Tensor(t)) =
        (how, crate::array::writable(base), &v)
        && let Some(of) = relayout.view(&writable, args, t)
    {
        return array_object(py, Cell::view(writable, of, t.clone()));
    }
    // A scalar's results are new values: nothing can update the scalar.
    let Some(writable) = crate::array::writable(base) else {
        return from_value(py, &v);
    };
    match &v {
        Value::Tensor(t) => array_object(py, Cell::copy_of(writable, made_by.into(), t.clone())),
        Value::Tuple(items) => {
            let objects = items
                .iter()
                .map(|x| derived_object(base, made_by, None, x.clone()))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyTuple::new(py, objects)?.into_any())
        }
        _ => from_value(py, &v),
    }
}

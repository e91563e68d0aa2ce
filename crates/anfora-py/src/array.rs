//! numpy's object model for eager Tensors: arrays are mutable objects, scalars are not, and a
//! basic index is a view that reads and writes its base.
//!
//! * An *array* (`ArrayTensor`, a subclass of `Tensor`) takes `x += v`, `x[i] = v` and
//!   `x[i] op= v` in place, so every name, tuple or caller holding the object sees the change.
//! * A *scalar* (a plain `Tensor`: the 0-d result of an operation, as numpy gives an
//!   `np.float64`) has no in-place operators: `s += 1` rebinds `s` alone, and `s[...] = v` is
//!   a TypeError.
//! * A *view* (`x[1]`, `x[:, ::2]`, `x[..., None]`) holds its base and its index: reading it
//!   reads the base now, writing it writes the base through `SetItem`.
//! * A transpose (`.T`, `transpose`, `permute`), a `squeeze` or `expand_dims`, and a
//!   `reshape` of a contiguous array are views too, read and written through their base.
//! * The other results numpy may give as views (a reshape of a strided view, `split`,
//!   `broadcast_to`, ...) are copies that remember their base. Whether numpy would have
//!   shared memory depends on strides anfora does not model, so it refuses the cases where it
//!   would show: reading such a copy after its base was updated, or updating it while its base
//!   is held elsewhere. Both raise a ValueError that says so; neither computes something else.

use std::sync::Mutex;

use anfora_ir::Prim;
use anfora_ops::Value;
use anfora_ops::value::Method;
use anfora_tensor::Tensor as RTensor;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyEllipsis, PyInt, PySlice, PyTuple};

use crate::tensor::{Parameter, Tensor, to_value, vm_error};

/// The value of an eager Tensor and where it comes from.
pub struct Cell {
    state: Mutex<State>,
}

struct State {
    /// The elements (a view's are read from its base instead).
    value: RTensor,
    /// Bumped by every write to this object's own elements.
    version: u64,
    source: Source,
}

enum Source {
    /// Its own elements.
    Own,
    /// A view of `base`'s elements, as numpy's.
    View { base: Writable, of: ViewOf },
    /// A copy of what `made_by` returned for `base` at `base`'s version `version`, where numpy
    /// may have returned a view.
    Copy {
        base: Writable,
        version: u64,
        made_by: String,
    },
}

impl Cell {
    pub fn own(value: RTensor) -> Cell {
        Cell::with(value, Source::Own)
    }

    /// The view `of` of `base`, whose current elements are `value`.
    pub fn view(base: Writable, of: ViewOf, value: RTensor) -> Cell {
        Cell::with(value, Source::View { base, of })
    }

    /// `value`, which `made_by` computed from `base` as it is now.
    pub fn copy_of(base: Writable, made_by: String, value: RTensor) -> Cell {
        let version = base.version();
        Cell::with(
            value,
            Source::Copy {
                base,
                version,
                made_by,
            },
        )
    }

    fn with(value: RTensor, source: Source) -> Cell {
        Cell {
            state: Mutex::new(State {
                value,
                version: 0,
                source,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The version of the elements this object shows: a view's are its base's.
    fn version(&self) -> u64 {
        let base = {
            let s = self.lock();
            match &s.source {
                Source::View { base, .. } => Python::attach(|py| base.clone_ref(py)),
                _ => return s.version,
            }
        };
        base.version()
    }

    /// The current elements.
    pub fn read(&self) -> PyResult<RTensor> {
        Python::attach(|py| {
            let (base, of) = {
                let s = self.lock();
                match &s.source {
                    Source::Own => return Ok(s.value.clone()),
                    Source::Copy {
                        base,
                        version,
                        made_by,
                    } => {
                        if base.version() != *version {
                            return Err(stale(made_by));
                        }
                        return Ok(s.value.clone());
                    }
                    Source::View { base, of } => (base.clone_ref(py), of.clone_ref(py)),
                }
            };
            of.read(py, base.read()?)
        })
    }

    /// Replaces the elements by `new` (of the same dtype and shape): a view writes its base.
    pub fn write(&self, new: RTensor) -> PyResult<()> {
        Python::attach(|py| {
            let mut s = self.lock();
            let (base, of) = match &s.source {
                Source::Own => {
                    s.own(new);
                    return Ok(());
                }
                Source::Copy { base, made_by, .. } => {
                    // Where nothing else holds the base, nobody can tell a view from a copy.
                    if !unobserved(base) {
                        return Err(shared(made_by));
                    }
                    s.source = Source::Own;
                    s.own(new);
                    return Ok(());
                }
                Source::View { base, of } => (base.clone_ref(py), of.clone_ref(py)),
            };
            drop(s);
            base.write(of.write_back(py, base.read()?, new)?)
        })
    }

    /// Whether numpy would lay its elements out in one C-ordered block: then its `reshape` is
    /// a view.
    pub fn contiguous(&self) -> bool {
        match &self.lock().source {
            Source::Own => true,
            Source::View {
                base,
                of: ViewOf::Reshape(_),
            } => base.contiguous(),
            _ => false,
        }
    }

    /// The object whose elements these are a view of.
    pub fn view_base(&self) -> Option<Py<PyAny>> {
        match &self.lock().source {
            Source::View { base, .. } => Some(Python::attach(|py| base.object(py))),
            _ => None,
        }
    }
}

/// An object an in-place update writes: an anfora array or a Parameter.
pub enum Writable {
    Array(Py<Tensor>),
    Parameter(Py<Parameter>),
}

impl Writable {
    fn clone_ref(&self, py: Python<'_>) -> Writable {
        match self {
            Writable::Array(t) => Writable::Array(t.clone_ref(py)),
            Writable::Parameter(p) => Writable::Parameter(p.clone_ref(py)),
        }
    }

    fn object(&self, py: Python<'_>) -> Py<PyAny> {
        match self {
            Writable::Array(t) => t.clone_ref(py).into_any(),
            Writable::Parameter(p) => p.clone_ref(py).into_any(),
        }
    }

    /// Its current elements.
    pub fn read(&self) -> PyResult<RTensor> {
        match self {
            Writable::Array(t) => t.get().cell.read(),
            Writable::Parameter(p) => Ok(Python::attach(|py| p.bind(py).borrow().inner.get())),
        }
    }

    fn contiguous(&self) -> bool {
        match self {
            Writable::Array(t) => t.get().cell.contiguous(),
            Writable::Parameter(_) => true,
        }
    }

    /// Changes with every write to its elements.
    fn version(&self) -> u64 {
        match self {
            Writable::Array(t) => t.get().cell.version(),
            Writable::Parameter(p) => Python::attach(|py| p.bind(py).borrow().inner.version()),
        }
    }

    /// Replaces its elements by `new`, of the same dtype and shape.
    pub fn write(&self, new: RTensor) -> PyResult<()> {
        match self {
            Writable::Array(t) => t.get().cell.write(new),
            Writable::Parameter(p) => {
                Python::attach(|py| p.bind(py).borrow().inner.set(new));
                Ok(())
            }
        }
    }
}

/// How a view's elements are its base's.
pub enum ViewOf {
    /// `base[index]`, a basic index.
    Index(Py<PyAny>),
    /// `base.transpose(axes)`.
    Transpose(Vec<usize>),
    /// The same elements in this shape, where numpy reshapes without a copy.
    Reshape(Vec<usize>),
}

impl ViewOf {
    fn clone_ref(&self, py: Python<'_>) -> ViewOf {
        match self {
            ViewOf::Index(i) => ViewOf::Index(i.clone_ref(py)),
            ViewOf::Transpose(a) => ViewOf::Transpose(a.clone()),
            ViewOf::Reshape(s) => ViewOf::Reshape(s.clone()),
        }
    }

    /// The view's elements, from its base's.
    fn read(&self, py: Python<'_>, whole: RTensor) -> PyResult<RTensor> {
        match self {
            ViewOf::Index(index) => {
                let index = to_value(index.bind(py))?;
                let got = anfora_ops::python::getitem(&Value::Tensor(whole), &index);
                tensor(got.map_err(vm_error)?)
            }
            ViewOf::Transpose(axes) => layout(whole.transpose(Some(&signed(axes)))),
            ViewOf::Reshape(shape) => layout(whole.reshape(&signed(shape))),
        }
    }

    /// The base's elements once the view's are `new`.
    fn write_back(&self, py: Python<'_>, whole: RTensor, new: RTensor) -> PyResult<RTensor> {
        match self {
            ViewOf::Index(index) => {
                let args = [
                    Value::Tensor(whole),
                    to_value(index.bind(py))?,
                    Value::Tensor(new),
                ];
                let updated =
                    anfora_ops::call::call_prim(Prim::SetItem, &args, &mut std::io::sink());
                tensor(updated.map_err(vm_error)?)
            }
            ViewOf::Transpose(axes) => {
                let mut inverse = vec![0; axes.len()];
                for (i, &a) in axes.iter().enumerate() {
                    inverse[a] = i;
                }
                layout(new.transpose(Some(&signed(&inverse))))
            }
            ViewOf::Reshape(_) => layout(new.reshape(&signed(whole.shape()))),
        }
    }
}

fn signed(xs: &[usize]) -> Vec<i64> {
    xs.iter().map(|&x| x as i64).collect()
}

fn layout(t: anfora_tensor::Result<RTensor>) -> PyResult<RTensor> {
    t.map_err(|e| crate::tensor::py_error(e.kind.python_name(), e.message))
}

/// Whether only the object `t` came from holds it, and likewise everything its elements
/// come from: then no one can see whether an update of that object changes them. A
/// Parameter is always seen.
fn unobserved(t: &Writable) -> bool {
    let Writable::Array(t) = t else {
        return false;
    };
    // SAFETY: `t` is a live object (the caller holds a reference to it).
    if unsafe { pyo3::ffi::Py_REFCNT(t.as_ptr()) } != 1 {
        return false;
    }
    match &t.get().cell.lock().source {
        Source::Own => true,
        Source::View { base, .. } | Source::Copy { base, .. } => unobserved(base),
    }
}

impl State {
    fn own(&mut self, new: RTensor) {
        self.value = new;
        self.version += 1;
    }
}

fn tensor(v: Value) -> PyResult<RTensor> {
    match &v {
        Value::Tensor(t) => Ok(t.clone()),
        other => Err(PyTypeError::new_err(format!(
            "expected a tensor, got {}",
            other.type_name()
        ))),
    }
}

fn stale(made_by: &str) -> PyErr {
    PyValueError::new_err(format!(
        "this tensor was made by `{made_by}` from a tensor updated in place since: numpy may \
         have returned a view, which shows the update, or a copy, which does not, and anfora \
         does not tell them apart here; keep a copy of the result (`* 1`) to read the old values"
    ))
}

fn shared(made_by: &str) -> PyErr {
    PyValueError::new_err(format!(
        "in-place update of a tensor made by `{made_by}` from a tensor that is still held \
         elsewhere: numpy may have returned a view, whose update changes that tensor too, or \
         a copy, and anfora does not tell them apart here; update a copy of it (`* 1`) or the \
         original"
    ))
}

/// Whether `index` is numpy's basic index (ints, slices, `None`, `...`, or a tuple of them),
/// whose result is a view, and whether it names one element (all ints: numpy's scalar).
pub fn basic_index(index: &Bound<'_, PyAny>) -> Option<bool> {
    let one = |i: &Bound<'_, PyAny>| -> Option<bool> {
        if i.cast::<PyInt>().is_ok() && !i.is_instance_of::<pyo3::types::PyBool>() {
            Some(true)
        } else if i.is_none() || i.cast::<PySlice>().is_ok() || i.cast::<PyEllipsis>().is_ok() {
            Some(false)
        } else {
            None
        }
    };
    match index.cast::<PyTuple>() {
        Ok(t) => t
            .iter()
            .try_fold(true, |all_ints, i| one(&i).map(|int| all_ints && int)),
        Err(_) => one(index),
    }
}

/// The layout change of a primitive or method that numpy answers with a view.
#[derive(Clone, Copy)]
pub enum Relayout {
    /// `transpose`, `permute`, `.T`: always a view.
    Transpose,
    /// `reshape`: a view of a contiguous array, else a copy.
    Reshape,
    /// `squeeze`, `expand_dims`: axes of length 1 only, always a view.
    Resize,
}

impl Relayout {
    pub fn of_prim(p: Prim) -> Option<Relayout> {
        match p {
            Prim::Transpose | Prim::Permute => Some(Relayout::Transpose),
            Prim::Reshape => Some(Relayout::Reshape),
            Prim::Squeeze | Prim::ExpandDims => Some(Relayout::Resize),
            _ => None,
        }
    }

    pub fn of_method(m: Method) -> Option<Relayout> {
        match m {
            Method::Transpose | Method::Permute => Some(Relayout::Transpose),
            Method::Reshape => Some(Relayout::Reshape),
            _ => None,
        }
    }

    /// The view numpy's result `result` of this change of `base` is, called with `args`
    /// after the tensor; `None` where numpy may copy (a reshape of a strided view).
    pub fn view(self, base: &Writable, args: &[Value], result: &RTensor) -> Option<ViewOf> {
        match self {
            Relayout::Transpose => {
                let spec = anfora_ops::python::layout_spec(Method::Transpose, args).ok()?;
                RTensor::permutation(result.ndim(), spec.as_deref())
                    .ok()
                    .map(ViewOf::Transpose)
            }
            Relayout::Reshape if !base.contiguous() => None,
            Relayout::Reshape | Relayout::Resize => Some(ViewOf::Reshape(result.shape().to_vec())),
        }
    }
}

/// The object an in-place update of `object`'s view writes: an array or a Parameter.
pub fn writable(object: &Bound<'_, PyAny>) -> Option<Writable> {
    if let Ok(t) = object.cast::<crate::tensor::ArrayTensor>() {
        return Some(Writable::Array(t.as_super().clone().unbind()));
    }
    (object.cast::<Parameter>().ok()).map(|p| Writable::Parameter(p.clone().unbind()))
}

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
//! * The other results numpy gives as views (`reshape`, `transpose`, `.T`, `squeeze`,
//!   `broadcast_to`, ...) are copies that remember their base. Whether numpy would have
//!   shared memory depends on its strides, so anfora refuses the cases where it would show:
//!   reading such a copy after its base was updated, or updating it while its base is held
//!   elsewhere. Both raise a ValueError that says so; neither computes something else.

use std::sync::Mutex;

use anfora_ir::Prim;
use anfora_ops::Value;
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
    /// `base[index]` with a basic index: numpy's view.
    View { base: Writable, index: Py<PyAny> },
    /// A copy of what `made_by` returned for `base` at `base`'s version `version`, where numpy
    /// may have returned a view.
    Copy {
        base: Py<Tensor>,
        version: u64,
        made_by: String,
    },
}

impl Cell {
    pub fn own(value: RTensor) -> Cell {
        Cell::with(value, Source::Own)
    }

    /// `base[index]`, whose current elements are `value`.
    pub fn view(base: Writable, index: Py<PyAny>, value: RTensor) -> Cell {
        Cell::with(value, Source::View { base, index })
    }

    /// `value`, which `made_by` computed from `base` as it is now.
    pub fn copy_of(base: Py<Tensor>, made_by: String, value: RTensor) -> Cell {
        let version = base.get().cell.version();
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
    pub fn version(&self) -> u64 {
        let base = {
            let s = self.lock();
            match &s.source {
                Source::View {
                    base: Writable::Array(base),
                    ..
                } => Python::attach(|py| base.clone_ref(py)),
                _ => return s.version,
            }
        };
        base.get().cell.version()
    }

    /// The current elements.
    pub fn read(&self) -> PyResult<RTensor> {
        Python::attach(|py| {
            let (base, index) = {
                let s = self.lock();
                match &s.source {
                    Source::Own => return Ok(s.value.clone()),
                    Source::Copy {
                        base,
                        version,
                        made_by,
                    } => {
                        if base.get().cell.version() != *version {
                            return Err(stale(made_by));
                        }
                        return Ok(s.value.clone());
                    }
                    Source::View { base, index } => (base.clone_ref(py), index.clone_ref(py)),
                }
            };
            let whole = Value::Tensor(base.read()?);
            let index = to_value(index.bind(py))?;
            tensor(anfora_ops::python::getitem(&whole, &index).map_err(vm_error)?)
        })
    }

    /// Replaces the elements by `new` (of the same dtype and shape): a view writes its base.
    pub fn write(&self, new: RTensor) -> PyResult<()> {
        Python::attach(|py| {
            let mut s = self.lock();
            let (base, index) = match &s.source {
                Source::Own => {
                    s.own(new);
                    return Ok(());
                }
                Source::Copy { base, made_by, .. } => {
                    // Where nothing else holds the base, nobody can tell a view from a copy.
                    // SAFETY: `base` is a live object (this cell holds a reference to it).
                    let alone = unsafe { pyo3::ffi::Py_REFCNT(base.as_ptr()) } == 1
                        && matches!(base.get().cell.lock().source, Source::Own);
                    if !alone {
                        return Err(shared(made_by));
                    }
                    s.source = Source::Own;
                    s.own(new);
                    return Ok(());
                }
                Source::View { base, index } => (base.clone_ref(py), index.clone_ref(py)),
            };
            drop(s);
            let args = [
                Value::Tensor(base.read()?),
                to_value(index.bind(py))?,
                Value::Tensor(new),
            ];
            let updated = anfora_ops::call::call_prim(Prim::SetItem, &args, &mut std::io::sink())
                .map_err(vm_error)?;
            base.write(tensor(updated)?)
        })
    }

    /// The object whose elements these are a basic index of.
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
         does not tell them apart; copy the result (`y = x.{made_by}(...) * 1`) to keep the \
         old values"
    ))
}

fn shared(made_by: &str) -> PyErr {
    PyValueError::new_err(format!(
        "in-place update of a tensor made by `{made_by}` from a tensor that is still held \
         elsewhere: numpy may have returned a view, whose update changes that tensor too, or \
         a copy, and anfora does not tell them apart; update a copy (`x.{made_by}(...) * 1`) \
         or the original"
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

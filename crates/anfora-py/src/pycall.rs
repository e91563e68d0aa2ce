//! The arguments of a call from Python (`*args, **kwargs`) and its result, named once for
//! every `__call__` and eager operation.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// The positional arguments of a call.
pub type Args<'py> = Bound<'py, PyTuple>;

/// The keyword arguments of a call (PyO3 passes them as `Option<&Kwargs>`, absent when there
/// are none).
pub type Kwargs<'py> = Bound<'py, PyDict>;

/// What a call returns to Python.
pub type Returned<'py> = PyResult<Bound<'py, PyAny>>;

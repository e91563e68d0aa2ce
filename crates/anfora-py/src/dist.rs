//! `anfora.distributed`'s process group (issue 30): MPI through `anfora-dist`, in builds with
//! the `mpi` feature. Without it, `init` says how to get a build that has it.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::tensor::py_error;

/// Starts MPI and registers its world as the group of every collective; returns
/// `(rank, size)`. `timeout` (seconds) bounds how long one collective waits for the others.
#[pyfunction]
pub fn dist_init(timeout: f64) -> PyResult<(usize, usize)> {
    if !(timeout.is_finite() && timeout > 0.0) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "timeout must be a positive number of seconds, not {timeout}"
        )));
    }
    start(std::time::Duration::from_secs_f64(timeout))
}

#[cfg(feature = "mpi")]
fn start(timeout: std::time::Duration) -> PyResult<(usize, usize)> {
    let g = anfora_dist::init(timeout).map_err(PyRuntimeError::new_err)?;
    Ok((g.rank(), g.size()))
}

#[cfg(not(feature = "mpi"))]
fn start(_: std::time::Duration) -> PyResult<(usize, usize)> {
    Err(PyRuntimeError::new_err(
        "this build of anfora has no MPI: install OpenMPI (scripts/setup.sh does) and build \
         with the `mpi` feature",
    ))
}

/// Waits until every process has called it.
#[pyfunction]
pub fn dist_barrier(py: Python<'_>) -> PyResult<()> {
    py.detach(anfora_ops::collective::barrier)
        .map_err(|(kind, msg)| py_error(kind, msg))
}

/// Ends MPI (aborts the job instead when a collective timed out).
#[pyfunction]
pub fn dist_finalize() {
    #[cfg(feature = "mpi")]
    anfora_dist::finalize();
}

/// Stops every process of the job with exit status `code`.
#[pyfunction]
pub fn dist_abort(code: i32) {
    #[cfg(feature = "mpi")]
    anfora_dist::abort(code);
    #[cfg(not(feature = "mpi"))]
    std::process::exit(code);
}

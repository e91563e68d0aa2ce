//! anfora's reference VM: executes IR graphs directly with Python semantics (closures, Partial,
//! Switch, tuples, primitives, graph calls). It stays as the oracle that compiled execution is
//! checked against.

pub mod array_ops;
pub mod grad_ops;
pub mod inplace;
pub mod kernels;
mod machine;
pub mod nn_ops;
pub mod ops;
pub mod pynum;
pub mod state;
pub mod value;

pub use machine::{Options, RuntimeError, TraceEntry, Vm, bind_prim, split_call_kw};
pub use value::Value;

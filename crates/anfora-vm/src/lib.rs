//! anfora's reference VM: executes IR graphs directly with Python semantics (closures, Partial,
//! Switch, tuples, primitives, graph calls). It stays as the oracle that compiled execution is
//! checked against: it calls each primitive's reference implementation (`anfora-ops`) and never
//! the kernel registry.

mod binding;
mod machine;

pub use anfora_ir::{Options, RuntimeError, TraceEntry};
pub use machine::Vm;

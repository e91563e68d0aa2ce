//! The pipeline driver: compiles a function through anfora's stages, in order, as one table
//! (`pipeline.rs`); every stage is run, timed, verified (debug builds) and shown to an
//! observer by one helper. What a compilation is keyed by (the abstract signature of its
//! arguments) is [`key`]; writing the program after each stage is [`dump`]; writing a
//! compiled function as a model file or ONNX is [`export`].
//!
//! Loading a Python file as a module and running it on either engine is `anfora-session`;
//! this crate runs no program, so the Python package and the session share it.

pub mod dump;
pub mod export;
mod grad;
pub mod key;
pub mod pipeline;
mod varargs;

pub use anfora_ops::value::repr;
pub use dump::{DumpSpec, Dumps, StageView};
pub use export::{ExportFormat, export};
pub use grad::{Gradient, grad_entry};
pub use key::{Arg, arg_abstract, explain};
pub use pipeline::{ArgForm, Compiled, Failure, compile_function, specialize, stage_names};

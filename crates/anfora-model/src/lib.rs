//! anfora's model file: one file that holds a compiled function's specialized, optimized
//! graphs (control flow, loops, recursion and closures still as graphs, as MindIR keeps
//! them), the dtype and shape of every tensor node, and the Parameters' values.
//!
//! The layout (docs/deployment.md, "The model file"):
//!
//! ```text
//! 0     magic "ANFORA\0M" (8 bytes), format version (u32 LE), flags (u32 LE, 0)
//! 16    length of the graph message (u64 LE)
//! 24    offset of the blob section (u64 LE, a multiple of 64), its length (u64 LE)
//! 40    zero padding to 64
//! 64    the graph message: `anfora.model.Model` (protobuf, proto/anfora_model.proto)
//! ...   zero padding to the blob section
//! blobs every tensor's little-endian bytes, each at a multiple of 64 from the section start
//! ```
//!
//! [`write::write_model`] writes one from the compiler's module; [`read::read_model`]
//! validates a file completely (it is untrusted input) and rebuilds the graphs as a fresh
//! [`anfora_ir::Module`] for the runtime to plan and run.

pub mod container;
pub mod read;
pub mod types;
pub mod write;

/// The generated protobuf types of `proto/anfora_model.proto`.
pub mod schema {
    #![allow(clippy::all, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/anfora.model.rs"));
}

pub use read::{Limits, Loaded, read_model};
pub use types::{InputSpec, OutputSpec, ResultTree, TensorSpec};
pub use write::{ExportError, write_model};

/// The version of the graph message's schema this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// Why a model file was refused. Each names where: a byte offset in the file, or the graph
/// and node of the graph message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("not an anfora model file: {0}")]
    NotAModel(String),
    #[error(
        "model file format version {found} is not supported (this runtime reads version {supported})"
    )]
    Version { found: u32, supported: u32 },
    #[error("malformed model file at byte {offset}: {message}")]
    Malformed { offset: u64, message: String },
    #[error("invalid model: {0}")]
    Invalid(String),
    #[error("invalid model: graph {graph}: {message}")]
    Graph { graph: String, message: String },
    #[error("invalid model: node {node}: {message}")]
    Node { node: u32, message: String },
    #[error("model file too large: {needed} bytes would be allocated, over the cap of {cap} bytes")]
    TooLarge { needed: u64, cap: u64 },
}

impl ModelError {
    pub(crate) fn invalid(message: impl Into<String>) -> ModelError {
        ModelError::Invalid(message.into())
    }

    pub(crate) fn node(node: u32, message: impl Into<String>) -> ModelError {
        ModelError::Node {
            node,
            message: message.into(),
        }
    }
}

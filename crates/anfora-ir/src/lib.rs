//! anfora's intermediate representation: a graph-based functional IR in A-normal form, after
//! MindSpore's MindIR (itself a port of Myia).
//!
//! * A [`Module`] owns [`Graph`]s (FuncGraphs) and [`Node`]s in typed arenas.
//! * A node is a Parameter (formal parameter of its graph), a Value (a [`Const`]: numbers,
//!   strings, tuples, tensors, primitives, graphs) or an Apply (a CNode whose input 0 is the
//!   callee).
//! * Functions are values, control flow is `Switch` choosing a graph that is then called, loops
//!   are tail-recursive graphs, and closures are graphs whose nodes use nodes of enclosing graphs
//!   (free variables).
//!
//! [`analysis`] derives users, free variables, parents and recursion from the edges;
//! [`verify`] checks the invariants; [`print`] and [`dot`] write dumps.

pub mod analysis;
pub mod codes;
mod constant;
pub mod custom;
pub mod diag;
pub mod dot;
mod ids;
mod module;
mod param;
mod prim;
pub mod print;
mod signature;
pub mod span;
pub mod verify;

pub use constant::Const;
pub use ids::{GraphId, NodeId};
pub use module::{Graph, GraphKind, Inlined, Module, Node, NodeKind};
pub use param::{Monad, ParamRef};
pub use prim::{Effects, Prim};
pub use signature::{ArgSource, BindError, Param, Signature};
pub use span::{FileId, Location, SourceFile, SourceMap, Span};

/// Runs `f`, first moving to a fresh stack segment if little stack is left. Every recursion over
/// user-controlled depth (syntax trees, nested values) goes through this, so deep nesting is
/// never a stack overflow.
#[inline]
pub fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(128 * 1024, 4 * 1024 * 1024, f)
}

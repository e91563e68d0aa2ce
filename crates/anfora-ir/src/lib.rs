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
mod call_chain;
pub mod codes;
pub mod diag;
pub mod dot;
mod module;
pub mod print;
pub mod runtime;
pub mod span;
pub mod verify;

pub use anfora_ops::custom;
pub use anfora_ops::{
    ArgPlace, ArgSource, BindError, Const, Effects, GraphId, Monad, NodeId, Param, ParamRef, Prim,
    Signature, arg_places, deep,
};
pub use call_chain::CallChain;
pub use module::{
    AttrRefusal, Graph, GraphKind, Inlined, Module, Node, NodeKind, ObjectValue, Placement,
    replaced,
};
pub use runtime::{Options, RuntimeError, TraceEntry};
pub use span::{FileId, Location, SourceFile, SourceMap, Span};

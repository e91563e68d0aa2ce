//! anfora's primitives and the values they compute on.
//!
//! * The IR's vocabulary: [`Const`], [`GraphId`]/[`NodeId`], [`ParamRef`], [`Signature`] and
//!   [`Prim`], the primitive a CNode calls.
//! * Every built-in primitive is declared once, in a family module (`family/*.rs`), with
//!   everything about it: its names and Python signature, its effects, its dtype/shape rule,
//!   its reference implementation, its kernels and its backward rule ([`def::PrimDef`]). Every
//!   stage reaches them through [`Prim::def`]; custom primitives ([`custom`]) are declared the
//!   same way at run time.
//! * Runtime values ([`value`], [`pynum`]: Python's numerics exactly, [`python`]: its
//!   semantics) and abstract values ([`abs`]: what inference knows before the program runs).
//! * How any primitive is called ([`call`]), the kernel registry ([`kernels`], [`inplace`]),
//!   the state primitives keep ([`state`]: Parameters, the random generator), and what
//!   backward rules write into ([`emit`]).

pub mod abs;
pub mod alloc;
pub mod args;
pub mod call;
pub mod collective;
mod constant;
pub mod custom;
pub mod def;
pub mod emit;
pub mod family;
mod ids;
pub mod indexing;
pub mod inplace;
pub mod kernels;
mod param;
mod prim;
pub mod pynum;
pub mod python;
mod registry;
mod signature;
pub mod state;
#[cfg(test)]
mod tests;
mod unicode_printable;
pub mod value;

pub use abs::{Abs, Func, RefAbs, TensorAbs};
pub use constant::Const;
pub use ids::{GraphId, NodeId};
pub use param::{Monad, ParamRef};
pub use prim::{CustomId, Effects, Prim, Refs};
pub use signature::{ArgPlace, ArgSource, BindError, Param, Signature, arg_places};
pub use value::Value;

/// Runs `f`, first moving to a fresh stack segment if little stack is left. Every recursion over
/// user-controlled depth (syntax trees, nested values) goes through this, so deep nesting is
/// never a stack overflow.
#[inline]
pub fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(128 * 1024, 4 * 1024 * 1024, f)
}

//! anfora's primitives and the values they compute on.
//!
//! * The IR's vocabulary: [`Const`], [`GraphId`]/[`NodeId`], [`ParamRef`], [`Signature`] and
//!   [`Prim`], the primitives with their effect attributes and Python signatures.
//! * Runtime values ([`value`], [`pynum`]: Python's numerics exactly) and abstract values
//!   ([`abs`], what inference knows of a value before the program runs).
//! * What each primitive does: its inference rule ([`rules`]), its reference implementation
//!   ([`ops`]), its kernels ([`kernels`], [`inplace`]) and the state it keeps ([`state`]).

pub mod abs;
pub mod array_ops;
mod array_rules;
mod constant;
pub mod custom;
mod effect_rules;
pub mod grad_ops;
mod grad_rules;
mod ids;
pub mod inplace;
pub mod kernels;
pub mod nn_ops;
mod nn_rules;
pub mod ops;
mod param;
mod prim;
pub mod pynum;
pub mod rules;
mod signature;
pub mod state;
pub mod value;

pub use abs::{Abs, Func, RefAbs, TensorAbs};
pub use constant::Const;
pub use ids::{GraphId, NodeId};
pub use param::{Monad, ParamRef};
pub use prim::{Effects, Prim};
pub use signature::{ArgSource, BindError, Param, Signature};
pub use value::Value;

/// Runs `f`, first moving to a fresh stack segment if little stack is left. Every recursion over
/// user-controlled depth (syntax trees, nested values) goes through this, so deep nesting is
/// never a stack overflow.
#[inline]
pub fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(128 * 1024, 4 * 1024 * 1024, f)
}

//! A primitive's declaration: everything about it in one record, [`PrimDef`].
//!
//! Each family module (`family/*.rs`) declares its members with [`primitives!`]. Inference, both
//! engines, the kernel registry, autodiff and every pass reach a primitive's rules only through
//! its declaration (`Prim::def`), so adding a primitive is one declaration in one family file.
//! The required fields are the struct's own: leaving one out is a compile error naming it.

use std::io::Write;

use anfora_tensor::{BinaryOp, UnaryOp};

use crate::abs::{Abs, Rule};
use crate::emit::{Call, Emit, Forward, Grads};
use crate::ids::NodeId;
use crate::prim::{Effects, Prim, Refs};
use crate::value::{OpResult, Value};

/// The abstract result of a call (arguments bound, Parameters read): a type, a shape error
/// found at compile time, or `Bottom` when the call always raises.
pub type InferFn = fn(Prim, &[Abs]) -> Rule;
/// Whether a call with these argument abstracts may raise at run time (one that cannot is
/// removed when its result is unused).
pub type RaisesFn = fn(&[Abs]) -> bool;
/// The reference implementation: Python's (and numpy's) semantics on runtime values. Only
/// `print` writes to the sink.
pub type EvalFn = fn(Prim, &[Value], &mut dyn Write) -> OpResult;
/// A kernel that consumes its arguments (a free operand's buffer is reused).
pub type OwnedFn = fn(Prim, &mut [Value], &mut dyn Write) -> OpResult;
/// The sensitivities of a call's arguments, emitted as nodes; `None` when this call has no
/// rule (the grad stage then reports E0502).
pub type BackwardFn = fn(&mut dyn Emit, &Call) -> Option<Grads>;
/// A forward computation to differentiate instead of the call itself (in the J graph).
pub type ForwardFn = fn(&mut dyn Emit, &[NodeId]) -> Option<Forward>;

/// A name users call a primitive by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Py {
    /// A Python builtin (`len`).
    Builtin(&'static str),
    /// A function of `anfora.ops`.
    Op(&'static str),
    /// A function of the `anfora` namespace itself (`anfora.grad`).
    Anfora(&'static str),
}

/// How calls on tensors run on a device.
#[derive(Clone, Copy, Debug)]
pub enum Kernels {
    /// No kernel: plain Python, structure, effects (the state machinery runs them) or the grad
    /// stage's markers. Calls never dispatch by device.
    None,
    /// Computes on tensors; the CPU kernel is the reference implementation. `fused`: also a
    /// step of one-pass elementwise kernels.
    Tensor { fused: bool },
    /// Computes on tensors; the CPU kernel consumes its operands.
    Owned(OwnedFn),
    /// No device kernel (an update the state machinery runs), but a CPU path that consumes
    /// its operands (`sgd` writing into the Parameter's own buffer).
    Update(OwnedFn),
    /// An elementwise unary function: fused, and written into a free operand's buffer.
    Unary(UnaryOp),
    /// An elementwise binary function, written into a free operand's buffer; `fused`: also a
    /// step of one-pass elementwise kernels.
    Binary { op: BinaryOp, fused: bool },
}

impl Kernels {
    /// Whether calls on tensors dispatch to a kernel by device and dtype.
    pub fn dispatch(self) -> bool {
        !matches!(self, Kernels::None | Kernels::Update(_))
    }

    /// The elementwise unary function, if it is one.
    pub fn unary_op(self) -> Option<UnaryOp> {
        match self {
            Kernels::Unary(op) => Some(op),
            _ => None,
        }
    }

    /// The elementwise binary function, if it is one.
    pub fn binary_op(self) -> Option<BinaryOp> {
        match self {
            Kernels::Binary { op, .. } => Some(op),
            _ => None,
        }
    }

    /// Whether fusion may take it into a one-pass elementwise kernel.
    pub fn fused(self) -> bool {
        matches!(
            self,
            Kernels::Unary(_)
                | Kernels::Binary { fused: true, .. }
                | Kernels::Tensor { fused: true }
        )
    }
}

/// How differentiation goes through a call.
#[derive(Clone, Copy)]
pub enum Backward {
    /// Refused on a gradient's path (E0502), for the reason given.
    Refused(&'static str),
    /// Nothing flows back: piecewise constant, structural or effectful.
    Zero,
    /// The rule computing the arguments' sensitivities.
    Rule(BackwardFn),
    /// Differentiated as another computation (its rule applies there).
    Through(ForwardFn),
}

/// What is true of a few primitives only; every declaration starts from [`Attrs::NONE`].
#[derive(Clone, Copy, Debug)]
pub struct Attrs {
    /// Which arguments are taken as Parameters.
    pub refs: Refs,
    /// The result can hold the arguments' values (a function in an argument flows to it).
    pub passes_values: bool,
    /// May be evaluated at compile time when its arguments are constants.
    pub fold: bool,
    /// Never merged or removed although it has no effect attribute: it raises a check's error
    /// or creates a closure.
    pub opaque: bool,
    /// A builtin class `isinstance` accepts.
    pub is_type: bool,
    /// Its name in compile-time error messages, when not its Python name.
    pub label: Option<&'static str>,
    /// Arguments that must be known at compile time: (position, name).
    pub constant_args: &'static [(usize, &'static str)],
    /// Computed even while an argument is still `Bottom` in inference (tuples, `Switch`).
    pub lazy: bool,
    /// Receives the effect states it is passed (the state plumbing itself).
    pub states: bool,
}

impl Attrs {
    pub const NONE: Attrs = Attrs {
        refs: Refs::Read,
        passes_values: false,
        fold: true,
        opaque: false,
        is_type: false,
        label: None,
        constant_args: &[],
        lazy: false,
        states: false,
    };
}

/// A primitive's declaration.
pub struct PrimDef {
    /// The constant's name (`Prim::ReduceSum`), shown by `Debug`.
    pub ident: &'static str,
    /// Its name in `.ir` dumps.
    pub name: &'static str,
    /// The names users call it by, the first shown in messages; none for internal primitives.
    pub python: &'static [Py],
    /// Its Python-level parameter list, `"(x, axis=None, keepdims=False)"`.
    pub signature: &'static str,
    /// MindSpore's side-effect attributes.
    pub effects: Effects,
    /// The dtype/shape rule.
    pub infer: InferFn,
    /// Whether a call may raise.
    pub raises: RaisesFn,
    /// The reference implementation.
    pub eval: EvalFn,
    /// Its kernels.
    pub kernels: Kernels,
    /// Its backward rule.
    pub backward: Backward,
    /// The rarer attributes.
    pub attrs: Attrs,
}

/// For `raises`: a call that never raises.
pub(crate) fn never(_: &[Abs]) -> bool {
    false
}

/// For `raises`: a call that may always raise.
pub(crate) fn always(_: &[Abs]) -> bool {
    true
}

/// For `raises`: arithmetic that cannot raise on floats and float tensors.
pub(crate) fn unless_float(args: &[Abs]) -> bool {
    !args.iter().all(|a| match a {
        Abs::Tensor(t) => t.dtype.is_float(),
        Abs::Float(_) => true,
        _ => false,
    })
}

/// For `raises`: tensor work that cannot raise once inference has checked the shapes, all
/// known, of float tensors.
pub(crate) fn unless_known_floats(args: &[Abs]) -> bool {
    !args.iter().all(|a| match a {
        Abs::Tensor(t) => t.dtype.is_float() && t.known_shape().is_some(),
        Abs::Any | Abs::Bottom | Abs::Unbound => false,
        _ => true,
    })
}

/// For `raises`: work on float tensors of known shapes whose other arguments are constants
/// (inference has checked them all).
pub(crate) fn unless_known_args(args: &[Abs]) -> bool {
    !args.iter().all(|a| match a {
        Abs::Tensor(t) => t.dtype.is_float() && t.known_shape().is_some(),
        other => crate::abs::to_value(other).is_some(),
    })
}

/// A family of primitives: the members of one `family/*.rs` module, in declaration order.
pub struct Family {
    pub index: u16,
    pub name: &'static str,
    pub members: &'static [PrimDef],
}

/// Declares a family of primitives: an associated constant of [`Prim`] per member and the
/// family's table of [`PrimDef`]s. The fields of a member are those of `PrimDef` (all
/// required), in any order, followed by any of `Attrs`' fields it changes.
macro_rules! primitives {
    (
        family $fam:ident = $index:literal;
        $( $(#[$doc:meta])* $member:ident { $($fields:tt)* } )*
    ) => {
        #[repr(u16)]
        enum Member { $($member,)* }

        #[allow(non_upper_case_globals)]
        impl $crate::prim::Prim {
            $(
                $(#[$doc])*
                pub const $member: $crate::prim::Prim =
                    $crate::prim::Prim::member($index, Member::$member as u16);
            )*
        }

        pub(crate) static FAMILY: $crate::def::Family = $crate::def::Family {
            index: $index,
            name: stringify!($fam),
            members: &[$($crate::def::primitives!(@def $member [] [] $($fields)*),)*],
        };
    };
    (@def $member:ident [$($def:tt)*] [$($attr:tt)*] $(,)?) => {
        $crate::def::PrimDef {
            ident: stringify!($member),
            $($def)*
            attrs: $crate::def::Attrs { $($attr)* ..$crate::def::Attrs::NONE },
        }
    };
    (@def $member:ident $def:tt [$($attr:tt)*]
        $field:ident: $value:expr $(, $($rest:tt)*)?) => {
        $crate::def::primitives!(@route $field $member $def [$($attr)*] $value; $($($rest)*)?)
    };
    (@route refs $($tail:tt)*) => { $crate::def::primitives!(@attr refs $($tail)*) };
    (@route passes_values $($tail:tt)*) => {
        $crate::def::primitives!(@attr passes_values $($tail)*)
    };
    (@route fold $($tail:tt)*) => { $crate::def::primitives!(@attr fold $($tail)*) };
    (@route opaque $($tail:tt)*) => { $crate::def::primitives!(@attr opaque $($tail)*) };
    (@route is_type $($tail:tt)*) => { $crate::def::primitives!(@attr is_type $($tail)*) };
    (@route label $($tail:tt)*) => { $crate::def::primitives!(@attr label $($tail)*) };
    (@route constant_args $($tail:tt)*) => {
        $crate::def::primitives!(@attr constant_args $($tail)*)
    };
    (@route lazy $($tail:tt)*) => { $crate::def::primitives!(@attr lazy $($tail)*) };
    (@route states $($tail:tt)*) => { $crate::def::primitives!(@attr states $($tail)*) };
    (@route $field:ident $member:ident [$($def:tt)*] $attr:tt $value:expr; $($rest:tt)*) => {
        $crate::def::primitives!(@def $member [$($def)* $field: $value,] $attr $($rest)*)
    };
    (@attr $field:ident $member:ident $def:tt [$($attr:tt)*] $value:expr; $($rest:tt)*) => {
        $crate::def::primitives!(@def $member $def [$($attr)* $field: $value,] $($rest)*)
    };
}

pub(crate) use primitives;

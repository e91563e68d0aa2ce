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
    /// The rule giving the first argument, when it is needed, the sensitivity this computes.
    First(fn(&mut dyn Emit, &Call) -> NodeId),
    /// Differentiated as another computation (its rule applies there).
    Through(ForwardFn),
}

/// What is true of a few primitives only; every declaration starts from [`Attrs::NONE`].
#[derive(Clone, Copy, Debug)]
pub struct Attrs {
    /// Which arguments are taken as Parameters.
    pub refs: Refs,
    /// The arguments whose values the result can hold (a function in one flows to it): bit
    /// `i` for argument `i`, the last bit for every argument after it.
    pub passes_values: u64,
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
    /// Its result may be one of its arguments or share memory with one (a numpy view such
    /// as `x.T`, an item of a tuple): an in-place update of one is seen through the other.
    pub views: bool,
    /// A numpy constructor: its 0-d result is an array (`np.zeros(())`), where numpy's
    /// operations give a scalar, which an in-place update rebinds instead of changing.
    pub makes_array: bool,
    /// The diagnostic code, the label at the span and the hint of its compile-time errors,
    /// when they are not shape errors (E0301).
    pub refusal: Option<Refusal>,
}

/// How a primitive's compile-time errors read where they are refusals, not shape errors.
#[derive(Clone, Copy, Debug)]
pub struct Refusal {
    pub code: &'static str,
    /// What the label at the operation's span says.
    pub label: &'static str,
    pub hint: &'static str,
}

impl Attrs {
    /// Whether the result can hold the value of argument `i`.
    pub fn passes(&self, i: usize) -> bool {
        self.passes_values & (1 << i.min(63)) != 0
    }

    pub const NONE: Attrs = Attrs {
        refs: Refs::Read,
        passes_values: 0,
        fold: true,
        opaque: false,
        is_type: false,
        label: None,
        constant_args: &[],
        lazy: false,
        states: false,
        views: false,
        makes_array: false,
        refusal: None,
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

/// The backward rule that gives the first argument the sensitivity `f` computes (when it is
/// needed) and the others none.
pub(crate) const fn first(f: fn(&mut dyn Emit, &Call) -> NodeId) -> Backward {
    // The rule is a closure of `f`, which a `fn` pointer cannot capture: the declaration's
    // rule is this generic one, handed `f` through the call.
    Backward::First(f)
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

/// The builder methods of [`PrimDef`], one a row: `method(arg: Type) sets field = value;`.
macro_rules! builders {
    ($($(#[$doc:meta])* $method:ident($($arg:ident: $ty:ty)?) sets $($field:ident).+ = $value:expr;)*) => {
        $(
            $(#[$doc])*
            pub const fn $method(mut self $(, $arg: $ty)?) -> Self {
                self.$($field).+ = $value;
                self
            }
        )*
    };
}

impl PrimDef {
    /// A pure primitive of Python values that may raise, with no tensor kernel: the builder
    /// methods below change the rest.
    pub const fn new(
        name: &'static str,
        signature: &'static str,
        infer: InferFn,
        eval: EvalFn,
        backward: Backward,
    ) -> PrimDef {
        PrimDef {
            ident: "",
            name,
            python: &[],
            signature,
            effects: Effects::PURE,
            infer,
            raises: always,
            eval,
            kernels: Kernels::None,
            backward,
            attrs: Attrs::NONE,
        }
    }

    /// Computes on tensors: its CPU kernel is its reference implementation.
    pub const fn tensor_kernel(self) -> Self {
        self.with_kernels(Kernels::Tensor { fused: false })
    }

    builders! {
        /// Its side effects.
        with_effects(effects: Effects) sets effects = effects;
        /// How it runs on tensors.
        with_kernels(kernels: Kernels) sets kernels = kernels;
        /// The names users call it by.
        called(python: &'static [Py]) sets python = python;
        /// Its Python parameter list.
        signed(signature: &'static str) sets signature = signature;
        /// Whether a call may raise.
        raising(raises: RaisesFn) sets raises = raises;
        /// Which arguments it takes as Parameters.
        with_refs(refs: Refs) sets attrs.refs = refs;
        /// Arguments that must be known at compile time.
        with_constant_args(args: &'static [(usize, &'static str)]) sets attrs.constant_args = args;
        /// Its name in compile-time error messages.
        labelled(label: &'static str) sets attrs.label = Some(label);
        /// Never evaluated at compile time.
        unfoldable() sets attrs.fold = false;
        /// Receives the effect states it is passed (the state plumbing itself).
        with_states() sets attrs.states = true;
        /// Computed even while an argument is still `Bottom` in inference.
        lazy() sets attrs.lazy = true;
        /// Never merged or removed although it has no effect attribute.
        opaque() sets attrs.opaque = true;
        /// A builtin class `isinstance` accepts.
        class() sets attrs.is_type = true;
        /// Its result can hold its arguments' values.
        passing_values() sets attrs.passes_values = u64::MAX;
        /// Its result can hold the value of argument `i` only (a gradient's sensitivity, not the
        /// value it is shaped like).
        passing_value_of(i: u32) sets attrs.passes_values = 1 << i;
        /// Its result may be (a view of) one of its arguments.
        viewing() sets attrs.views = true;
        /// A numpy constructor: its result is an array also when 0-d.
        making_arrays() sets attrs.makes_array = true;
        /// Its compile-time errors are this code, with this hint.
        refusing(refusal: Refusal) sets attrs.refusal = Some(refusal);
    }

    /// Writes the Parameters that are its first `params` arguments.
    pub const fn writing(self, params: usize) -> Self {
        self.with_effects(Effects::MEM)
            .with_refs(Refs::Writes(params))
    }
}

/// A family of primitives: the members of one `family/*.rs` module, in declaration order.
pub struct Family {
    pub index: u16,
    pub name: &'static str,
    pub members: &'static [PrimDef],
}

/// Declares a family of primitives: an associated constant of [`Prim`] per member and the
/// family's table of [`PrimDef`]s. A member is a row `Name = expr;`, `expr` a `PrimDef` built
/// by [`PrimDef::new`] (whose arguments, the rules every primitive
/// needs, are all required) or by a constant function of the family for its regular members
/// (binary operators, elementwise functions, reductions), then changed by the builder methods.
macro_rules! primitives {
    (
        family $fam:ident = $index:literal;
        $( $(#[$doc:meta])* $member:ident = $row:expr; )*
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
            members: &[$($crate::def::PrimDef { ident: stringify!($member), ..$row },)*],
        };
    };
}

pub(crate) use primitives;

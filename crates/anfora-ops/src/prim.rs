//! Primitives: the built-in functions a CNode may call, with their effect attributes and the
//! Python-level signatures used to bind keyword arguments.

use std::sync::OnceLock;

use crate::Const;
use crate::custom::CustomId;
use crate::signature::{Param, Signature};

/// Side-effect attributes of a primitive (MindSpore's `side_effect_*` prim attrs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// Writes memory (Parameters).
    pub mem: bool,
    /// Performs input/output (print, assert).
    pub io: bool,
    /// Has hidden state (random generators): never merged or fused.
    pub hidden: bool,
    /// Passes the effects of the function it holds through (Partial, Depend).
    pub propagate: bool,
}

macro_rules! prims {
    ($( $(#[$doc:meta])* $variant:ident => $name:literal ),* $(,)?) => {
        /// Every primitive anfora knows.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Prim {
            $( $(#[$doc])* $variant, )*
            /// A primitive registered through [`crate::custom::register`].
            Custom(CustomId),
        }

        impl Prim {
            /// The built-in primitives (custom ones are in the registry).
            pub const ALL: &'static [Prim] = &[$(Prim::$variant,)*];

            /// Name in `.ir` dumps.
            pub fn name(self) -> &'static str {
                match self {
                    $( Prim::$variant => $name, )*
                    Prim::Custom(id) => crate::custom::get(id).name,
                }
            }
        }
    };
}

prims! {
    // ---- structure -------------------------------------------------------------------
    /// `Switch(cond, f, g)` returns `f` if `cond` else `g`; the caller applies the result.
    Switch => "Switch",
    /// `Partial(f, a...)` binds leading arguments.
    Partial => "Partial",
    MakeTuple => "MakeTuple",
    MakeList => "MakeList",
    /// `TupleGetItem(t, i)` with a constant index, made by unpacking.
    TupleGetItem => "TupleGetItem",
    MakeSlice => "MakeSlice",
    /// Python truthiness of a condition (one-element tensors allowed): returns a bool.
    Truth => "Truth",
    /// `CallKw(f, names, args...)`: a call with keyword arguments whose callee is only known at
    /// run time; the last `len(names)` arguments are the keyword values.
    CallKw => "CallKw",
    /// `GetAttr(obj, "name")`.
    GetAttr => "GetAttr",
    /// `CheckBound(x, "name", is_free)` raises UnboundLocalError (or NameError for a free
    /// variable of a closure) if `x` is the Unbound marker, else returns `x`.
    CheckBound => "CheckBound",
    /// `Unpack(seq, n)` checks that `seq` has `n` items and returns them as a tuple.
    Unpack => "Unpack",
    /// `Raise("ExcType", message)`.
    Raise => "Raise",
    /// `Assert(cond, message)`: raises AssertionError when `cond` is false.
    Assert => "Assert",
    /// `Enumerate(seq, start)`: tuple of `(start + i, item)` pairs.
    Enumerate => "Enumerate",
    /// `Zip(a, b, ...)`: tuple of item tuples, as long as the shortest input.
    Zip => "Zip",
    /// Length of a sequence a `for` loop iterates over ("'int' object is not iterable").
    IterLen => "IterLen",

    // ---- Python operators ------------------------------------------------------------
    Add => "Add",
    Sub => "Sub",
    Mul => "Mul",
    Div => "Div",
    FloorDiv => "FloorDiv",
    Mod => "Mod",
    Pow => "Pow",
    MatMul => "MatMul",
    LShift => "LShift",
    RShift => "RShift",
    BitAnd => "BitAnd",
    BitOr => "BitOr",
    BitXor => "BitXor",
    /// `x += y`: like Add, but refuses lists (Python would mutate them in place).
    InplaceAdd => "InplaceAdd",
    /// `x *= y`: like Mul, but refuses lists.
    InplaceMul => "InplaceMul",
    Neg => "Neg",
    Pos => "Pos",
    Invert => "Invert",
    Not => "Not",
    Eq => "Equal",
    Ne => "NotEqual",
    Lt => "Less",
    Le => "LessEqual",
    Gt => "Greater",
    Ge => "GreaterEqual",
    Is => "Is",
    IsNot => "IsNot",
    In => "In",
    NotIn => "NotIn",
    GetItem => "GetItem",

    // ---- Python builtins -------------------------------------------------------------
    Print => "Print",
    Len => "Len",
    Abs => "Abs",
    Min => "Min",
    Max => "Max",
    /// `int`: conversion function and type (for isinstance).
    IntType => "int",
    FloatType => "float",
    BoolType => "bool",
    StrType => "str",
    TupleType => "tuple",
    ListType => "list",
    Repr => "repr",
    Range => "range",
    IsInstance => "isinstance",
    Divmod => "divmod",
    Sum => "sum",
    Any => "any",
    All => "all",
    /// `anfora.Tensor`, for isinstance.
    TensorType => "Tensor",

    // ---- tensor library (anfora.ops) -------------------------------------------------
    Zeros => "Zeros",
    Ones => "Ones",
    Full => "Full",
    Arange => "Arange",
    MakeTensor => "MakeTensor",
    ZerosLike => "ZerosLike",
    OnesLike => "OnesLike",
    Exp => "Exp",
    Log => "Log",
    Sqrt => "Sqrt",
    Tanh => "Tanh",
    Sin => "Sin",
    Cos => "Cos",
    Sigmoid => "Sigmoid",
    Relu => "ReLU",
    Log1p => "Log1p",
    Expm1 => "Expm1",
    Erf => "Erf",
    /// `ops.gelu(x, approximate=False)`: exact (erf) GELU, or its tanh form.
    Gelu => "GeLU",
    Silu => "SiLU",
    Softplus => "Softplus",
    Rsqrt => "Rsqrt",
    Sign => "Sign",
    /// `ops.clip(x, min=None, max=None)`: numpy's `clip`, `minimum(maximum(x, min), max)` with
    /// a `None` bound left out.
    Clip => "Clip",
    /// `ClipGrad(d, x, min, max, which)`: the sensitivity of `x` (which 0), `min` (1) or `max`
    /// (2) of `Clip`, before broadcasting is summed back; `None` for a `None` bound.
    ClipGrad => "ClipGrad",
    Maximum => "Maximum",
    Minimum => "Minimum",
    LogicalNot => "LogicalNot",
    Where => "Where",
    Cast => "Cast",
    ReduceSum => "ReduceSum",
    ReduceMean => "ReduceMean",
    ReduceMax => "ReduceMax",
    ReduceMin => "ReduceMin",
    ReduceProd => "ReduceProd",
    Reshape => "Reshape",
    Transpose => "Transpose",

    // ---- neural-network operations (anfora.ops) ---------------------------------------
    /// `ops.conv2d(x, weight, stride=1, padding=0, dilation=1, groups=1)`: 2-D convolution
    /// (cross-correlation) of an (N, C, H, W) or (C, H, W) float input with an
    /// (O, C/groups, KH, KW) weight.
    Conv2D => "Conv2D",
    /// `Conv2DBackpropInput(d, weight, input_shape, stride, padding, dilation, groups)`: the
    /// gradient of `Conv2D` with respect to its input (a transposed convolution of `d`).
    Conv2DBackpropInput => "Conv2DBackpropInput",
    /// `Conv2DBackpropFilter(d, x, weight_shape, stride, padding, dilation, groups)`: the
    /// gradient of `Conv2D` with respect to its weight.
    Conv2DBackpropFilter => "Conv2DBackpropFilter",
    /// `ops.max_pool2d(x, kernel_size, stride=None, padding=0)`: the largest element of each
    /// window (`stride` defaults to the kernel size; `-inf` padding).
    MaxPool2D => "MaxPool2D",
    /// `ops.avg_pool2d(x, kernel_size, stride=None, padding=0)`: the mean of each window, the
    /// zero padding counted.
    AvgPool2D => "AvgPool2D",
    /// `MaxPool2DGrad(d, x, kernel_size, stride, padding)`: each window's sensitivity at its
    /// first largest element of `x`.
    MaxPool2DGrad => "MaxPool2DGrad",
    /// `MaxPool2DGradGrad(dd, x, kernel_size, stride, padding)`: `dd` (shaped like `x`) read at
    /// each window's first largest element (the adjoint of `MaxPool2DGrad` in `d`).
    MaxPool2DGradGrad => "MaxPool2DGradGrad",
    /// `AvgPool2DGrad(d, input_shape, kernel_size, stride, padding)`: each window's sensitivity
    /// shared by its positions.
    AvgPool2DGrad => "AvgPool2DGrad",
    /// `ops.softmax(x, axis=-1)`.
    Softmax => "Softmax",
    /// `ops.log_softmax(x, axis=-1)`.
    LogSoftmax => "LogSoftmax",
    /// `ops.logsumexp(x, axis=None, keepdims=False)`.
    LogSumExp => "LogSumExp",

    /// `ops.argmax(x, axis=None, keepdims=False)`: numpy's, int64.
    ArgMax => "ArgMax",
    /// `ops.argmin(x, axis=None, keepdims=False)`: numpy's, int64.
    ArgMin => "ArgMin",
    /// `ops.one_hot(indices, depth, dtype=float32)`.
    OneHot => "OneHot",
    /// `ops.squeeze(x, axis=None)`: numpy's.
    Squeeze => "Squeeze",
    /// `ops.expand_dims(x, axis)`: numpy's.
    ExpandDims => "ExpandDims",
    /// `ops.broadcast_to(x, shape)`: numpy's.
    BroadcastTo => "BroadcastTo",
    /// `ops.concat(tensors, axis=0)`: numpy's `concatenate`.
    Concat => "Concat",
    /// `ops.stack(tensors, axis=0)`: numpy's.
    Stack => "Stack",
    /// `ops.split(x, indices_or_sections, axis=0)`: numpy's; a tuple of tensors.
    Split => "Split",
    /// `ConcatGrad(d, tensors, axis)`: `d` cut back into one sensitivity per tensor.
    ConcatGrad => "ConcatGrad",
    /// `StackGrad(d, tensors, axis)`: `d` unstacked into one sensitivity per tensor.
    StackGrad => "StackGrad",
    /// `ops.take(x, indices, axis=None)` (also `ops.gather`): numpy's `take`.
    Take => "Take",
    /// `TakeGrad(d, x, indices, axis)`: zeros like `x` with `d` added where `take` read.
    TakeGrad => "TakeGrad",
    /// `ops.pad(x, pad_width, mode='constant', constant_values=None)`: numpy's `pad` in its
    /// modes 'constant' (`constant_values`, `None` meaning not given: 0), 'edge', 'reflect'
    /// and 'symmetric'. The mode must be known at compile time.
    Pad => "Pad",
    /// `PadGrad(d, x, pad_width, mode)`: the adjoint of `Pad` in `x` (the interior of `d` in
    /// the constant mode; each element of `d` added into the element it copies in the others).
    PadGrad => "PadGrad",
    /// `ops.reflection_pad2d(x, padding)`: PyTorch's `ReflectionPad2d` of (N, C, H, W) or
    /// (C, H, W) input, `padding` an int or `(left, right, top, bottom)`, each less than the
    /// size of its axis.
    ReflectionPad2D => "ReflectionPad2D",
    /// `ops.replication_pad2d(x, padding)`: PyTorch's `ReplicationPad2d` (numpy's 'edge').
    ReplicationPad2D => "ReplicationPad2D",
    /// `ops.zero_pad2d(x, padding)`: PyTorch's `ZeroPad2d`.
    ZeroPad2D => "ZeroPad2D",
    /// `Pad2DGrad(d, x, padding, mode)`: the adjoint in `x` of the 2-D padding of `mode`
    /// ('reflect', 'edge' or 'constant').
    Pad2DGrad => "Pad2DGrad",
    /// `ops.permute(x, axes)`: `ops.transpose` with the axes required (PyTorch, MindSpore).
    Permute => "Permute",
    /// `ops.index_select(x, axis, index)`: MindSpore's, `ops.take(x, index, axis)` for a 1-D
    /// int32 or int64 `index`.
    IndexSelect => "IndexSelect",

    // ---- side effects ----------------------------------------------------------------
    /// `Load(param, u)`: the value of a Parameter in memory state `u`.
    Load => "Load",
    /// `UpdateState(u, x...)`: the memory (or IO) state after `x` happened.
    UpdateState => "UpdateState",
    /// `Depend(x, s...)`: `x`, once the states `s` are reached.
    Depend => "Depend",
    /// `anfora.Parameter(data, name, requires_grad)`: a new Parameter (module level only).
    MakeParameter => "Parameter",
    Assign => "Assign",
    AssignAdd => "AssignAdd",
    AssignSub => "AssignSub",
    ScatterUpdate => "ScatterUpdate",
    ScatterAdd => "ScatterAdd",
    ScatterNdUpdate => "ScatterNdUpdate",
    ScatterNdAdd => "ScatterNdAdd",
    /// Optimizer updates, in place on their Parameters.
    Sgd => "SGD",
    ApplyMomentum => "ApplyMomentum",
    Adam => "Adam",
    /// `anfora.set_seed(n)`: restarts the random generator.
    SetSeed => "SetSeed",
    Uniform => "UniformReal",
    Normal => "StandardNormal",
    Randint => "UniformInt",
    Bernoulli => "Bernoulli",
    Dropout => "Dropout",
    /// `DropoutMask(x, p, training)`: the keep mask `ops.dropout` draws (bool, shaped like `x`;
    /// all true, drawing nothing, when not training or `p` is 0). The grad stage runs
    /// `ops.dropout` as `DropoutApply(x, DropoutMask(x, p, training), p, training)` so that
    /// the backward pass uses the forward pass's mask.
    DropoutMask => "DropoutMask",
    /// `DropoutApply(x, mask, p, training)`: `x / (1 - p)` where `mask`, else 0 (`x` itself
    /// when not training or `p` is 0). Linear in `x`: its gradient is itself applied to `d`.
    DropoutApply => "DropoutApply",

    // ---- automatic differentiation ---------------------------------------------------
    /// `anfora.grad(fn, argnums=0, weights=None, sens_param=False)`: expanded by the grad
    /// stage. `argnums=...` means every argument; with `sens_param` the gradient function takes
    /// the output's sensitivity as an extra last argument.
    Grad => "grad",
    /// `anfora.value_and_grad(fn, argnums=0, weights=None, sens_param=False)`: as `grad`.
    ValueAndGrad => "value_and_grad",
    /// `anfora.vjp(fn, *primals)`: expanded by the grad stage.
    Vjp => "vjp",
    /// `anfora.jvp(fn, primals, tangents)`: rewritten by the grad stage into two `vjp`s.
    Jvp => "jvp",
    /// `ops.stop_gradient(x)`: `x`, with no gradient flowing back.
    StopGradient => "StopGradient",
    /// `GradAdd(a, b)`: sum of two sensitivities; `None` is zero, tuples add item by item.
    GradAdd => "GradAdd",
    /// `SumToShape(d, x)`: sensitivity `d` summed over the dimensions broadcasting added to
    /// `x` and cast to its dtype; `None` when `x` is not differentiable (ints, bools, ...).
    SumToShape => "SumToShape",
    /// `BroadcastLike(d, x)`: `d` broadcast to the shape of `x` (the dual of SumToShape).
    BroadcastLike => "BroadcastLike",
    /// `FillZeros(d, x)`: `d`, or zeros shaped like `x` where `d` is `None`.
    FillZeros => "FillZeros",
    /// `SensOnes(y)`: ones shaped like `y` (the default output sensitivity).
    SensOnes => "SensOnes",
    /// `SensCheck(d, y)`: `d`, after checking that a sensitivity given by the user (a `vjp`
    /// cotangent, a `sens_param` argument) has the structure, shape and dtype of the output `y`.
    SensCheck => "SensCheck",
    /// `GradTupleAt(t, i, d)`: a tuple as long as `t`, `None` everywhere but `d` at `i`.
    GradTupleAt => "GradTupleAt",
    /// `IndexGrad(d, x, index)`: zeros like tensor `x` holding `d` where `x[index]` reads.
    IndexGrad => "IndexGrad",
    /// `GradItem(d, i)`: item `i` of a tuple sensitivity (`None` stays `None`).
    GradItem => "GradItem",
    /// `GradHead(ds, n)`: all but the last `n` items of a tuple.
    GradHead => "GradHead",
    /// `GradPad(d, n)`: the tuple `d` followed by `n` Nones (the dual of GradHead).
    GradPad => "GradPad",
    /// `MatMulGrad(a, b, d)`: `(da, db)` for `a @ b` with numpy's 1-D and batch rules.
    MatMulGrad => "MatMulGrad",
    /// `Gemm(a, b, c, transpose_a, transpose_b)`: `op(a) @ op(b) + c` for float matrices of one
    /// dtype, `op` transposing when its flag is set and `c` (`None` or broadcast to the result)
    /// accumulated into. Only the optimizer emits it, after differentiation.
    Gemm => "Gemm",
    /// `ReduceGrad(kind, d, x, out, axis, keepdims)`: the sensitivity of `x` for a reduction.
    ReduceGrad => "ReduceGrad",
    /// `CustomGrad(name, d, out, args...)`: the gradients of a custom primitive's arguments
    /// (a tuple), from its registered backward rule.
    CustomGrad => "CustomGrad",
    /// `TransposeGrad(d, axes)`: `d` transposed by the inverse permutation.
    TransposeGrad => "TransposeGrad",
}

/// Python builtins that map directly to a primitive. `enumerate` and `zip` are handled by the
/// frontend (they are only allowed where their iterator can be lowered to a loop or a tuple).
const BUILTINS: &[(&str, Prim)] = &[
    ("print", Prim::Print),
    ("len", Prim::Len),
    ("abs", Prim::Abs),
    ("min", Prim::Min),
    ("max", Prim::Max),
    ("int", Prim::IntType),
    ("float", Prim::FloatType),
    ("bool", Prim::BoolType),
    ("str", Prim::StrType),
    ("repr", Prim::Repr),
    ("tuple", Prim::TupleType),
    ("list", Prim::ListType),
    ("range", Prim::Range),
    ("isinstance", Prim::IsInstance),
    ("divmod", Prim::Divmod),
    ("sum", Prim::Sum),
    ("any", Prim::Any),
    ("all", Prim::All),
    ("pow", Prim::Pow),
];

/// Functions of the `anfora.ops` namespace.
const OPS: &[(&str, Prim)] = &[
    ("add", Prim::Add),
    ("sub", Prim::Sub),
    ("mul", Prim::Mul),
    ("div", Prim::Div),
    ("floor_div", Prim::FloorDiv),
    ("mod", Prim::Mod),
    ("pow", Prim::Pow),
    ("neg", Prim::Neg),
    ("abs", Prim::Abs),
    ("matmul", Prim::MatMul),
    ("maximum", Prim::Maximum),
    ("minimum", Prim::Minimum),
    ("equal", Prim::Eq),
    ("not_equal", Prim::Ne),
    ("less", Prim::Lt),
    ("less_equal", Prim::Le),
    ("greater", Prim::Gt),
    ("greater_equal", Prim::Ge),
    ("logical_not", Prim::LogicalNot),
    ("exp", Prim::Exp),
    ("log", Prim::Log),
    ("sqrt", Prim::Sqrt),
    ("tanh", Prim::Tanh),
    ("sin", Prim::Sin),
    ("cos", Prim::Cos),
    ("sigmoid", Prim::Sigmoid),
    ("relu", Prim::Relu),
    ("log1p", Prim::Log1p),
    ("expm1", Prim::Expm1),
    ("erf", Prim::Erf),
    ("gelu", Prim::Gelu),
    ("silu", Prim::Silu),
    ("softplus", Prim::Softplus),
    ("rsqrt", Prim::Rsqrt),
    ("sign", Prim::Sign),
    ("clip", Prim::Clip),
    ("where", Prim::Where),
    ("cast", Prim::Cast),
    ("sum", Prim::ReduceSum),
    ("mean", Prim::ReduceMean),
    ("max", Prim::ReduceMax),
    ("min", Prim::ReduceMin),
    ("prod", Prim::ReduceProd),
    ("reshape", Prim::Reshape),
    ("transpose", Prim::Transpose),
    ("permute", Prim::Permute),
    ("conv2d", Prim::Conv2D),
    ("argmax", Prim::ArgMax),
    ("argmin", Prim::ArgMin),
    ("one_hot", Prim::OneHot),
    ("squeeze", Prim::Squeeze),
    ("expand_dims", Prim::ExpandDims),
    ("unsqueeze", Prim::ExpandDims),
    ("broadcast_to", Prim::BroadcastTo),
    ("concat", Prim::Concat),
    ("stack", Prim::Stack),
    ("split", Prim::Split),
    ("take", Prim::Take),
    ("gather", Prim::Take),
    ("index_select", Prim::IndexSelect),
    ("pad", Prim::Pad),
    ("reflection_pad2d", Prim::ReflectionPad2D),
    ("replication_pad2d", Prim::ReplicationPad2D),
    ("zero_pad2d", Prim::ZeroPad2D),
    ("max_pool2d", Prim::MaxPool2D),
    ("avg_pool2d", Prim::AvgPool2D),
    ("softmax", Prim::Softmax),
    ("log_softmax", Prim::LogSoftmax),
    ("logsumexp", Prim::LogSumExp),
    ("zeros", Prim::Zeros),
    ("ones", Prim::Ones),
    ("full", Prim::Full),
    ("arange", Prim::Arange),
    ("tensor", Prim::MakeTensor),
    ("zeros_like", Prim::ZerosLike),
    ("ones_like", Prim::OnesLike),
    ("assign", Prim::Assign),
    ("assign_add", Prim::AssignAdd),
    ("assign_sub", Prim::AssignSub),
    ("scatter_update", Prim::ScatterUpdate),
    ("scatter_add", Prim::ScatterAdd),
    ("scatter_nd_update", Prim::ScatterNdUpdate),
    ("scatter_nd_add", Prim::ScatterNdAdd),
    ("sgd", Prim::Sgd),
    ("apply_momentum", Prim::ApplyMomentum),
    ("adam", Prim::Adam),
    ("depend", Prim::Depend),
    ("uniform", Prim::Uniform),
    ("normal", Prim::Normal),
    ("randint", Prim::Randint),
    ("bernoulli", Prim::Bernoulli),
    ("dropout", Prim::Dropout),
    ("stop_gradient", Prim::StopGradient),
];

/// Functions of the `anfora` namespace itself.
const ANFORA: &[(&str, Prim)] = &[
    ("Parameter", Prim::MakeParameter),
    ("set_seed", Prim::SetSeed),
    ("grad", Prim::Grad),
    ("value_and_grad", Prim::ValueAndGrad),
    ("vjp", Prim::Vjp),
    ("jvp", Prim::Jvp),
];

impl Prim {
    pub fn builtin(name: &str) -> Option<Prim> {
        BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }

    /// `ops.<name>`: a built-in or a registered custom primitive.
    pub fn op(name: &str) -> Option<Prim> {
        Prim::builtin_op(name).or_else(|| crate::custom::lookup(name))
    }

    pub(crate) fn builtin_op(name: &str) -> Option<Prim> {
        OPS.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }

    /// Names of the `anfora.ops` namespace (for "did you mean" hints).
    pub fn op_names() -> impl Iterator<Item = &'static str> {
        OPS.iter().map(|(n, _)| *n).chain(crate::custom::names())
    }

    /// `anfora.Parameter`, `anfora.set_seed`.
    pub fn anfora_function(name: &str) -> Option<Prim> {
        ANFORA.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }

    pub fn anfora_function_names() -> impl Iterator<Item = &'static str> {
        ANFORA.iter().map(|(n, _)| *n)
    }

    pub fn builtin_names() -> impl Iterator<Item = &'static str> {
        BUILTINS.iter().map(|(n, _)| *n).chain(["enumerate", "zip"])
    }

    /// How users call it: `len`, `ops.sum`, or the IR name for internal primitives.
    pub fn python_name(self) -> String {
        if let Some((n, _)) = BUILTINS.iter().find(|(_, p)| *p == self) {
            return (*n).to_string();
        }
        if let Some((n, _)) = OPS.iter().find(|(_, p)| *p == self) {
            return format!("ops.{n}");
        }
        if let Some((n, _)) = ANFORA.iter().find(|(_, p)| *p == self) {
            return format!("anfora.{n}");
        }
        if let Prim::Custom(id) = self {
            return format!("ops.{}", crate::custom::get(id).name);
        }
        self.name().to_string()
    }

    /// The side-effect attributes (MindSpore's `side_effect_mem`, `_io`, `_hidden`,
    /// `_propagate`).
    pub fn effects(self) -> Effects {
        use Prim::*;
        let none = Effects::default();
        match self {
            // Creating a Parameter makes a new identity: never merged, folded or removed.
            Print | Assert | Raise | SetSeed | MakeParameter => Effects { io: true, ..none },
            Assign | AssignAdd | AssignSub | ScatterUpdate | ScatterAdd | ScatterNdUpdate
            | ScatterNdAdd | Sgd | ApplyMomentum | Adam => Effects { mem: true, ..none },
            Uniform | Normal | Randint | Bernoulli | Dropout | DropoutMask => Effects {
                hidden: true,
                ..none
            },
            // The grad primitives pass on the effects of the function they differentiate.
            Partial | Depend | Grad | ValueAndGrad | Vjp | Jvp => Effects {
                propagate: true,
                ..none
            },
            Custom(id) => crate::custom::get(id).effects,
            _ => none,
        }
    }

    /// Whether argument `i` is taken as a Parameter reference rather than read as a value.
    /// Everywhere else a Parameter argument is read (`Load`) at that point of the program.
    pub fn takes_ref(self, i: usize) -> bool {
        use Prim::*;
        match self {
            MakeTuple | MakeList | Partial | Depend | UpdateState | Is | IsNot | CheckBound
            | CallKw => true,
            Switch => i > 0,
            GetAttr | Load => i == 0,
            Assign | AssignAdd | AssignSub | ScatterUpdate | ScatterAdd | ScatterNdUpdate
            | ScatterNdAdd | Sgd => i == 0,
            ApplyMomentum => i <= 1,
            Adam => i <= 2,
            Custom(id) => i < crate::custom::get(id).written_refs,
            _ => false,
        }
    }

    /// The number of leading arguments that are Parameters written in place.
    pub fn written_refs(self) -> usize {
        use Prim::*;
        match self {
            Assign | AssignAdd | AssignSub | ScatterUpdate | ScatterAdd | ScatterNdUpdate
            | ScatterNdAdd | Sgd => 1,
            ApplyMomentum => 2,
            Adam => 3,
            Custom(id) => crate::custom::get(id).written_refs,
            _ => 0,
        }
    }

    /// True for the builtin classes that `isinstance` accepts.
    pub fn is_type(self) -> bool {
        matches!(
            self,
            Prim::IntType
                | Prim::FloatType
                | Prim::BoolType
                | Prim::StrType
                | Prim::TupleType
                | Prim::ListType
                | Prim::TensorType
        )
    }

    /// The Python-level signature, used to bind keyword arguments and defaults.
    pub fn signature(self) -> &'static Signature {
        static TABLE: OnceLock<Vec<(Prim, Signature)>> = OnceLock::new();
        if let Prim::Custom(id) = self {
            return &crate::custom::get(id).signature;
        }
        let table = TABLE.get_or_init(|| {
            let mut t: Vec<(Prim, Signature)> =
                Prim::ALL.iter().map(|&p| (p, build_signature(p))).collect();
            t.sort_by_key(|(p, _)| *p);
            t
        });
        let i = table
            .binary_search_by_key(&self, |(p, _)| *p)
            .expect("every built-in primitive has a signature");
        &table[i].1
    }

    /// A function of its arguments alone (no effects, never raises through a callee, creates
    /// no closure): passes may merge equal calls and drop unused ones.
    pub fn is_pure(self) -> bool {
        self.pure_with(self.effects())
    }

    /// [`Prim::is_pure`] under effect attributes `e` (tests mark primitives hidden).
    pub fn pure_with(self, e: Effects) -> bool {
        !matches!(
            self,
            Prim::Print
                | Prim::Assert
                | Prim::Raise
                | Prim::CheckBound
                | Prim::CallKw
                | Prim::Partial
        ) && !e.io
            && !e.mem
            && !e.hidden
    }

    /// Whether a call with constant arguments may be evaluated at compile time. State plumbing
    /// is not (a `Load` reads the Parameter when the program runs), nor are custom kernels.
    pub fn foldable(self) -> bool {
        self.foldable_with(self.effects())
    }

    /// [`Prim::foldable`] under effect attributes `e` (tests mark primitives hidden).
    pub fn foldable_with(self, e: Effects) -> bool {
        self.pure_with(e)
            && !matches!(
                self,
                Prim::Load | Prim::UpdateState | Prim::Depend | Prim::Switch | Prim::Custom(_)
            )
    }
}

fn req(name: &str) -> Param {
    Param::required(name)
}

fn opt(name: &str, default: Const) -> Param {
    Param::optional(name, default)
}

fn build_signature(p: Prim) -> Signature {
    use Prim::*;
    let name = p.python_name();
    let fixed = |params: Vec<Param>| Signature::new(&name, params, false, vec![]);
    let variadic = |kwonly: Vec<Param>| Signature::new(&name, vec![], true, kwonly);
    match p {
        Switch => fixed(vec![req("cond"), req("true_branch"), req("false_branch")]),
        Partial | MakeTuple | MakeList | Zip | Min | Max | Range => variadic(vec![]),
        TupleGetItem | GetItem => fixed(vec![req("obj"), req("index")]),
        MakeSlice => fixed(vec![req("start"), req("stop"), req("step")]),
        Truth | Repr | IterLen => fixed(vec![req("obj")]),
        CallKw => Signature::new(&name, vec![req("func"), req("names")], true, vec![]),
        GetAttr => fixed(vec![req("obj"), req("name")]),
        CheckBound => fixed(vec![req("value"), req("name"), req("is_free")]),
        Unpack => fixed(vec![req("seq"), req("n")]),
        Raise => fixed(vec![req("kind"), req("message")]),
        Assert => fixed(vec![req("cond"), req("message")]),
        Enumerate => fixed(vec![req("iterable"), opt("start", Const::Int(0))]),
        Add | Sub | Mul | Div | FloorDiv | Mod | MatMul | LShift | RShift | BitAnd | BitOr
        | BitXor | InplaceAdd | InplaceMul | Eq | Ne | Lt | Le | Gt | Ge | Is | IsNot | In
        | NotIn | Maximum | Minimum => fixed(vec![req("x"), req("y")]),
        Pow => fixed(vec![req("base"), req("exp")]),
        Divmod => fixed(vec![req("x"), req("y")]),
        Neg | Pos | Invert | Not | Abs | Exp | Log | Sqrt | Tanh | Sin | Cos | Sigmoid | Relu
        | LogicalNot | Log1p | Expm1 | Erf | Silu | Softplus | Rsqrt | Sign => {
            fixed(vec![req("x")])
        }
        Gelu => fixed(vec![req("x"), opt("approximate", Const::Bool(false))]),
        Clip => fixed(vec![
            req("x"),
            opt("min", Const::None),
            opt("max", Const::None),
        ]),
        ClipGrad => fixed(vec![
            req("d"),
            req("x"),
            req("min"),
            req("max"),
            req("which"),
        ]),
        Print => variadic(vec![
            opt("sep", Const::str(" ")),
            opt("end", Const::str("\n")),
        ]),
        Len => fixed(vec![req("obj")]),
        IntType => fixed(vec![opt("x", Const::Int(0))]),
        FloatType => fixed(vec![opt("x", Const::Float(0.0))]),
        BoolType => fixed(vec![opt("x", Const::Bool(false))]),
        StrType => fixed(vec![opt("object", Const::str(""))]),
        TupleType | ListType => fixed(vec![opt("iterable", Const::tuple(vec![]))]),
        IsInstance => fixed(vec![req("obj"), req("class_or_tuple")]),
        Sum => fixed(vec![req("iterable"), opt("start", Const::Int(0))]),
        Any | All => fixed(vec![req("iterable")]),
        TensorType => fixed(vec![req("data")]),
        Zeros | Ones => fixed(vec![req("shape"), opt("dtype", Const::None)]),
        Full => fixed(vec![
            req("shape"),
            req("fill_value"),
            opt("dtype", Const::None),
        ]),
        Arange => fixed(vec![
            req("start"),
            opt("stop", Const::None),
            opt("step", Const::None),
            opt("dtype", Const::None),
        ]),
        MakeTensor => fixed(vec![req("data"), opt("dtype", Const::None)]),
        ZerosLike | OnesLike => fixed(vec![req("x"), opt("dtype", Const::None)]),
        Where => fixed(vec![req("condition"), req("x"), req("y")]),
        Cast => fixed(vec![req("x"), req("dtype")]),
        ReduceSum | ReduceMean | ReduceMax | ReduceMin | ReduceProd => fixed(vec![
            req("x"),
            opt("axis", Const::None),
            opt("keepdims", Const::Bool(false)),
        ]),
        Reshape => fixed(vec![req("x"), req("shape")]),
        Transpose => fixed(vec![req("x"), opt("axes", Const::None)]),
        Conv2D => fixed(vec![
            req("x"),
            req("weight"),
            opt("stride", Const::Int(1)),
            opt("padding", Const::Int(0)),
            opt("dilation", Const::Int(1)),
            opt("groups", Const::Int(1)),
        ]),
        MaxPool2D | AvgPool2D => fixed(vec![
            req("x"),
            req("kernel_size"),
            opt("stride", Const::None),
            opt("padding", Const::Int(0)),
        ]),
        MaxPool2DGrad | MaxPool2DGradGrad => fixed(vec![
            req("d"),
            req("x"),
            req("kernel_size"),
            req("stride"),
            req("padding"),
        ]),
        AvgPool2DGrad => fixed(vec![
            req("d"),
            req("input_shape"),
            req("kernel_size"),
            req("stride"),
            req("padding"),
        ]),
        ArgMax | ArgMin => fixed(vec![
            req("x"),
            opt("axis", Const::None),
            opt("keepdims", Const::Bool(false)),
        ]),
        OneHot => fixed(vec![
            req("indices"),
            req("depth"),
            opt("dtype", Const::None),
        ]),
        Squeeze => fixed(vec![req("x"), opt("axis", Const::None)]),
        ExpandDims => fixed(vec![req("x"), req("axis")]),
        BroadcastTo => fixed(vec![req("x"), req("shape")]),
        Concat | Stack => fixed(vec![req("tensors"), opt("axis", Const::Int(0))]),
        Split => fixed(vec![
            req("x"),
            req("indices_or_sections"),
            opt("axis", Const::Int(0)),
        ]),
        ConcatGrad | StackGrad => fixed(vec![req("d"), req("tensors"), req("axis")]),
        Take => fixed(vec![req("x"), req("indices"), opt("axis", Const::None)]),
        TakeGrad => fixed(vec![req("d"), req("x"), req("indices"), req("axis")]),
        Pad => fixed(vec![
            req("x"),
            req("pad_width"),
            opt("mode", Const::str("constant")),
            opt("constant_values", Const::None),
        ]),
        PadGrad => fixed(vec![req("d"), req("x"), req("pad_width"), req("mode")]),
        ReflectionPad2D | ReplicationPad2D | ZeroPad2D => fixed(vec![req("x"), req("padding")]),
        Pad2DGrad => fixed(vec![req("d"), req("x"), req("padding"), req("mode")]),
        Permute => fixed(vec![req("x"), req("axes")]),
        IndexSelect => fixed(vec![req("x"), req("axis"), req("index")]),
        Softmax | LogSoftmax => fixed(vec![req("x"), opt("axis", Const::Int(-1))]),
        LogSumExp => fixed(vec![
            req("x"),
            opt("axis", Const::None),
            opt("keepdims", Const::Bool(false)),
        ]),
        Conv2DBackpropInput => fixed(vec![
            req("d"),
            req("weight"),
            req("input_shape"),
            req("stride"),
            req("padding"),
            req("dilation"),
            req("groups"),
        ]),
        Conv2DBackpropFilter => fixed(vec![
            req("d"),
            req("x"),
            req("weight_shape"),
            req("stride"),
            req("padding"),
            req("dilation"),
            req("groups"),
        ]),
        Load => fixed(vec![req("param"), req("u")]),
        UpdateState => variadic(vec![]),
        Depend => Signature::new(&name, vec![req("value")], true, vec![]),
        MakeParameter => fixed(vec![
            req("data"),
            opt("name", Const::None),
            opt("requires_grad", Const::Bool(true)),
        ]),
        Assign | AssignAdd | AssignSub => fixed(vec![req("variable"), req("value")]),
        ScatterUpdate | ScatterAdd | ScatterNdUpdate | ScatterNdAdd => {
            fixed(vec![req("input_x"), req("indices"), req("updates")])
        }
        Sgd => fixed(vec![req("param"), req("grad"), req("lr")]),
        ApplyMomentum => fixed(vec![
            req("variable"),
            req("accumulation"),
            req("learning_rate"),
            req("gradient"),
            req("momentum"),
            opt("use_nesterov", Const::Bool(false)),
        ]),
        Adam => fixed(vec![
            req("param"),
            req("m"),
            req("v"),
            req("grad"),
            req("step"),
            opt("lr", Const::Float(0.001)),
            opt("beta1", Const::Float(0.9)),
            opt("beta2", Const::Float(0.999)),
            opt("eps", Const::Float(1e-8)),
        ]),
        SetSeed => fixed(vec![req("seed")]),
        Uniform => fixed(vec![
            req("shape"),
            opt("minval", Const::Float(0.0)),
            opt("maxval", Const::Float(1.0)),
            opt("dtype", Const::None),
        ]),
        Normal => fixed(vec![
            req("shape"),
            opt("mean", Const::Float(0.0)),
            opt("stddev", Const::Float(1.0)),
            opt("dtype", Const::None),
        ]),
        Randint => fixed(vec![
            req("low"),
            req("high"),
            req("shape"),
            opt("dtype", Const::None),
        ]),
        Bernoulli => fixed(vec![req("p")]),
        Dropout => fixed(vec![
            req("x"),
            opt("p", Const::Float(0.5)),
            opt("training", Const::Bool(true)),
        ]),
        DropoutMask => fixed(vec![req("x"), req("p"), req("training")]),
        DropoutApply => fixed(vec![req("x"), req("mask"), req("p"), req("training")]),
        Grad | ValueAndGrad => fixed(vec![
            req("fn"),
            opt("argnums", Const::Int(0)),
            opt("weights", Const::None),
            opt("sens_param", Const::Bool(false)),
        ]),
        Vjp => Signature::new(&name, vec![req("fn")], true, vec![]),
        Jvp => fixed(vec![req("fn"), req("primals"), req("tangents")]),
        StopGradient | SensOnes => fixed(vec![req("x")]),
        SensCheck => fixed(vec![req("d"), req("y")]),
        GradAdd => fixed(vec![req("a"), req("b")]),
        SumToShape | BroadcastLike | FillZeros => fixed(vec![req("d"), req("x")]),
        GradTupleAt => fixed(vec![req("t"), req("i"), req("d")]),
        GradItem => fixed(vec![req("d"), req("i")]),
        IndexGrad => fixed(vec![req("d"), req("x"), req("index")]),
        CustomGrad => variadic(vec![]),
        GradHead => fixed(vec![req("ds"), req("n")]),
        GradPad => fixed(vec![req("d"), req("n")]),
        MatMulGrad => fixed(vec![req("a"), req("b"), req("d")]),
        Gemm => fixed(vec![
            req("a"),
            req("b"),
            req("c"),
            req("transpose_a"),
            req("transpose_b"),
        ]),
        ReduceGrad => fixed(vec![
            req("kind"),
            req("d"),
            req("x"),
            req("out"),
            req("axis"),
            req("keepdims"),
        ]),
        TransposeGrad => fixed(vec![req("d"), req("axes")]),
        Custom(id) => crate::custom::get(id).signature.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_resolve() {
        assert_eq!(Prim::builtin("len"), Some(Prim::Len));
        assert_eq!(Prim::op("sum"), Some(Prim::ReduceSum));
        assert_eq!(Prim::op("add"), Some(Prim::Add));
        assert_eq!(Prim::builtin("open"), None);
        assert_eq!(Prim::ReduceSum.python_name(), "ops.sum");
        assert_eq!(Prim::Len.python_name(), "len");
        assert_eq!(Prim::Switch.python_name(), "Switch");
    }

    #[test]
    fn every_primitive_has_a_signature() {
        for p in Prim::ALL {
            let _ = p.signature();
        }
        let sig = Prim::ReduceSum.signature();
        assert_eq!(sig.params.len(), 3);
        assert_eq!(&*sig.params[1].name, "axis");
    }

    #[test]
    fn effects_are_declared() {
        assert!(Prim::Print.effects().io);
        assert!(!Prim::Add.effects().io);
        assert!(Prim::Partial.effects().propagate);
        assert!(Prim::Assign.effects().mem && !Prim::Assign.effects().io);
        assert!(Prim::Uniform.effects().hidden && !Prim::Uniform.effects().mem);
        assert!(Prim::Depend.effects().propagate);
        assert!(Prim::Adam.takes_ref(2) && !Prim::Adam.takes_ref(3));
        assert_eq!(Prim::ApplyMomentum.written_refs(), 2);
        assert!(!Prim::Add.takes_ref(0));
        assert_eq!(Prim::anfora_function("set_seed"), Some(Prim::SetSeed));
        assert_eq!(Prim::SetSeed.python_name(), "anfora.set_seed");
    }
}

//! Elementwise functions of tensors and Python numbers: `abs`, exponentials and logarithms,
//! roots, trigonometry, `erf`, the activations (`sigmoid`, `relu`, `gelu`, `silu`,
//! `softplus`), `sign`, `logical_not`, `clip`, `where` and `cast`.

use std::io::Write;

use anfora_tensor::{DType, Scalar, Tensor, UnaryOp, promote_types};

use crate::abs::{Abs, Rule, err};
use crate::args::{
    Kind, broadcast, check_broadcast_all, dtype_arg, int_arg, kind, need_tensor, scalar_of,
    tensor_abs, unary_tensor_abs,
};
use crate::constant::Const;
use crate::def::{
    Backward, Kernels, PrimDef, Py, always, primitives, unless_float, unless_known_floats,
};
use crate::emit::{Call, Emit, Grads, float, int, unbroadcast};
use crate::ids::NodeId;
use crate::prim::Prim;
use crate::pynum::{PyErr, overflow, tensor, type_error, value_error};
use crate::python::{binary, truth};
use crate::value::{OpResult, Value};

primitives! {
    family math = 4;

    /// `abs(x)`: ints keep their kind (`abs(-2**63)` overflows, as in Python).
    Abs = function("Abs", UnaryOp::Abs, &[Py::Builtin("abs"), Py::Op("abs")],
        Backward::Rule(abs_back))
        .raising(always);
    Exp = function("Exp", UnaryOp::Exp, &[Py::Op("exp")], Backward::Rule(exp_back));
    Log = function("Log", UnaryOp::Log, &[Py::Op("log")], Backward::Rule(log_back));
    Sqrt = function("Sqrt", UnaryOp::Sqrt, &[Py::Op("sqrt")], Backward::Rule(sqrt_back));
    Tanh = function("Tanh", UnaryOp::Tanh, &[Py::Op("tanh")], Backward::Rule(tanh_back));
    Sin = function("Sin", UnaryOp::Sin, &[Py::Op("sin")], Backward::Rule(sin_back));
    Cos = function("Cos", UnaryOp::Cos, &[Py::Op("cos")], Backward::Rule(cos_back));
    Sigmoid = function("Sigmoid", UnaryOp::Sigmoid, &[Py::Op("sigmoid")],
        Backward::Rule(sigmoid_back));
    Relu = function("ReLU", UnaryOp::Relu, &[Py::Op("relu")], Backward::Rule(relu_back))
        .raising(unless_known_floats);
    Log1p = function("Log1p", UnaryOp::Log1p, &[Py::Op("log1p")], Backward::Rule(log1p_back));
    Expm1 = function("Expm1", UnaryOp::Expm1, &[Py::Op("expm1")], Backward::Rule(expm1_back));
    Erf = function("Erf", UnaryOp::Erf, &[Py::Op("erf")], Backward::Rule(erf_back));
    /// `ops.gelu(x, approximate=False)`: exact (erf) GELU, or its tanh form.
    Gelu = PrimDef::new("GeLU", "(x, approximate=False)", |p, a| unary_abs(p, &a[0]),
        |_, a, _| gelu(&a[0], &a[1]), Backward::First(gelu_back))
        .with_kernels(Kernels::Tensor { fused: true }).called(&[Py::Op("gelu")])
        .raising(gelu_raises);
    Silu = function("SiLU", UnaryOp::Silu, &[Py::Op("silu")], Backward::Rule(silu_back));
    Softplus = function("Softplus", UnaryOp::Softplus, &[Py::Op("softplus")],
        Backward::Rule(softplus_back));
    Rsqrt = function("Rsqrt", UnaryOp::Rsqrt, &[Py::Op("rsqrt")], Backward::Rule(rsqrt_back));
    /// `ops.hardswish(x)`: `x * min(max(x + 3, 0), 6) / 6` of a float tensor (MobileNetV3's;
    /// PyTorch's `hardswish`, computed in the same order). Its derivative is PyTorch's: 0 below
    /// -3, 1 above 3, `x / 3 + 1/2` from -3 to 3, both ends included.
    HardSwish = PrimDef::new("HSwish", "(x)", hardswish_abs, |_, a, _| hardswish(&a[0]),
        Backward::First(hardswish_back))
        .tensor_kernel().called(&[Py::Op("hardswish")]);
    /// The sign: no gradient flows back.
    Sign = function("Sign", UnaryOp::Sign, &[Py::Op("sign")], Backward::Zero);
    LogicalNot = function("LogicalNot", UnaryOp::LogicalNot, &[Py::Op("logical_not")],
        Backward::Zero)
        .raising(always);
    /// `ops.clip(x, min=None, max=None)`: numpy's `clip`, `minimum(maximum(x, min), max)` with
    /// a `None` bound left out.
    Clip = PrimDef::new("Clip", "(x, min=None, max=None)", clip_abs,
        |_, a, _| clip(&a[0], &a[1], &a[2]), Backward::Rule(clip_back))
        .tensor_kernel().called(&[Py::Op("clip")]);
    /// `ClipGrad(d, x, min, max, which)`: the sensitivity of `x` (which 0), `min` (1) or `max`
    /// (2) of `Clip`, before broadcasting is summed back; `None` for a `None` bound. Linear in
    /// its sensitivity, by a mask that is piecewise constant in the others.
    ClipGrad = PrimDef::new("ClipGrad", "(d, x, min, max, which)", clip_abs,
        |_, a, _| clip_grad(&a[0], &a[1], &a[2], &a[3], &a[4]),
        Backward::First(|e, c| e.op(Prim::ClipGrad, &[c.d, c.x[1], c.x[2], c.x[3], c.x[4]])))
        .tensor_kernel();
    Where = PrimDef::new("Where", "(condition, x, y)", |_, a| where_abs(a), |_, a, _| where_(a),
        Backward::Rule(where_back))
        .with_kernels(Kernels::Tensor { fused: true }).called(&[Py::Op("where")]);
    Cast = PrimDef::new("Cast", "(x, dtype)", |_, a| Ok(cast_abs(&a[0], &a[1])), |_, a, _| cast(a),
        Backward::Rule(|e, c| chain(e, c, |e| unbroadcast(e, c.d, c.x[0]))))
        .tensor_kernel().called(&[Py::Op("cast")]);
}

/// `hardswish` takes float tensors (of any shape and float dtype).
fn hardswish_abs(_: Prim, a: &[Abs]) -> Rule {
    match &a[0] {
        Abs::Tensor(t) if t.dtype.is_float() => Ok(a[0].clone()),
        Abs::Tensor(t) => Err(err(format!(
            "hardswish expects a float tensor, got {}",
            t.dtype
        ))),
        Abs::Any => Ok(Abs::Any),
        other => Err(err(format!(
            "hardswish expects a float tensor, got {other}"
        ))),
    }
}

fn hardswish(x: &Value) -> OpResult {
    let t = need_tensor(x, "ops.hardswish")?;
    if !t.dtype().is_float() {
        let msg = format!("ops.hardswish expects a float tensor, got {}", t.dtype());
        return Err(type_error(msg));
    }
    let shifted = binary(Prim::Add, x, &Value::Float(3.0))?;
    let relu6 = clip(&shifted, &Value::Float(0.0), &Value::Float(6.0))?;
    let scaled = binary(Prim::Mul, x, &relu6)?;
    binary(Prim::Div, &scaled, &Value::Float(6.0))
}

/// `d * (x / 3 + 1/2)` inside [-3, 3], `d` above it, 0 below: built from differentiable
/// operations (the comparisons have no gradient), so higher orders follow.
fn hardswish_back(e: &mut dyn Emit, c: &Call) -> NodeId {
    let x = c.x[0];
    let (three, minus_three, half) = (float(e, 3.0), float(e, -3.0), float(e, 0.5));
    let ramp = e.op(Prim::Div, &[x, three]);
    let ramp = e.op(Prim::Add, &[ramp, half]);
    let from = e.op(Prim::Ge, &[x, minus_three]);
    let to = e.op(Prim::Le, &[x, three]);
    let inside = e.op(Prim::Mul, &[from, to]);
    let above = e.op(Prim::Gt, &[x, three]);
    let slope = e.op(Prim::Mul, &[ramp, inside]);
    let slope = e.op(Prim::Add, &[slope, above]);
    e.op(Prim::Mul, &[c.d, slope])
}

/// GELU raises unless its operand is a float tensor and `approximate` a known bool.
fn gelu_raises(a: &[Abs]) -> bool {
    !matches!((&a[0], &a[1]), (Abs::Tensor(t), Abs::Bool(Some(_))) if t.dtype.is_float())
}

/// An elementwise function of a tensor or a Python number (a float), numpy's on tensors, with
/// its derivative.
const fn function(
    name: &'static str,
    op: UnaryOp,
    python: &'static [Py],
    backward: Backward,
) -> PrimDef {
    PrimDef::new(
        name,
        "(x)",
        |p, a| unary_abs(p, &a[0]),
        function_value,
        backward,
    )
    .with_kernels(Kernels::Unary(op))
    .called(python)
    .raising(unless_float)
}

fn function_value(p: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    match (p, &a[0]) {
        (Prim::Abs, x) => abs(x),
        (Prim::LogicalNot, Value::Tensor(_)) => math(p, &a[0]),
        (Prim::LogicalNot, v) => Ok(Value::Bool(!truth(v)?)),
        (_, x) => math(p, x),
    }
}

fn cast(a: &[Value]) -> OpResult {
    let t = need_tensor(&a[0], "ops.cast")?;
    let d = dtype_arg(&a[1], None)?.ok_or_else(|| type_error("ops.cast() needs a dtype"))?;
    Ok(Value::Tensor(tensor(t.try_cast(d))?))
}

/// `abs`: the sign of `x` times `d`.
fn abs_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let zero = int(e, 0);
    let pos = e.op(Prim::Gt, &[c.x[0], zero]);
    let neg = e.op(Prim::Lt, &[c.x[0], zero]);
    let a = e.op(Prim::Mul, &[c.d, pos]);
    let b = e.op(Prim::Mul, &[c.d, neg]);
    let t = e.op(Prim::Sub, &[a, b]);
    Some(vec![Some(unbroadcast(e, t, c.x[0]))])
}

fn gelu_back(e: &mut dyn Emit, c: &Call) -> NodeId {
    let t = gelu_derivative(e, c.x[0], c.x[1]);
    e.op(Prim::Mul, &[c.d, t])
}

/// `clip` routes the sensitivity to `x` or to the bound that wins, broadcasting summed back.
fn clip_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    Some(c.each(e, 0..3, |e, i| {
        let k = int(e, i as i64);
        let t = e.op(Prim::ClipGrad, &[c.d, c.x[0], c.x[1], c.x[2], k]);
        unbroadcast(e, t, c.x[i])
    }))
}

fn where_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    Some(c.each(e, 1..3, |e, i| {
        let mask = if i == 1 {
            c.x[0]
        } else {
            e.op(Prim::LogicalNot, &[c.x[0]])
        };
        let t = e.op(Prim::Mul, &[c.d, mask]);
        unbroadcast(e, t, c.x[i])
    }))
}

/// The derivative of `exp` times `d`.
fn exp_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| e.op(Prim::Mul, &[c.d, c.out]))
}

/// The derivative of `log` times `d`.
fn log_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| e.op(Prim::Div, &[c.d, c.x[0]]))
}

/// The derivative of `sqrt` times `d`.
fn sqrt_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| {
        let half = float(e, 0.5);
        let t = e.op(Prim::Mul, &[c.d, half]);
        e.op(Prim::Div, &[t, c.out])
    })
}

/// The derivative of `tanh` times `d`.
fn tanh_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| {
        let one = int(e, 1);
        let sq = e.op(Prim::Mul, &[c.out, c.out]);
        let t = e.op(Prim::Sub, &[one, sq]);
        e.op(Prim::Mul, &[c.d, t])
    })
}

/// The derivative of `sin` times `d`.
fn sin_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| {
        let cos = e.op(Prim::Cos, &[c.x[0]]);
        e.op(Prim::Mul, &[c.d, cos])
    })
}

/// The derivative of `cos` times `d`.
fn cos_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| {
        let sin = e.op(Prim::Sin, &[c.x[0]]);
        let t = e.op(Prim::Mul, &[c.d, sin]);
        e.op(Prim::Neg, &[t])
    })
}

/// The derivative of `sigmoid` times `d`.
fn sigmoid_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| {
        let one = int(e, 1);
        let t = e.op(Prim::Sub, &[one, c.out]);
        let t = e.op(Prim::Mul, &[c.out, t]);
        e.op(Prim::Mul, &[c.d, t])
    })
}

/// The derivative of `relu` times `d`.
fn relu_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| {
        let zero = int(e, 0);
        let pos = e.op(Prim::Gt, &[c.x[0], zero]);
        let t = e.op(Prim::Mul, &[c.d, pos]);
        unbroadcast(e, t, c.x[0])
    })
}

/// The derivative of `log1p` times `d`.
fn log1p_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| {
        let one = int(e, 1);
        let t = e.op(Prim::Add, &[c.x[0], one]);
        e.op(Prim::Div, &[c.d, t])
    })
}

/// The derivative of `expm1` times `d`.
fn expm1_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| {
        let one = int(e, 1);
        let t = e.op(Prim::Add, &[c.out, one]);
        e.op(Prim::Mul, &[c.d, t])
    })
}

/// The derivative of `erf` times `d`: 2/√π · exp(-x²).
fn erf_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| {
        let k = float(e, std::f64::consts::FRAC_2_SQRT_PI);
        let sq = e.op(Prim::Mul, &[c.x[0], c.x[0]]);
        let nsq = e.op(Prim::Neg, &[sq]);
        let t = e.op(Prim::Exp, &[nsq]);
        let t = e.op(Prim::Mul, &[t, k]);
        e.op(Prim::Mul, &[c.d, t])
    })
}

/// The derivative of `silu` times `d`: s + x·s·(1 - s) with s = sigmoid(x).
fn silu_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| {
        let one = int(e, 1);
        let s = e.op(Prim::Sigmoid, &[c.x[0]]);
        let t = e.op(Prim::Sub, &[one, s]);
        let t = e.op(Prim::Mul, &[c.x[0], t]);
        let t = e.op(Prim::Add, &[one, t]);
        let t = e.op(Prim::Mul, &[s, t]);
        e.op(Prim::Mul, &[c.d, t])
    })
}

/// The derivative of `softplus` times `d`.
fn softplus_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| {
        let s = e.op(Prim::Sigmoid, &[c.x[0]]);
        e.op(Prim::Mul, &[c.d, s])
    })
}

/// The derivative of `rsqrt` times `d`: -out³ / 2.
fn rsqrt_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    chain(e, c, |e| {
        let k = float(e, -0.5);
        let t = e.op(Prim::Mul, &[c.out, c.out]);
        let t = e.op(Prim::Mul, &[t, c.out]);
        let t = e.op(Prim::Mul, &[t, k]);
        e.op(Prim::Mul, &[c.d, t])
    })
}

/// The sensitivity of the first argument, `f`, whether it is needed or not (the others get
/// none).
fn chain(e: &mut dyn Emit, c: &Call, f: impl FnOnce(&mut dyn Emit) -> NodeId) -> Option<Grads> {
    let mut g = c.none();
    g[0] = Some(f(e));
    Some(g)
}

/// `abs(x)` of a number or a tensor.
fn abs(x: &Value) -> OpResult {
    match x {
        Value::Int(i) => i
            .checked_abs()
            .map(Value::Int)
            .ok_or_else(|| overflow("abs()")),
        Value::Bool(b) => Ok(Value::Int(*b as i64)),
        Value::Float(f) => Ok(Value::new_float(f.abs())),
        Value::Tensor(_) => math(Prim::Abs, x),
        other => Err(type_error(format!(
            "bad operand type for abs(): '{}'",
            other.type_name()
        ))),
    }
}

fn cast_abs(x: &Abs, dtype: &Abs) -> Abs {
    match (x, dtype) {
        // ops.cast() needs a dtype: TypeError at run time.
        (_, Abs::None) => Abs::Bottom,
        (Abs::Tensor(t), d) => match crate::args::dtype_arg_abs(d, t.dtype) {
            Some(d) => tensor_abs(d, t.shape.clone()),
            None if matches!(d, Abs::Any | Abs::Str(None)) => Abs::Any,
            None => Abs::Bottom,
        },
        (Abs::Any, _) => Abs::Any,
        _ => Abs::Bottom,
    }
}

/// The derivative of `gelu(x, approximate)`: of the exact form `Φ(x) + x·φ(x)`, of the tanh
/// form `(1 + t)/2 + x/2·(1 - t²)·c·(1 + 3a·x²)` with `t = tanh(c·(x + a·x³))`. A constant
/// `approximate` (the usual case) emits one of them; otherwise both, blended by it.
fn gelu_derivative(e: &mut dyn Emit, x: NodeId, approximate: NodeId) -> NodeId {
    let (c, a) = (0.797_884_560_802_865_4, 0.044_715);
    let mut f = |v: f64| e.konst(Const::Float(v));
    let (half, one, inv_sqrt2, inv_sqrt_2pi) = (
        f(0.5),
        f(1.0),
        f(std::f64::consts::FRAC_1_SQRT_2),
        f(0.398_942_280_401_432_7),
    );
    let (kc, ka, k3a) = (f(c), f(a), f(3.0 * a));
    let exact = |e: &mut dyn Emit| {
        let z = e.op(Prim::Mul, &[x, inv_sqrt2]);
        let erf = e.op(Prim::Erf, &[z]);
        let cdf = e.op(Prim::Add, &[erf, one]);
        let cdf = e.op(Prim::Mul, &[cdf, half]);
        let sq = e.op(Prim::Mul, &[x, x]);
        let sq = e.op(Prim::Mul, &[sq, half]);
        let nsq = e.op(Prim::Neg, &[sq]);
        let pdf = e.op(Prim::Exp, &[nsq]);
        let pdf = e.op(Prim::Mul, &[pdf, inv_sqrt_2pi]);
        let xp = e.op(Prim::Mul, &[x, pdf]);
        e.op(Prim::Add, &[cdf, xp])
    };
    let tanh_form = |e: &mut dyn Emit| {
        let sq = e.op(Prim::Mul, &[x, x]);
        let cube = e.op(Prim::Mul, &[sq, x]);
        let inner = e.op(Prim::Mul, &[cube, ka]);
        let inner = e.op(Prim::Add, &[x, inner]);
        let inner = e.op(Prim::Mul, &[inner, kc]);
        let t = e.op(Prim::Tanh, &[inner]);
        let left = e.op(Prim::Add, &[t, one]);
        let left = e.op(Prim::Mul, &[left, half]);
        let tt = e.op(Prim::Mul, &[t, t]);
        let sech2 = e.op(Prim::Sub, &[one, tt]);
        let du = e.op(Prim::Mul, &[sq, k3a]);
        let du = e.op(Prim::Add, &[du, one]);
        let du = e.op(Prim::Mul, &[du, kc]);
        let right = e.op(Prim::Mul, &[sech2, du]);
        let right = e.op(Prim::Mul, &[right, x]);
        let right = e.op(Prim::Mul, &[right, half]);
        e.op(Prim::Add, &[left, right])
    };
    match e.constant(approximate) {
        Some(Const::Bool(false)) => exact(e),
        Some(Const::Bool(true)) => tanh_form(e),
        _ => {
            let ex = exact(e);
            let th = tanh_form(e);
            let w = e.op(Prim::Mul, &[th, approximate]);
            let not = e.op(Prim::Not, &[approximate]);
            let v = e.op(Prim::Mul, &[ex, not]);
            e.op(Prim::Add, &[w, v])
        }
    }
}

/// A Python scalar as a 0-d tensor of the dtype numpy's weak-scalar rules give it next to
/// `other`.
fn scalar_like(s: Scalar, other: DType) -> Result<Tensor, PyErr> {
    let dtype = match (s, other) {
        (Scalar::Float(_), d) if !d.is_float() => DType::F64,
        (Scalar::Int(_), DType::Bool) => DType::I64,
        (_, d) => d,
    };
    tensor(Tensor::scalar(s, dtype))
}

fn where_(args: &[Value]) -> OpResult {
    let cond = need_tensor(&args[0], "ops.where")?;
    let (x, y) = match (&args[1], &args[2]) {
        (Value::Tensor(x), Value::Tensor(y)) => (x.clone(), y.clone()),
        (Value::Tensor(x), s) => {
            let s = s
                .as_scalar()
                .ok_or_else(|| type_error("ops.where() expects tensors or numbers"))?;
            (x.clone(), scalar_like(s, x.dtype())?)
        }
        (s, Value::Tensor(y)) => {
            let s = s
                .as_scalar()
                .ok_or_else(|| type_error("ops.where() expects tensors or numbers"))?;
            (scalar_like(s, y.dtype())?, y.clone())
        }
        (a, b) => {
            let (a, b) = (
                a.as_scalar()
                    .ok_or_else(|| type_error("ops.where() expects tensors or numbers"))?,
                b.as_scalar()
                    .ok_or_else(|| type_error("ops.where() expects tensors or numbers"))?,
            );
            let d = |s: Scalar| match s {
                Scalar::Bool(_) => DType::Bool,
                Scalar::Int(_) => DType::I64,
                Scalar::Float(_) => DType::F64,
            };
            (
                tensor(Tensor::scalar(a, d(a)))?,
                tensor(Tensor::scalar(b, d(b)))?,
            )
        }
    };
    tensor(Tensor::where_(cond, &x, &y)).map(Value::Tensor)
}

fn math(p: Prim, x: &Value) -> OpResult {
    let op = p.def().kernels.unary_op().unwrap_or(UnaryOp::LogicalNot);
    math_op(p, op, x)
}

/// `ops.gelu(x, approximate)`.
fn gelu(x: &Value, approximate: &Value) -> OpResult {
    let op = if truth(approximate)? {
        UnaryOp::GeluTanh
    } else {
        UnaryOp::Gelu
    };
    math_op(Prim::Gelu, op, x)
}

/// The unary function `op` (of primitive `p`) of a tensor or a Python number.
fn math_op(p: Prim, op: UnaryOp, x: &Value) -> OpResult {
    match x {
        Value::Tensor(t) => tensor(Tensor::unary(op, t)).map(Value::Tensor),
        Value::Int(_) | Value::Bool(_) if p == Prim::Sign => {
            Ok(Value::Int(x.as_index().unwrap_or(0).signum()))
        }
        // The newer functions of a Python number: the tensor kernel on a float64 scalar.
        v if !matches!(
            p,
            Prim::Exp
                | Prim::Log
                | Prim::Sqrt
                | Prim::Tanh
                | Prim::Sin
                | Prim::Cos
                | Prim::Sigmoid
                | Prim::Relu
                | Prim::Abs
                | Prim::LogicalNot
        ) && v.as_scalar().is_some() =>
        {
            let f = v.as_scalar().map_or(0.0, Scalar::as_f64);
            let t = tensor(Tensor::scalar(Scalar::Float(f), DType::F64))?;
            Ok(Value::new_float(
                tensor(Tensor::unary(op, &t))?.get_flat(0).as_f64(),
            ))
        }
        Value::Int(_) | Value::Bool(_) if p == Prim::Relu => {
            Ok(Value::Int(x.as_index().unwrap_or(0).max(0)))
        }
        Value::Float(f) if p == Prim::Relu => Ok(Value::Float(if *f > 0.0 { *f } else { 0.0 })),
        v => {
            let Some(s) = v.as_scalar() else {
                return Err(type_error(format!(
                    "{}() expects a Tensor or a number, got {}",
                    p.python_name(),
                    v.type_name()
                )));
            };
            let f = s.as_f64();
            Ok(Value::new_float(match p {
                Prim::Exp => f.exp(),
                Prim::Log => f.ln(),
                Prim::Sqrt => f.sqrt(),
                Prim::Tanh => f.tanh(),
                Prim::Sin => f.sin(),
                Prim::Cos => f.cos(),
                _ => 1.0 / (1.0 + (-f).exp()),
            }))
        }
    }
}

/// `ops.clip(x, min, max)`: numpy's `clip`, `minimum(maximum(x, min), max)` with numpy's
/// broadcasting and promotion; a `None` bound is left out.
fn clip(x: &Value, lo: &Value, hi: &Value) -> OpResult {
    if !matches!(x, Value::Tensor(_)) && x.as_scalar().is_none() {
        return Err(type_error(format!(
            "ops.clip() expects a Tensor or a number, got {}",
            x.type_name()
        )));
    }
    // numpy broadcasts the operands together first, so a mismatch names every shape.
    let shapes: Vec<&[usize]> = [x, lo, hi]
        .into_iter()
        .filter(|v| !matches!(v, Value::None))
        .map(|v| match v {
            Value::Tensor(t) => t.shape(),
            _ => &[],
        })
        .collect();
    tensor(anfora_tensor::broadcast_shapes_n(&shapes))?;
    // ... and computes in their dtype taken together: the tensors are cast to it first, so
    // that the Python numbers (weak, NEP 50) promote against all of them at once.
    let operands = [x, lo, hi];
    let dtypes: Vec<_> = operands
        .iter()
        .filter_map(|v| match v {
            Value::Tensor(t) => Some(t.dtype()),
            _ => None,
        })
        .collect();
    let scalars: Vec<_> = operands
        .iter()
        .filter(|v| !matches!(v, Value::Tensor(_)))
        .filter_map(|v| v.as_scalar())
        .collect();
    let common = anfora_tensor::result_type(&dtypes, &scalars);
    let cast = |v: &Value| match (v, common) {
        (Value::Tensor(t), Some(d)) if t.dtype() != d => Value::Tensor(t.cast(d)),
        _ => v.clone(),
    };
    let mut v = cast(x);
    if !matches!(lo, Value::None) {
        v = Prim::Maximum.eval(&[v, cast(lo)])?;
    }
    if !matches!(hi, Value::None) {
        v = Prim::Minimum.eval(&[v, cast(hi)])?;
    }
    Ok(v)
}

/// `ClipGrad(d, x, min, max, which)`: where the sensitivity `d` of `clip(x, min, max)` flows,
/// to `x` (which 0), `min` (1) or `max` (2). As for `maximum` and `minimum`, a tie goes to
/// the first operand: `x` at `min`, the clipped value at `max`. `None` for a `None` bound.
fn clip_grad(d: &Value, x: &Value, lo: &Value, hi: &Value, which: &Value) -> OpResult {
    let op = |p: Prim, a: &Value, b: &Value| p.eval(&[a.clone(), b.clone()]);
    let which = int_arg(which)?;
    let has_lo = !matches!(lo, Value::None);
    let has_hi = !matches!(hi, Value::None);
    let raised = if has_lo {
        op(Prim::Maximum, x, lo)?
    } else {
        x.clone()
    };
    let mut g = d.clone();
    match which {
        0 => {
            if has_lo {
                g = op(Prim::Mul, &g, &op(Prim::Ge, x, lo)?)?;
            }
            if has_hi {
                g = op(Prim::Mul, &g, &op(Prim::Le, &raised, hi)?)?;
            }
        }
        1 if has_lo => {
            g = op(Prim::Mul, &g, &op(Prim::Lt, x, lo)?)?;
            if has_hi {
                g = op(Prim::Mul, &g, &op(Prim::Le, &raised, hi)?)?;
            }
        }
        2 if has_hi => g = op(Prim::Mul, &g, &op(Prim::Gt, &raised, hi)?)?,
        1 | 2 => return Ok(Value::None),
        other => return Err(value_error(format!("ClipGrad: no operand {other}"))),
    }
    Ok(g)
}

// ---- abstract values ----------------------------------------------------------------------

fn unary_abs(p: Prim, a: &Abs) -> Rule {
    match a {
        Abs::Tensor(t) => {
            let op = match p {
                // Both forms compute in the same dtype.
                Prim::Gelu => UnaryOp::Gelu,
                _ => p.def().kernels.unary_op().expect("a unary primitive"),
            };
            if op == UnaryOp::Relu && t.dtype == DType::Bool {
                return Err(err("relu is not supported for boolean tensors"));
            }
            unary_tensor_abs(op, t)
        }
        Abs::Any => Ok(Abs::Any),
        x => Ok(match (p, kind(x)) {
            (Prim::Abs, Some(Kind::Float)) => Abs::Float(None),
            (Prim::Abs, Some(_)) => Abs::Int(None),
            (Prim::Relu | Prim::Sign, Some(Kind::Float)) => Abs::Float(None),
            (Prim::Relu | Prim::Sign, Some(_)) => Abs::Int(None),
            (Prim::LogicalNot, _) => Abs::Bool(None),
            (
                Prim::Exp
                | Prim::Log
                | Prim::Sqrt
                | Prim::Tanh
                | Prim::Sin
                | Prim::Cos
                | Prim::Sigmoid
                | Prim::Log1p
                | Prim::Expm1
                | Prim::Erf
                | Prim::Gelu
                | Prim::Silu
                | Prim::Softplus
                | Prim::Rsqrt,
                Some(_),
            ) => Abs::Float(None),
            _ => Abs::Bottom,
        }),
    }
}

fn where_abs(args: &[Abs]) -> Rule {
    let Abs::Tensor(c) = &args[0] else {
        return Ok(if matches!(args[0], Abs::Any) {
            Abs::Any
        } else {
            Abs::Bottom
        });
    };
    let side = |a: &Abs, other: &Abs| -> Option<(DType, Vec<Option<usize>>)> {
        match a {
            Abs::Tensor(t) => Some((t.dtype, t.shape.clone())),
            s => {
                let sc = scalar_of(s)?;
                let d = match (sc, other) {
                    (Scalar::Float(_), Abs::Tensor(t)) if !t.dtype.is_float() => DType::F64,
                    (Scalar::Int(_), Abs::Tensor(t)) if t.dtype == DType::Bool => DType::I64,
                    (_, Abs::Tensor(t)) => t.dtype,
                    (Scalar::Bool(_), _) => DType::Bool,
                    (Scalar::Int(_), _) => DType::I64,
                    (Scalar::Float(_), _) => DType::F64,
                };
                Some((d, vec![]))
            }
        }
    };
    let (Some((dx, sx)), Some((dy, sy))) = (side(&args[1], &args[2]), side(&args[2], &args[1]))
    else {
        return Ok(Abs::Bottom);
    };
    check_broadcast_all(&[&c.shape, &sx, &sy])?;
    let shape = broadcast(&broadcast(&c.shape, &sx)?, &sy)?;
    Ok(tensor_abs(promote_types(dx, dy), shape))
}

/// `Clip` (as the VM computes it: `maximum` then `minimum`) and `ClipGrad` (the sensitivity
/// times the comparisons that route it).
fn clip_abs(p: Prim, args: &[Abs]) -> Rule {
    let binary = |p: Prim, a: &Abs, b: &Abs| p.infer(&[a.clone(), b.clone()]);
    let (x, lo, hi) = if p == Prim::Clip {
        (&args[0], &args[1], &args[2])
    } else {
        (&args[1], &args[2], &args[3])
    };
    if matches!(x, Abs::Any) {
        return Ok(Abs::Any);
    }
    if !matches!(x, Abs::Tensor(_)) && !x.is_number() {
        // A TypeError at run time.
        return Ok(Abs::Bottom);
    }
    // Clip computes in its operands' dtype taken together, as the VM does (the tensors cast
    // to it first); ClipGrad compares the operands as they are.
    let (cx, clo, chi);
    let (x, lo, hi) = if p == Prim::Clip {
        let operands = [x, lo, hi];
        let dtypes: Vec<DType> = operands
            .iter()
            .filter_map(|a| match a {
                Abs::Tensor(t) => Some(t.dtype),
                _ => None,
            })
            .collect();
        let scalars: Vec<Scalar> = operands
            .iter()
            .filter_map(|a| match a {
                Abs::Bool(b) => Some(Scalar::Bool(b.unwrap_or(false))),
                Abs::Int(i) => Some(Scalar::Int(i.unwrap_or(0))),
                Abs::Float(f) => Some(Scalar::Float(f.unwrap_or(0.0))),
                _ => None,
            })
            .collect();
        let shapes: Vec<&[Option<usize>]> = operands
            .iter()
            .filter_map(|a| match a {
                Abs::Tensor(t) => Some(&t.shape[..]),
                a if a.is_number() => Some(&[][..]),
                _ => None,
            })
            .collect();
        check_broadcast_all(&shapes)?;
        let common = anfora_tensor::result_type(&dtypes, &scalars);
        let cast = |a: &Abs| match (a, common) {
            (Abs::Tensor(t), Some(d)) if t.dtype != d => tensor_abs(d, t.shape.clone()),
            _ => a.clone(),
        };
        (cx, clo, chi) = (cast(x), cast(lo), cast(hi));
        (&cx, &clo, &chi)
    } else {
        (x, lo, hi)
    };
    let raised = match lo {
        Abs::None => x.clone(),
        lo => binary(Prim::Maximum, x, lo)?,
    };
    let clipped = match hi {
        Abs::None => raised.clone(),
        hi => binary(Prim::Minimum, &raised, hi)?,
    };
    if p == Prim::Clip {
        return Ok(clipped);
    }
    let d = &args[0];
    let routed = |mask: Rule| -> Rule { binary(Prim::Mul, d, &mask?) };
    Ok(match (args[4].as_i64(), lo, hi) {
        (Some(1), Abs::None, _) | (Some(2), _, Abs::None) => Abs::None,
        (Some(0), Abs::None, Abs::None) => d.clone(),
        (Some(0 | 1), lo, Abs::None) => routed(binary(Prim::Ge, x, lo))?,
        (Some(0 | 1), _, hi) => routed(binary(Prim::Le, &raised, hi))?,
        (Some(2), _, hi) => routed(binary(Prim::Gt, &raised, hi))?,
        _ => Abs::Any,
    })
}

//! The grad stage's primitives: `grad`, `value_and_grad`, `vjp` and `jvp` (expanded before
//! any of these run), `stop_gradient`, and the helpers backward graphs are made of. `None` is
//! the zero sensitivity (nothing flows back); values that cannot carry a gradient (ints,
//! bools, strings, functions) get `None`.

use anfora_tensor::{DType, ReduceOp, Scalar, Tensor};

use crate::abs::{Abs, Rule, RuleError, TensorAbs};
use crate::args::{int_arg, need_tensor, reduce_to, sens_tensor, tensor_abs};
use crate::def::{Backward, PrimDef, Py, Refusal, first, never, primitives};
use crate::prim::{Effects, Prim};
use crate::pynum::{tensor as t, type_error};
use crate::python::{binary, getitem, getitem_abs};
use crate::value::{OpResult, Value};

const EXPANDED: &str = "expanded by the grad stage before any rule is needed";

primitives! {
    family grad = 14;

    /// `anfora.grad(fn, argnums=0, weights=None, sens_param=False, integers='zero',
    /// has_aux=False)`: expanded by the grad stage. `argnums=...` means every argument; with
    /// `sens_param` the gradient function takes the output's sensitivity as an extra last
    /// argument; `integers='cast'` gives integer values MindSpore's sensitivities (cast to
    /// their dtype) instead of zeros; with `has_aux` `fn` returns `(value, aux)`, only the
    /// value is differentiated, and the result is `(gradients, aux)` (JAX's rule).
    Grad = transform("grad", &[Py::Anfora("grad")],
        "(fn, argnums=0, weights=None, sens_param=False, integers='zero', has_aux=False)");
    /// `anfora.value_and_grad(...)`: as `grad`, returning `(value, gradients)`, with
    /// `has_aux` `((value, aux), gradients)`.
    ValueAndGrad = transform("value_and_grad", &[Py::Anfora("value_and_grad")],
        "(fn, argnums=0, weights=None, sens_param=False, integers='zero', has_aux=False)");
    /// `AuxPair(y)`: `y`, after checking that a function differentiated with `has_aux=True`
    /// returned a pair `(value, aux)`; only the value is differentiated.
    AuxPair = PrimDef::new("AuxPair", "(y)", aux_pair_abs, aux_pair, first(|_, c| c.d))
        .labelled("has_aux=True")
        .passing_values()
        .viewing();
    /// `GradArgument(x, which)`: a value entering J(f), checked to hold no function: argument
    /// `which` (an int) of the differentiated function as its gradient function was called
    /// with it, or a variable it reads from its enclosing function (`which` its name). J(f)
    /// calls functions in the J world, and such a value is the caller's primal function. (A
    /// function passed as the same constant at every call is differentiated with f.)
    GradArgument = PrimDef::new("GradArgument", "(x, i)", grad_argument_abs, grad_argument,
        first(|_, c| c.d))
        .labelled("grad")
        .refusing(Refusal {
            code: GRAD_UNKNOWN_FUNCTION,
            label: "passed to the gradient function here",
            hint: FUNCTION_ARGUMENT_HINT,
        })
        .passing_value_of(0)
        .viewing();
    /// `anfora.vjp(fn, *primals)`: expanded by the grad stage.
    Vjp = transform("vjp", &[Py::Anfora("vjp")], "(fn, *primals)");
    /// `anfora.jvp(fn, primals, tangents)`: rewritten by the grad stage into two `vjp`s.
    Jvp = transform("jvp", &[Py::Anfora("jvp")], "(fn, primals, tangents)");
    /// `ops.stop_gradient(x)`: `x`, with no gradient flowing back.
    StopGradient = PrimDef::new("StopGradient", "(x)", |_, a| Ok(a[0].clone()),
        |_, a, _| Ok(a[0].clone()), Backward::Zero)
        .called(&[Py::Op("stop_gradient")]).raising(never).passing_values().viewing();
    /// `GradAdd(a, b)`: sum of two sensitivities; `None` is zero, tuples add item by item.
    GradAdd = PrimDef::new("GradAdd", "(a, b)", |_, a| grad_add_abs(&a[0], &a[1]),
        |_, a, _| grad_add(&a[0], &a[1]),
        Backward::Rule(|e, c| Some(c.each(e, 0..c.x.len(), |_, _| c.d))))
        .passing_values();
    /// `SumToShape(d, x)`: sensitivity `d` summed over the dimensions broadcasting added to
    /// `x` and cast to its dtype; `None` when `x` is not differentiable (ints, bools, ...).
    /// With `cast_ints` (MindSpore's rule, see `anfora_ad::IntegerSensitivities`) an integer
    /// `x` gets `d` summed and cast to its dtype, not a zero.
    SumToShape = PrimDef::new("SumToShape", "(d, x, cast_ints=False)",
        |_, a| Ok(sum_to_shape_abs(&a[0], &a[1])),
        |_, a, _| sum_to_shape(&a[0], &a[1], cast_ints(a.get(2))),
        first(|e, c| e.op(Prim::BroadcastLike, &[c.d, c.x[0]])))
        .tensor_kernel();
    /// `BroadcastLike(d, x)`: `d` broadcast to the shape of `x` (the dual of SumToShape).
    BroadcastLike = PrimDef::new("BroadcastLike", "(d, x)", broadcast_like_abs,
        |_, a, _| broadcast_like(&a[0], &a[1]),
        first(|e, c| e.op(Prim::SumToShape, &[c.d, c.x[0]])))
        .tensor_kernel();
    /// `FillZeros(d, x)`: `d`, or zeros shaped like `x` where `d` is `None`.
    FillZeros = PrimDef::new("FillZeros", "(d, x)", |_, a| Ok(fill_zeros_abs(&a[0], &a[1])),
        |_, a, _| fill_zeros(&a[0], &a[1]), first(|_, c| c.d))
        .passing_value_of(0);
    /// `SensOnes(y)`: ones shaped like `y` (the default output sensitivity).
    SensOnes = PrimDef::new("SensOnes", "(x)", |_, a| Ok(sens_ones_abs(&a[0])),
        |_, a, _| sens_ones(&a[0]), Backward::Zero);
    /// `SensCheck(d, y)`: `d`, after checking that a sensitivity given by the user (a `vjp`
    /// cotangent, a `sens_param` argument) has the structure, shape and dtype of the output `y`.
    /// The check is on the primal; the sensitivity passes through to the cotangent.
    SensCheck = PrimDef::new("SensCheck", "(d, y)", checked_sensitivity_abs, checked_sensitivity,
        first(|_, c| c.d))
        .labelled("the output sensitivity");
    /// `GradTupleAt(t, i, d, cast_ints)`: a tuple as long as `t`, `None` everywhere but `d`
    /// at `i` (a tensor `t`: `IndexGrad`, which `cast_ints` goes to).
    GradTupleAt = PrimDef::new("GradTupleAt", "(t, i, d, cast_ints=False)",
        |_, a| grad_tuple_at_abs(&a[0], &a[1], &a[2]),
        |_, a, _| grad_tuple_at(&a[0], &a[1], &a[2], cast_ints(a.get(3))),
        Backward::Rule(|e, c| { let mut g = c.none();
            if c.need(2) {
                g[2] = Some(e.op(Prim::GradItem, &[c.d, c.x[1]]));
            }
            Some(g)
        }))
        .passing_value_of(2);
    /// `IndexGrad(d, x, index, cast_ints)`: zeros like tensor `x` holding `d` where
    /// `x[index]` reads (an integer `x`: zeros, or with `cast_ints` MindSpore's rule).
    IndexGrad = PrimDef::new("IndexGrad", "(d, x, index, cast_ints=False)",
        |_, a| index_grad_abs(&a[0], &a[1], &a[2]),
        |_, a, _| index_grad(&a[0], &a[1], &a[2], cast_ints(a.get(3))),
        first(|e, c| e.op(Prim::GradItem, &[c.d, c.x[2]])))
        .tensor_kernel();
    /// `SetItemGrad(d, index, value)`: the sensitivity of `value` in `SetItem(obj, index,
    /// value)` from the output's `d`: `d[index]` where the element was stored (zero where a
    /// later element of the selection overwrote it), summed back to value's shape.
    SetItemGrad = PrimDef::new("SetItemGrad", "(d, index, value)",
        |_, a| Ok(sum_to_shape_abs(&a[0], &a[2])), |_, a, _| setitem_grad(&a[0], &a[1], &a[2]),
        Backward::Rule(|e, c| {
            let mut g = c.none();
            if c.need(0) {
                // The transpose: the sensitivity broadcast into the selection and stored
                // where the value was, zeros elsewhere.
                let none = e.konst(crate::Const::None);
                let zeros = e.op(Prim::ZerosLike, &[c.x[0], none]);
                let d = e.op(Prim::FillZeros, &[c.d, c.out]);
                g[0] = Some(e.op(Prim::SetItem, &[zeros, c.x[1], d]));
            }
            Some(g)
        }))
        .tensor_kernel();
    /// `GradItem(d, i)`: item `i` of a tuple sensitivity (`None` stays `None`).
    GradItem = PrimDef::new("GradItem", "(d, i)", grad_item_abs, |_, a, _| grad_item(&a[0], &a[1]),
        first(|e, c| e.op(Prim::GradTupleAt, &[c.x[0], c.x[1], c.d])))
        .passing_values();
    /// `GradHead(ds, n)`: all but the last `n` items of a tuple.
    GradHead = PrimDef::new("GradHead", "(ds, n)", grad_head_abs, |_, a, _| grad_head(&a[0], &a[1]),
        first(|e, c| e.op(Prim::GradPad, &[c.d, c.x[1]])))
        .passing_values();
    /// `GradPad(d, n)`: the tuple `d` followed by `n` Nones (the dual of GradHead).
    GradPad = PrimDef::new("GradPad", "(d, n)", grad_pad_abs, |_, a, _| grad_pad(&a[0], &a[1]),
        first(|e, c| e.op(Prim::GradHead, &[c.d, c.x[1]])))
        .passing_values();
    /// `ConcatPart(d, a, b, i)`: the part of the sensitivity `d` of `a + b` that belongs to
    /// operand `i`: where both are tuples or lists (a concatenation), the items from its
    /// positions; otherwise (numbers, tensors) all of `d`.
    ConcatPart = PrimDef::new("ConcatPart", "(d, a, b, i)", |_, a| Ok(concat_part_abs(a)),
        |_, a, _| concat_part(a), first(|e, c| {
            e.op(Prim::ConcatPad, &[c.d, c.x[1], c.x[2], c.x[3]])
        }))
        .passing_value_of(0);
    /// `ConcatPad(p, a, b, i)`: the dual of `ConcatPart`: operand `i`'s part `p` of a
    /// concatenation's sensitivity, with `None` for the other operand's items.
    ConcatPad = PrimDef::new("ConcatPad", "(p, a, b, i)", |_, a| Ok(concat_pad_abs(a)),
        |_, a, _| concat_pad(a), first(|e, c| {
            e.op(Prim::ConcatPart, &[c.d, c.x[1], c.x[2], c.x[3]])
        }))
        .passing_value_of(0);
    /// `SequenceGrad(d, x)`: the sensitivity of `x` from that of `tuple(x)` or `list(x)`: the
    /// items' sensitivities in `x`'s kind (zeros where missing), or, for a tensor, its rows'
    /// stacked; nothing for a str or a range. The adjoint of its first argument is
    /// `tuple(d)` (a tensor's rows, or the items themselves).
    SequenceGrad = PrimDef::new("SequenceGrad", "(d, x)",
        |_, a| Ok(sequence_grad_abs(&a[0], &a[1])), |_, a, _| sequence_grad(&a[0], &a[1]),
        first(|e, c| e.op(Prim::TupleType, &[c.d])))
        .passing_value_of(0);
    /// `CustomGrad(name, d, out, args...)`: the gradients of a custom primitive's arguments
    /// (a tuple), from its registered backward rule.
    CustomGrad = PrimDef::new("CustomGrad", "(*args)", custom_grad_abs,
        |_, a, _| crate::custom::custom_grad(a),
        Backward::Refused(
            "the second derivative of a custom primitive: its backward rule is a kernel",
        ));
}

/// A function transformation the grad stage expands before anything runs.
const fn transform(name: &'static str, python: &'static [Py], signature: &'static str) -> PrimDef {
    PrimDef::new(
        name,
        signature,
        not_expanded_abs,
        not_expanded,
        Backward::Refused(EXPANDED),
    )
    .with_effects(Effects::PROPAGATE)
    .called(python)
}

const AUX_PAIR: &str = "the function must return a pair (value, aux)";

fn aux_pair(_: Prim, a: &[Value], _: &mut dyn std::io::Write) -> OpResult {
    match &a[0] {
        Value::Tuple(xs) if xs.len() == 2 => Ok(a[0].clone()),
        Value::Tuple(xs) => Err(type_error(format!(
            "has_aux=True: {AUX_PAIR}, got a tuple of {}",
            xs.len()
        ))),
        v => Err(type_error(format!(
            "has_aux=True: {AUX_PAIR}, got '{}'",
            v.type_name()
        ))),
    }
}

fn aux_pair_abs(_: Prim, a: &[Abs]) -> Rule {
    match &a[0] {
        Abs::Tuple(xs) if xs.len() == 2 => Ok(a[0].clone()),
        Abs::Any | Abs::Bottom => Ok(a[0].clone()),
        Abs::Tuple(xs) => Err(RuleError(format!(
            "{AUX_PAIR}, got a tuple of {}",
            xs.len()
        ))),
        y => Err(RuleError(format!("{AUX_PAIR}, got {y}"))),
    }
}

const GRAD_UNKNOWN_FUNCTION: &str = "E0501";
const FUNCTION_ARGUMENT_HINT: &str = "pass the function by name where the gradient function is \
    called (`grad(f, argnums=1)(g, x)` with `g` a `def` or a Cell), or name it in the \
    differentiated function";

/// The refusal of a function entering J(f): argument `i` of f, or (a name) a variable f reads
/// from the function around it.
fn function_argument(which: Which) -> String {
    let what = match which {
        Which::Argument(i) => format!("argument {i} of the differentiated function"),
        Which::Captured(name) if name == "a value" => {
            "a value the differentiated function reads from its enclosing function".to_string()
        }
        Which::Captured(name) => {
            format!(
                "'{name}', which the differentiated function reads from its enclosing function,"
            )
        }
        Which::Unknown => "an argument of the differentiated function".to_string(),
    };
    format!(
        "{what} holds a function known only when the program runs, which its gradient cannot call"
    )
}

enum Which {
    Argument(i64),
    Captured(String),
    Unknown,
}

fn holds_function(v: &Value) -> bool {
    crate::deep(|| match v {
        Value::Tuple(xs) | Value::List(xs) => xs.iter().any(holds_function),
        Value::Dict(d) => d.items.iter().any(|(_, v)| holds_function(v)),
        v => v.is_callable(),
    })
}

/// Whether some part of `a` (itself, or an item of a tuple, list or dict at any depth) is
/// one `pred` accepts.
fn any_part(a: &Abs, pred: &dyn Fn(&Abs) -> bool) -> bool {
    crate::deep(|| match a {
        Abs::Tuple(xs) | Abs::List(xs) => xs.iter().any(|x| any_part(x, pred)),
        Abs::Dict(items) => items.iter().any(|(_, v)| any_part(v, pred)),
        a => pred(a),
    })
}

fn holds_function_abs(a: &Abs) -> bool {
    any_part(a, &|p| matches!(p, Abs::Func(_)))
}

/// Whether a `GradArgument` check of a value of abstract `a` holds without running: no part
/// of it is a function or unknown.
pub fn holds_no_function(a: &Abs) -> bool {
    !any_part(a, &|p| matches!(p, Abs::Func(_) | Abs::Any))
}

fn grad_argument(_: Prim, a: &[Value], _: &mut dyn std::io::Write) -> OpResult {
    if holds_function(&a[0]) {
        let which = match a.get(1) {
            Some(Value::Int(i)) => Which::Argument(*i),
            Some(Value::Str(name)) => Which::Captured(name.to_string()),
            _ => Which::Unknown,
        };
        return Err(type_error(function_argument(which)));
    }
    Ok(a[0].clone())
}

fn grad_argument_abs(_: Prim, a: &[Abs]) -> Rule {
    if holds_function_abs(&a[0]) {
        let which = match a.get(1) {
            Some(Abs::Int(Some(i))) => Which::Argument(*i),
            Some(Abs::Str(Some(name))) => Which::Captured(name.to_string()),
            _ => Which::Unknown,
        };
        return Err(RuleError(function_argument(which)));
    }
    Ok(a[0].clone())
}

fn checked_sensitivity(_: Prim, a: &[Value], _: &mut dyn std::io::Write) -> OpResult {
    sens_check(&a[0], &a[1])?;
    Ok(a[0].clone())
}

fn checked_sensitivity_abs(_: Prim, a: &[Abs]) -> Rule {
    sens_check_abs(&a[0], &a[1]).map_err(RuleError)?;
    Ok(a[0].clone())
}

fn broadcast_like_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match (&a[0], &a[1]) {
        (Abs::None, _) => Abs::None,
        (Abs::Tensor(d), Abs::Tensor(x)) => tensor_abs(d.dtype, x.shape.clone()),
        (Abs::Float(_) | Abs::Int(_) | Abs::Bool(_), Abs::Tensor(x)) => {
            tensor_abs(x.dtype, x.shape.clone())
        }
        (Abs::Tensor(_), Abs::Float(_)) => Abs::Float(None),
        (d, _) => d.clone(),
    })
}

fn grad_item_abs(_: Prim, a: &[Abs]) -> Rule {
    match &a[0] {
        Abs::None => Ok(Abs::None),
        d => getitem_abs(d, &a[1]),
    }
}

fn grad_head_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match (&a[0], a[1].as_i64()) {
        (Abs::Tuple(xs), Some(n)) => {
            Abs::tuple(xs[..xs.len().saturating_sub(n.max(0) as usize)].to_vec())
        }
        _ => Abs::Any,
    })
}

fn grad_pad_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match (&a[0], a[1].as_i64()) {
        (Abs::None, _) => Abs::None,
        (Abs::Tuple(xs), Some(n)) => {
            let mut out = xs.to_vec();
            out.extend(std::iter::repeat_n(Abs::None, n.max(0) as usize));
            Abs::tuple(out)
        }
        _ => Abs::Any,
    })
}

/// One gradient per argument, shaped like it.
fn custom_grad_abs(_: Prim, a: &[Abs]) -> Rule {
    if a.len() < 3 {
        return Ok(Abs::Any);
    }
    let shaped = |x: &Abs| match (x, &a[1]) {
        (_, Abs::None) => Abs::None,
        (Abs::Tensor(t), _) => tensor_abs(t.dtype, t.shape.clone()),
        (Abs::Ref(r), _) => tensor_abs(r.dtype, r.shape.iter().map(|&d| Some(d)).collect()),
        _ => Abs::Any,
    };
    Ok(Abs::tuple(a[3..].iter().map(shaped).collect()))
}

fn not_expanded(p: Prim, _: &[Value], _: &mut dyn std::io::Write) -> OpResult {
    Err(type_error(format!(
        "{}() must be expanded by the grad stage: its function must be known at compile time",
        p.python_name()
    )))
}

fn not_expanded_abs(p: Prim, _: &[Abs]) -> Rule {
    Err(RuleError(format!(
        "{}() needs a function known at compile time (a def, a lambda, or another grad)",
        p.python_name()
    )))
}

fn items(v: &Value) -> Option<&[Value]> {
    match v {
        Value::Tuple(xs) | Value::List(xs) => Some(xs),
        _ => None,
    }
}

fn like(container: &Value, items: Vec<Value>) -> Value {
    match container {
        Value::List(_) => Value::List(items.into()),
        _ => Value::tuple(items),
    }
}

/// `f` applied to each item of a tuple or list, in a container of the same kind.
fn map_items(v: &Value, f: fn(&Value) -> OpResult) -> OpResult {
    let mapped = items(v)
        .unwrap_or(&[])
        .iter()
        .map(f)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(like(v, mapped))
}

/// `GradAdd(a, b)`.
fn grad_add(a: &Value, b: &Value) -> OpResult {
    match (a, b) {
        (Value::None, x) | (x, Value::None) => Ok(x.clone()),
        (x, y) if items(x).is_some() && items(y).is_some() => {
            let (xs, ys) = (items(x).unwrap_or(&[]), items(y).unwrap_or(&[]));
            if xs.len() != ys.len() {
                return Err(type_error(format!(
                    "GradAdd: sensitivities of tuples of lengths {} and {}",
                    xs.len(),
                    ys.len()
                )));
            }
            zip_items(x, y, x, grad_add)
        }
        _ => binary(Prim::Add, a, b),
    }
}

/// Whether a gradient primitive's optional last argument asks for MindSpore's rule for
/// integer values (an integer tensor's sensitivity cast to its dtype, not a zero).
pub(crate) fn cast_ints(flag: Option<&Value>) -> bool {
    matches!(flag, Some(Value::Bool(true)))
}

/// Under MindSpore's rule an integer tensor's sensitivity is the float one cast to its dtype:
/// the integer (not bool) dtype of `v` when it is such a tensor.
pub(crate) fn integer_dtype(v: &Value) -> Option<DType> {
    match v {
        Value::Tensor(t) if !t.dtype().is_float() && t.dtype() != DType::Bool => Some(t.dtype()),
        _ => None,
    }
}

/// `v` in float64 when it is an integer tensor (the float gradient rules then apply), else
/// `v`; `cast_back` casts their result to the integer dtype.
pub(crate) fn as_float64(v: &Value) -> Value {
    match v {
        Value::Tensor(t) if integer_dtype(v).is_some() => Value::Tensor(t.cast(DType::F64)),
        _ => v.clone(),
    }
}

/// A sensitivity computed in float64 for an integer value, in that value's `dtype`.
pub(crate) fn cast_back(g: Value, dtype: DType) -> Value {
    match &g {
        Value::Tensor(t) => Value::Tensor(t.cast(dtype)),
        _ => g,
    }
}

/// `SumToShape(d, x, cast_ints)`.
fn sum_to_shape(d: &Value, x: &Value, cast_ints: bool) -> OpResult {
    if matches!(d, Value::None) {
        return Ok(Value::None);
    }
    match x {
        Value::Tensor(xt) if xt.dtype().is_float() || (cast_ints && xt.dtype() != DType::Bool) => {
            let Some(dt) = sens_tensor(d, xt.shape(), xt.dtype())? else {
                return Ok(Value::None);
            };
            Ok(Value::Tensor(reduce_to(&dt, xt.shape(), xt.dtype())?))
        }
        Value::Float(_) => Ok(match d {
            Value::Float(f) => Value::Float(*f),
            Value::Int(i) => Value::Float(*i as f64),
            Value::Tensor(dt) => {
                let s = t(Tensor::reduce(ReduceOp::Sum, dt, None, false))?;
                match t(s.item())? {
                    Scalar::Float(f) => Value::Float(f),
                    Scalar::Int(i) => Value::Float(i as f64),
                    Scalar::Bool(b) => Value::Float(b as i64 as f64),
                }
            }
            _ => Value::None,
        }),
        // Integers get no gradient: a zero of their kind.
        Value::Tensor(xt) => Ok(Value::Tensor(t(Tensor::zeros(xt.shape(), xt.dtype()))?)),
        Value::Int(_) | Value::Bool(_) => Ok(Value::Int(0)),
        // A tuple or list (a concatenation's operand): item by item.
        x if items(x).is_some() && items(d).is_some() => {
            zip_items(d, x, x, |d, x| sum_to_shape(d, x, cast_ints))
        }
        _ => Ok(Value::None),
    }
}

/// `BroadcastLike(d, x)`.
fn broadcast_like(d: &Value, x: &Value) -> OpResult {
    match (d, x) {
        (Value::None, _) => Ok(Value::None),
        (Value::Tensor(dt), Value::Tensor(xt)) => {
            let zeros = t(Tensor::zeros(xt.shape(), dt.dtype()))?;
            binary(Prim::Add, &Value::Tensor(zeros), d)
        }
        (d, Value::Tensor(xt)) => Ok(match sens_tensor(d, xt.shape(), xt.dtype())? {
            Some(dt) => Value::Tensor(dt),
            None => Value::None,
        }),
        (Value::Tensor(dt), Value::Float(_)) => sum_to_shape(&Value::Tensor(dt.clone()), x, false),
        (d, _) => Ok(d.clone()),
    }
}

/// Zeros shaped like `x` (`None` for values without a gradient).
fn zeros_like(x: &Value) -> OpResult {
    Ok(match x {
        Value::Tensor(xt) => Value::Tensor(t(Tensor::zeros(xt.shape(), xt.dtype()))?),
        Value::Float(_) => Value::Float(0.0),
        Value::Int(_) => Value::Int(0),
        Value::Bool(_) => Value::Bool(false),
        Value::Ref(p) => Value::Tensor(t(Tensor::zeros(p.shape(), p.dtype()))?),
        v if items(v).is_some() => map_items(v, zeros_like)?,
        _ => Value::None,
    })
}

/// `FillZeros(d, x)`.
fn fill_zeros(d: &Value, x: &Value) -> OpResult {
    match (d, x) {
        (Value::None, x) => zeros_like(x),
        (d, x) if items(d).is_some() && items(x).is_some() => zip_items(d, x, x, fill_zeros),
        (d, _) => Ok(d.clone()),
    }
}

/// `f` applied to the pairs of items of two tuples or lists, in a container of `kind`'s kind.
fn zip_items(
    a: &Value,
    b: &Value,
    kind: &Value,
    f: impl Fn(&Value, &Value) -> OpResult,
) -> OpResult {
    let (xs, ys) = (items(a).unwrap_or(&[]), items(b).unwrap_or(&[]));
    let pairs = xs.iter().zip(ys).map(|(x, y)| f(x, y));
    Ok(like(kind, pairs.collect::<Result<Vec<_>, _>>()?))
}

/// `SensOnes(y)`.
fn sens_ones(y: &Value) -> OpResult {
    Ok(match y {
        Value::Tensor(yt) => Value::Tensor(t(Tensor::ones(yt.shape(), yt.dtype()))?),
        Value::Float(_) => Value::Float(1.0),
        Value::Int(_) | Value::Bool(_) => Value::Float(1.0),
        v if items(v).is_some() => map_items(v, sens_ones)?,
        _ => Value::None,
    })
}

/// `SensCheck(d, y)`: a user-given sensitivity must have the structure, shape and dtype of the
/// output (for dimensions inference could not check).
fn sens_check(d: &Value, y: &Value) -> Result<(), crate::pynum::PyErr> {
    let describe = |v: &Value| match v {
        Value::Tensor(t) => format!(
            "a {} tensor of shape {}",
            t.dtype().name(),
            anfora_tensor::tuple_repr(t.shape())
        ),
        v => format!("'{}'", v.type_name()),
    };
    let fits = match (d, y) {
        (Value::Tensor(a), Value::Tensor(b)) => a.dtype() == b.dtype() && a.shape() == b.shape(),
        (Value::Float(_) | Value::Int(_), Value::Float(_) | Value::Int(_) | Value::Bool(_)) => true,
        _ => match (items(d), items(y)) {
            (Some(ds), Some(ys)) if ds.len() == ys.len() => {
                for (d, y) in ds.iter().zip(ys) {
                    sens_check(d, y)?;
                }
                true
            }
            _ => false,
        },
    };
    if fits {
        Ok(())
    } else {
        Err((
            "ValueError",
            format!(
                "the output sensitivity: expected {} like the output, got {}",
                describe(y),
                describe(d)
            ),
        ))
    }
}

fn index_in(i: &Value, n: usize) -> Result<usize, crate::pynum::PyErr> {
    let i = int_arg(i)?;
    let j = if i < 0 { i + n as i64 } else { i };
    if (0..n as i64).contains(&j) {
        Ok(j as usize)
    } else {
        Err(("IndexError", "tuple index out of range".into()))
    }
}

/// `IndexGrad(d, x, index, cast_ints)`: zeros like tensor `x` holding `d` where `x[index]`
/// reads (float tensors; other dtypes get no gradient, or with `cast_ints` the float64 one
/// cast to their dtype).
fn index_grad(d: &Value, x_value: &Value, index: &Value, cast_ints: bool) -> OpResult {
    let x = need_tensor(x_value, "IndexGrad")?;
    if matches!(d, Value::None) {
        return Ok(Value::None);
    }
    if cast_ints && let Some(dtype) = integer_dtype(x_value) {
        let g = index_grad(d, &as_float64(x_value), index, false)?;
        return Ok(cast_back(g, dtype));
    }
    if !x.dtype().is_float() {
        // No gradient: a zero of the input's dtype, so the rules it feeds still apply.
        return Ok(Value::Tensor(t(Tensor::zeros(x.shape(), x.dtype()))?));
    }
    let adv = crate::indexing::tensor_adv_items(index)?;
    if adv
        .iter()
        .any(|i| matches!(i, anfora_tensor::AdvIndexItem::Array(_)))
    {
        // Advanced indices copy: the sensitivity is added back where each element was read
        // (positions read twice accumulate).
        let shape = t(x.index_adv(&adv))?.shape().to_vec();
        let d = sens_tensor(d, &shape, x.dtype())?
            .ok_or_else(|| type_error("IndexGrad: the sensitivity is not a number"))?;
        let d = if d.dtype() == x.dtype() {
            d
        } else {
            d.cast(x.dtype())
        };
        return Ok(Value::Tensor(t(d.index_add(x.shape(), &adv))?));
    }
    let items = crate::python::tensor_index_items(index)?;
    let view = t(x.index(&items))?;
    let d = sens_tensor(d, view.shape(), x.dtype())?
        .ok_or_else(|| type_error("IndexGrad: the sensitivity is not a number"))?;
    let d = if d.dtype() == x.dtype() {
        d
    } else {
        d.cast(x.dtype())
    };
    Ok(Value::Tensor(t(d.index_scatter(x.shape(), &items))?))
}

/// `SetItemGrad(d, index, value)`.
fn setitem_grad(d: &Value, index: &Value, value: &Value) -> OpResult {
    let Value::Tensor(dt) = d else {
        return Ok(Value::None);
    };
    let items = crate::indexing::tensor_adv_items(index)?;
    let sel = t(dt.index_last_writes(&items))?;
    match value {
        // numpy dropped the value's extra leading length-1 dimensions before broadcasting.
        Value::Tensor(vt) if vt.dtype().is_float() && vt.ndim() > sel.ndim() => {
            let mut dims = vt.shape();
            while dims.len() > sel.ndim() && dims[0] == 1 {
                dims = &dims[1..];
            }
            let r = reduce_to(&sel, dims, vt.dtype())?;
            Ok(Value::Tensor(crate::args::reshaped(&r, vt.shape())?))
        }
        _ => sum_to_shape(&Value::Tensor(sel), value, false),
    }
}

/// `GradTupleAt(t, i, d, cast_ints)`.
fn grad_tuple_at(tup: &Value, i: &Value, d: &Value, cast_ints: bool) -> OpResult {
    // `None` indexed is a zero sensitivity read by `GradItem` (a second derivative): it has
    // none itself. Strings and ranges carry no gradient.
    if matches!(tup, Value::Range(_) | Value::Str(_) | Value::None) {
        return Ok(Value::None);
    }
    // A dict's sensitivity is the tuple of its values' sensitivities, in key order.
    if let Value::Dict(dict) = tup {
        let at = match i {
            Value::Str(k) => dict.items.iter().position(|(key, _)| key == k),
            _ => None,
        };
        return Ok(match (at, d) {
            (Some(j), d) if !matches!(d, Value::None) => {
                let mut out = vec![Value::None; dict.items.len()];
                out[j] = d.clone();
                Value::tuple(out)
            }
            // A key it does not hold raised KeyError: nothing flows back.
            _ => Value::None,
        });
    }
    if matches!(tup, Value::Tensor(_)) {
        return index_grad(d, tup, i, cast_ints);
    }
    let Some(xs) = items(tup) else {
        return Err(type_error(format!(
            "the gradient of indexing a {} is not supported",
            tup.type_name()
        )));
    };
    if matches!(d, Value::None) {
        return Ok(Value::None);
    }
    let mut out = vec![Value::None; xs.len()];
    if let Value::Slice(sl) = i {
        // A slice's items' sensitivities go back to the positions it took them from.
        for (j, dj) in slice_positions(sl, xs.len())?
            .into_iter()
            .zip(items(d).unwrap_or(&[]))
        {
            out[j] = dj.clone();
        }
        return Ok(like(tup, out));
    }
    let j = index_in(i, xs.len())?;
    out[j] = d.clone();
    Ok(like(tup, out))
}

/// The positions `x[sl]` takes from a sequence of `len` items, in order.
fn slice_positions(
    sl: &crate::value::Slice,
    len: usize,
) -> Result<Vec<usize>, crate::pynum::PyErr> {
    let (start, _, step, count) = crate::python::slice_indices(sl, len as i64)?;
    Ok((0..count).map(|k| (start + k * step) as usize).collect())
}

/// `GradItem(d, i)`.
fn grad_item(d: &Value, i: &Value) -> OpResult {
    match d {
        Value::None => Ok(Value::None),
        d => getitem(d, i),
    }
}

/// `GradHead(ds, n)`.
fn grad_head(ds: &Value, n: &Value) -> OpResult {
    let xs = items(ds).ok_or_else(|| type_error("GradHead expects a tuple"))?;
    let n = int_arg(n)?.max(0) as usize;
    Ok(Value::tuple(xs[..xs.len().saturating_sub(n)].to_vec()))
}

/// `GradPad(d, n)`.
fn grad_pad(d: &Value, n: &Value) -> OpResult {
    let n = int_arg(n)?.max(0) as usize;
    match d {
        Value::None => Ok(Value::None),
        d => {
            let xs = items(d).ok_or_else(|| type_error("GradPad expects a tuple"))?;
            let mut out = xs.to_vec();
            out.extend(std::iter::repeat_n(Value::None, n));
            Ok(Value::tuple(out))
        }
    }
}

// ---- abstract values ----------------------------------------------------------------------
fn tensor(dtype: DType, shape: Vec<Option<usize>>) -> Abs {
    Abs::tensor(TensorAbs::new(dtype, shape))
}

fn sum_to_shape_abs(d: &Abs, x: &Abs) -> Abs {
    match (d, x) {
        (Abs::None, _) => Abs::None,
        (Abs::Any, _) | (_, Abs::Any) => Abs::Any,
        (Abs::Tensor(_) | Abs::Float(_) | Abs::Int(_) | Abs::Bool(_), Abs::Tensor(xt))
            if xt.dtype.is_float() =>
        {
            tensor(xt.dtype, xt.shape.clone())
        }
        (Abs::Tensor(_) | Abs::Float(_) | Abs::Int(_), Abs::Float(_)) => Abs::Float(None),
        (_, Abs::Tensor(xt)) => tensor(xt.dtype, xt.shape.clone()),
        (_, Abs::Int(_) | Abs::Bool(_)) => Abs::Int(Some(0)),
        (Abs::Tuple(ds) | Abs::List(ds), Abs::Tuple(xs) | Abs::List(xs)) => {
            let items: Vec<Abs> = (ds.iter().zip(xs.iter()))
                .map(|(d, x)| sum_to_shape_abs(d, x))
                .collect();
            match x {
                Abs::List(_) => Abs::List(items.into()),
                _ => Abs::tuple(items),
            }
        }
        _ => Abs::None,
    }
}

fn zeros_like_abs(x: &Abs) -> Abs {
    match x {
        Abs::Tensor(t) => tensor(t.dtype, t.shape.clone()),
        Abs::Ref(r) => tensor(r.dtype, r.shape.iter().map(|&n| Some(n)).collect()),
        Abs::Float(_) => Abs::Float(Some(0.0)),
        Abs::Int(_) => Abs::Int(Some(0)),
        Abs::Bool(_) => Abs::Bool(Some(false)),
        Abs::Tuple(xs) => Abs::tuple(xs.iter().map(zeros_like_abs).collect()),
        Abs::List(xs) => Abs::List(xs.iter().map(zeros_like_abs).collect()),
        Abs::Any => Abs::Any,
        _ => Abs::None,
    }
}

/// As the runtime's `FillZeros`: item by item over the shorter of two sequences, in the kind
/// of container `x` is.
/// The lengths of `a` and `b` where `a + b` concatenates them, and which operand is meant.
fn concat_lengths(args: &[Value]) -> Result<Option<(usize, usize, bool)>, crate::pynum::PyErr> {
    let second = int_arg(&args[3])? == 1;
    // A dict's sensitivity is a tuple of its values' (`DictMerge` concatenates dicts).
    let len = |v: &Value| match v {
        Value::Dict(d) => Some(d.items.len()),
        other => items(other).map(<[Value]>::len),
    };
    Ok(match (len(&args[1]), len(&args[2])) {
        (Some(a), Some(b)) => Some((a, b, second)),
        _ => None,
    })
}

fn concat_part(args: &[Value]) -> OpResult {
    let d = &args[0];
    match (concat_lengths(args)?, items(d)) {
        (Some((n, _, second)), Some(ds)) => {
            let part = if second {
                &ds[n.min(ds.len())..]
            } else {
                &ds[..n.min(ds.len())]
            };
            Ok(like(&args[1 + usize::from(second)], part.to_vec()))
        }
        _ => Ok(d.clone()),
    }
}

fn concat_pad(args: &[Value]) -> OpResult {
    let p = &args[0];
    match (concat_lengths(args)?, items(p)) {
        (Some((na, nb, second)), Some(ps)) => {
            let (before, after) = if second { (na, 0) } else { (0, nb) };
            let mut out = vec![Value::None; before];
            out.extend(ps.iter().cloned());
            out.extend(std::iter::repeat_n(Value::None, after));
            Ok(like(&args[1], out))
        }
        _ => Ok(p.clone()),
    }
}

fn abs_items(a: &Abs) -> Option<Vec<Abs>> {
    match a {
        Abs::Tuple(xs) | Abs::List(xs) => Some(xs.to_vec()),
        Abs::Dict(d) => Some(d.iter().map(|(_, x)| x.clone()).collect()),
        _ => None,
    }
}

fn concat_part_abs(a: &[Abs]) -> Abs {
    let (d, second) = (&a[0], a[3].as_i64() == Some(1));
    match (abs_items(&a[1]), abs_items(&a[2]), abs_items(d)) {
        (Some(xa), Some(_), Some(ds)) => {
            let n = xa.len().min(ds.len());
            let part = if second {
                ds[n..].to_vec()
            } else {
                ds[..n].to_vec()
            };
            match &a[1 + usize::from(second)] {
                Abs::List(_) => Abs::List(part.into()),
                _ => Abs::tuple(part),
            }
        }
        (Some(_), Some(_), None) if !matches!(d, Abs::None) => Abs::Any,
        _ => d.clone(),
    }
}

fn concat_pad_abs(a: &[Abs]) -> Abs {
    let (p, second) = (&a[0], a[3].as_i64() == Some(1));
    match (abs_items(&a[1]), abs_items(&a[2]), abs_items(p)) {
        (Some(xa), Some(xb), Some(ps)) => {
            let mut out = vec![Abs::None; if second { xa.len() } else { 0 }];
            out.extend(ps);
            out.extend(std::iter::repeat_n(
                Abs::None,
                if second { 0 } else { xb.len() },
            ));
            match &a[1] {
                Abs::List(_) => Abs::List(out.into()),
                _ => Abs::tuple(out),
            }
        }
        (Some(_), Some(_), None) if !matches!(p, Abs::None) => Abs::Any,
        _ => p.clone(),
    }
}

fn sequence_grad_abs(d: &Abs, x: &Abs) -> Abs {
    match x {
        Abs::Tuple(_) | Abs::List(_) => fill_zeros_abs(d, x),
        Abs::Tensor(t) => tensor_abs(t.dtype, t.shape.clone()),
        Abs::Any => Abs::Any,
        _ => Abs::None,
    }
}

fn sequence_grad(d: &Value, x: &Value) -> OpResult {
    match x {
        Value::Tuple(_) | Value::List(_) => fill_zeros(d, x),
        Value::Tensor(xt) => {
            let rows = match items(d) {
                Some(rows) => rows.to_vec(),
                None => return zeros_like(x),
            };
            let row_shape = xt.shape().get(1..).unwrap_or(&[]);
            let dense = (rows.iter())
                .map(|r| match r {
                    Value::Tensor(r) => Ok(r.clone()),
                    _ => t(Tensor::zeros(row_shape, xt.dtype())),
                })
                .collect::<Result<Vec<_>, _>>()?;
            if dense.is_empty() {
                return zeros_like(x);
            }
            Ok(Value::Tensor(t(Tensor::stack(&dense, 0))?))
        }
        _ => Ok(Value::None),
    }
}

fn fill_zeros_abs(d: &Abs, x: &Abs) -> Abs {
    let items = |a: &Abs| match a {
        Abs::Tuple(xs) | Abs::List(xs) => Some(xs.clone()),
        _ => None,
    };
    match (d, x) {
        (Abs::None, x) => zeros_like_abs(x),
        (d, x) if items(d).is_some() && items(x).is_some() => {
            let (ds, xs) = (items(d).unwrap_or_default(), items(x).unwrap_or_default());
            let filled: Vec<Abs> = ds
                .iter()
                .zip(xs.iter())
                .map(|(d, x)| fill_zeros_abs(d, x))
                .collect();
            match x {
                Abs::List(_) => Abs::List(filled.into()),
                _ => Abs::tuple(filled),
            }
        }
        (d, _) => d.clone(),
    }
}

fn sens_ones_abs(y: &Abs) -> Abs {
    match y {
        Abs::Tensor(t) => tensor(t.dtype, t.shape.clone()),
        Abs::Float(_) | Abs::Int(_) | Abs::Bool(_) => Abs::Float(Some(1.0)),
        Abs::Tuple(xs) => Abs::tuple(xs.iter().map(sens_ones_abs).collect()),
        Abs::List(xs) => Abs::List(xs.iter().map(sens_ones_abs).collect()),
        Abs::Any => Abs::Any,
        _ => Abs::None,
    }
}

/// Whether a user-given sensitivity `d` fits the output `y` (dimensions and values only known
/// at run time pass here and are checked by the VM).
fn sens_check_abs(d: &Abs, y: &Abs) -> Result<(), String> {
    let describe = |a: &Abs| match a {
        Abs::Tensor(t) => format!(
            "a {} tensor of shape {}",
            t.dtype.name(),
            crate::abs::shape_text(&t.shape, "?", ", ")
        ),
        a => a.to_string(),
    };
    match (d, y) {
        // Unknown yet (Bottom: a recursion's first round).
        (Abs::Any | Abs::Bottom, _) | (_, Abs::Any | Abs::Bottom) => Ok(()),
        (Abs::Tensor(dt), Abs::Tensor(yt)) => {
            let shapes_fit = dt.shape.len() == yt.shape.len()
                && (dt.shape.iter().zip(&yt.shape))
                    .all(|(a, b)| a.is_none() || b.is_none() || a == b);
            if dt.dtype != yt.dtype || !shapes_fit {
                return Err(format!(
                    "expected {} like the output, got {}",
                    describe(y),
                    describe(d)
                ));
            }
            Ok(())
        }
        (Abs::Float(_) | Abs::Int(_), Abs::Float(_) | Abs::Int(_) | Abs::Bool(_)) => Ok(()),
        (Abs::Tuple(ds), Abs::Tuple(ys)) | (Abs::List(ds), Abs::List(ys))
            if ds.len() == ys.len() =>
        {
            ds.iter()
                .zip(ys.iter())
                .try_for_each(|(d, y)| sens_check_abs(d, y))
        }
        _ => Err(format!(
            "expected {} like the output, got {}",
            describe(y),
            describe(d)
        )),
    }
}

fn grad_add_abs(a: &Abs, b: &Abs) -> Rule {
    Ok(match (a, b) {
        (Abs::None, x) | (x, Abs::None) => x.clone(),
        (Abs::Any, _) | (_, Abs::Any) => Abs::Any,
        (Abs::Tuple(xs), Abs::Tuple(ys)) if xs.len() == ys.len() => Abs::tuple(
            xs.iter()
                .zip(ys.iter())
                .map(|(x, y)| grad_add_abs(x, y))
                .collect::<Result<_, _>>()?,
        ),
        (Abs::List(xs), Abs::List(ys)) if xs.len() == ys.len() => Abs::List(
            xs.iter()
                .zip(ys.iter())
                .map(|(x, y)| grad_add_abs(x, y))
                .collect::<Result<_, _>>()?,
        ),
        (a, b) => Prim::Add.infer(&[a.clone(), b.clone()])?,
    })
}

fn index_abs(i: &Abs, n: usize) -> Option<usize> {
    let i = i.as_i64()?;
    let j = if i < 0 { i + n as i64 } else { i };
    (0..n as i64).contains(&j).then_some(j as usize)
}

/// `IndexGrad(d, x, index)`: shaped like `x` (float tensors); the index is checked as
/// `x[index]` would be.
fn index_grad_abs(d: &Abs, x: &Abs, index: &Abs) -> Rule {
    let Abs::Tensor(xt) = x else {
        return Ok(Abs::Any);
    };
    getitem_abs(x, index)?;
    Ok(if matches!(d, Abs::None) {
        Abs::None
    } else {
        tensor(xt.dtype, xt.shape.clone())
    })
}

fn grad_tuple_at_abs(t: &Abs, i: &Abs, d: &Abs) -> Rule {
    if let Abs::Dict(dict) = t {
        let at = match i {
            Abs::Str(Some(k)) => dict.iter().position(|(key, _)| key == k),
            _ => None,
        };
        return Ok(match (at, d) {
            (Some(j), d) if !matches!(d, Abs::None) => {
                let mut out = vec![Abs::None; dict.len()];
                out[j] = d.clone();
                Abs::tuple(out)
            }
            _ => Abs::None,
        });
    }
    let (items, list) = match t {
        Abs::Any => return Ok(Abs::Any),
        Abs::Tensor(_) => return index_grad_abs(d, t, i),
        Abs::Tuple(xs) => (xs, false),
        Abs::List(xs) => (xs, true),
        Abs::Range(_) | Abs::Str(_) | Abs::None => return Ok(Abs::None),
        other => {
            return Err(RuleError(format!(
                "the gradient of indexing {other} is not supported yet"
            )));
        }
    };
    if matches!(d, Abs::None) {
        return Ok(Abs::None);
    }
    let mut out = vec![Abs::None; items.len()];
    if let Abs::Slice(sl) = i {
        let (Some(sl), Some(ds)) = (sl, crate::python::items_abs(d)) else {
            return Ok(Abs::Any);
        };
        let Ok(positions) = slice_positions(sl, items.len()) else {
            return Ok(Abs::Any);
        };
        for (j, dj) in positions.into_iter().zip(ds) {
            out[j] = dj;
        }
        return Ok(if list {
            Abs::List(out.into())
        } else {
            Abs::tuple(out)
        });
    }
    let Some(j) = index_abs(i, items.len()) else {
        return Ok(Abs::Any);
    };
    out[j] = d.clone();
    Ok(if list {
        Abs::List(out.into())
    } else {
        Abs::tuple(out)
    })
}

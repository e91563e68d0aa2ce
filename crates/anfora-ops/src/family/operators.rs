//! Python's operators on numbers, sequences and tensors: arithmetic, bitwise operations and
//! comparisons (numpy's ufuncs on tensors, with broadcasting and NEP 50 promotion), the unary
//! `-`, `+` and `~`, numpy's `maximum`/`minimum` and the builtin `divmod`.

use std::cmp::Ordering;
use std::rc::Rc;

use anfora_tensor::BinaryOp as B;
use anfora_tensor::{
    BinaryOp, DType, Tensor, UnaryOp, binary_result_dtype, binary_scalar_result_dtype,
};

use crate::abs::{Abs, Rule, from_tensor_error};
use crate::alloc;
use crate::args::{Kind, broadcast, kind, scalar_of, tensor_abs, unary_tensor_abs};
use crate::def::{Backward, EvalFn, Kernels, PrimDef, Py, primitives, unless_float};
use crate::emit::{Call, Emit, Grads, int, scaled, unbroadcast};
use crate::prim::Prim;
use crate::pynum::{self, IntPow, PyErr, overflow, tensor, type_error, value_error};
use crate::python::{MAX_ITEMS, truth};
use crate::value::{OpResult, Value};

primitives! {
    family operators = 1;

    Add = operator("Add", B::Add, Backward::Rule(add_back))
        .called(&[Py::Op("add")]).raising(unless_float).passing_values();
    /// `x += y`: like Add, but refuses lists (Python would mutate them in place).
    InplaceAdd = unfused_operator("InplaceAdd", B::Add, Backward::Rule(add_back))
        .passing_values().labelled("add");
    Sub = operator("Sub", B::Sub, Backward::Rule(sub_back))
        .called(&[Py::Op("sub")]).raising(unless_float);
    Mul = operator("Mul", B::Mul, Backward::Rule(mul_back))
        .called(&[Py::Op("mul")]).raising(unless_float).passing_values();
    /// `x *= y`: like Mul, but refuses lists.
    InplaceMul = unfused_operator("InplaceMul", B::Mul, Backward::Rule(mul_back))
        .passing_values().labelled("mul");
    Div = operator("Div", B::Div, Backward::Rule(div_back))
        .called(&[Py::Op("div")]).raising(unless_float);
    FloorDiv = operator("FloorDiv", B::FloorDiv, Backward::Zero)
        .called(&[Py::Op("floor_div")]);
    Mod = operator("Mod", B::Mod, Backward::Rule(mod_back))
        .called(&[Py::Op("mod")]);
    Pow = operator("Pow", B::Pow, Backward::Rule(pow_back))
        .called(&[Py::Builtin("pow"), Py::Op("pow")]).signed("(base, exp)");
    LShift = unfused_operator("LShift", B::LShift, Backward::Zero)
        .labelled("left_shift");
    RShift = unfused_operator("RShift", B::RShift, Backward::Zero)
        .labelled("right_shift");
    BitAnd = operator("BitAnd", B::BitAnd, Backward::Zero)
        .labelled("bitwise_and");
    BitOr = operator("BitOr", B::BitOr, Backward::Zero)
        .labelled("bitwise_or");
    BitXor = operator("BitXor", B::BitXor, Backward::Zero)
        .labelled("bitwise_xor");
    Eq = comparison("Equal", B::Eq, &[Py::Op("equal")])
        .raising(equality_raises);
    Ne = comparison("NotEqual", B::Ne, &[Py::Op("not_equal")])
        .raising(equality_raises);
    Lt = comparison("Less", B::Lt, &[Py::Op("less")]);
    Le = comparison("LessEqual", B::Le, &[Py::Op("less_equal")]);
    Gt = comparison("Greater", B::Gt, &[Py::Op("greater")]);
    Ge = comparison("GreaterEqual", B::Ge, &[Py::Op("greater_equal")]);
    /// numpy's `maximum`: elementwise, NaN-propagating on tensors.
    Maximum = extremum("Maximum", B::Maximum, &[Py::Op("maximum")]);
    /// numpy's `minimum`.
    Minimum = extremum("Minimum", B::Minimum, &[Py::Op("minimum")]);
    /// The builtin `divmod(x, y)`: `(x // y, x % y)`.
    Divmod = PrimDef::new("divmod", "(x, y)", binary_abs, |p, a, _| binary(p, &a[0], &a[1]),
        Backward::Refused("divmod is not differentiated (use // and % separately)"))
        .tensor_kernel().called(&[Py::Builtin("divmod")]);
    /// `-x`.
    Neg = unary_operator("Neg", UnaryOp::Neg, Backward::Rule(neg_back))
        .called(&[Py::Op("neg")]).raising(unless_float);
    /// `+x`.
    Pos = unary_operator("Pos", UnaryOp::Pos, Backward::Rule(pos_back))
        .labelled("positive");
    /// `~x`.
    Invert = unary_operator("Invert", UnaryOp::Invert, Backward::Zero)
        .labelled("invert");
}

/// A binary operator: Python's on numbers and sequences, numpy's ufunc `op` on tensors (fused
/// into one-pass kernels, and computed into a free operand's buffer).
const fn operator(name: &'static str, op: BinaryOp, backward: Backward) -> PrimDef {
    let eval: EvalFn = |p, a, _| binary(p, &a[0], &a[1]);
    PrimDef::new(name, "(x, y)", binary_abs, eval, backward)
        .tensor_kernel()
        .with_kernels(Kernels::Binary { op, fused: true })
}

/// A binary operator the one-pass kernels do not take.
const fn unfused_operator(name: &'static str, op: BinaryOp, backward: Backward) -> PrimDef {
    operator(name, op, backward).with_kernels(Kernels::Binary { op, fused: false })
}

/// A comparison: a bool (tensors: elementwise), no gradient.
const fn comparison(name: &'static str, op: BinaryOp, python: &'static [Py]) -> PrimDef {
    PrimDef {
        eval: |p, a, _| compare(p, &a[0], &a[1]),
        ..operator(name, op, Backward::Zero)
    }
    .raising(unless_float)
    .called(python)
}

/// numpy's `maximum`/`minimum` of tensors or numbers.
const fn extremum(name: &'static str, op: BinaryOp, python: &'static [Py]) -> PrimDef {
    PrimDef {
        eval: extremum_eval,
        ..operator(name, op, Backward::Rule(extremum_back))
    }
    .raising(unless_float)
    .called(python)
}

/// A unary operator: numpy's `op` on tensors.
const fn unary_operator(name: &'static str, op: UnaryOp, backward: Backward) -> PrimDef {
    PrimDef {
        signature: "(x)",
        infer: unary_abs,
        eval: |p, a, _| unary(p, &a[0]),
        kernels: Kernels::Unary(op),
        ..operator(name, B::Add, backward)
    }
}

/// `==` and `!=` raise only where a tensor or a sequence holding one is compared.
fn equality_raises(args: &[Abs]) -> bool {
    !args
        .iter()
        .any(|a| matches!(a, Abs::Tensor(_) | Abs::Tuple(_) | Abs::List(_) | Abs::Any))
}

/// `maximum(x, y)`/`minimum(x, y)` of tensors or numbers.
fn extremum_eval(p: Prim, a: &[Value], _: &mut dyn std::io::Write) -> OpResult {
    match tensor_binary(p, &a[0], &a[1]) {
        Some(r) => r,
        None => match (num(&a[0]), num(&a[1])) {
            (Some(x), Some(y)) => arith(p, x, y, &a[0], &a[1]),
            _ => Err(type_error(format!(
                "{}() expects tensors or numbers",
                p.python_name()
            ))),
        },
    }
}

fn unary_abs(p: Prim, a: &[Abs]) -> Rule {
    match &a[0] {
        Abs::Tensor(t) => {
            unary_tensor_abs(p.def().kernels.unary_op().unwrap_or(UnaryOp::Invert), t)
        }
        Abs::Any => Ok(Abs::Any),
        x => Ok(match (p, kind(x)) {
            (Prim::Neg | Prim::Pos, Some(Kind::Float)) => Abs::Float(None),
            (_, Some(_)) => Abs::Int(None),
            _ => Abs::Bottom,
        }),
    }
}

// ---- backward rules ---------------------------------------------------------------------

fn neg_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let mut g = c.none();
    g[0] = Some(e.op(Prim::Neg, &[c.d]));
    Some(g)
}

fn pos_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    Some(c.first(e, |_| c.d))
}

/// Numbers and tensors: `d`, summed to each operand's shape. A concatenation of tuples or
/// lists: each operand's own items of `d` (`ConcatPart`).
fn add_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    Some(c.each(e, 0..2, |e, i| {
        let side = int(e, i as i64);
        let part = e.op(Prim::ConcatPart, &[c.d, c.x[0], c.x[1], side]);
        unbroadcast(e, part, c.x[i])
    }))
}

fn sub_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    Some(c.each(e, 0..2, |e, i| {
        if i == 0 {
            return unbroadcast(e, c.d, c.x[0]);
        }
        let nd = e.op(Prim::Neg, &[c.d]);
        unbroadcast(e, nd, c.x[1])
    }))
}

fn mul_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    Some(c.each(e, 0..2, |e, i| scaled(e, c.d, c.x[1 - i], c.x[i])))
}

fn div_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    Some(c.each(e, 0..2, |e, i| {
        if i == 0 {
            let t = e.op(Prim::Div, &[c.d, c.x[1]]);
            return unbroadcast(e, t, c.x[0]);
        }
        // d(x/y)/dy = -out / y
        let q = e.op(Prim::Div, &[c.out, c.x[1]]);
        let t = e.op(Prim::Mul, &[c.d, q]);
        let t = e.op(Prim::Neg, &[t]);
        unbroadcast(e, t, c.x[1])
    }))
}

fn pow_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    Some(c.each(e, 0..2, |e, i| {
        let t = if i == 0 {
            let one = int(e, 1);
            let ym1 = e.op(Prim::Sub, &[c.x[1], one]);
            let pw = e.op(Prim::Pow, &[c.x[0], ym1]);
            e.op(Prim::Mul, &[c.x[1], pw])
        } else {
            let l = e.op(Prim::Log, &[c.x[0]]);
            e.op(Prim::Mul, &[c.out, l])
        };
        let t = e.op(Prim::Mul, &[c.d, t]);
        unbroadcast(e, t, c.x[i])
    }))
}

fn mod_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    Some(c.each(e, 0..2, |e, i| {
        if i == 0 {
            return unbroadcast(e, c.d, c.x[0]);
        }
        let q = e.op(Prim::FloorDiv, &[c.x[0], c.x[1]]);
        let t = e.op(Prim::Mul, &[c.d, q]);
        let t = e.op(Prim::Neg, &[t]);
        unbroadcast(e, t, c.x[1])
    }))
}

/// The larger (smaller) argument gets the sensitivity; ties go to the first.
fn extremum_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let (first, second) = if c.prim == Prim::Maximum {
        (Prim::Ge, Prim::Lt)
    } else {
        (Prim::Le, Prim::Gt)
    };
    Some(c.each(e, 0..2, |e, i| {
        let m = e.op(if i == 0 { first } else { second }, &[c.x[0], c.x[1]]);
        scaled(e, c.d, m, c.x[i])
    }))
}

// ---- runtime values -----------------------------------------------------------------------

#[derive(Clone, Copy)]
enum Num {
    I(i64),
    F(f64),
}

fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Bool(b) => Some(Num::I(*b as i64)),
        Value::Int(i) => Some(Num::I(*i)),
        Value::Float(f) => Some(Num::F(*f)),
        _ => None,
    }
}

fn as_f64(n: Num) -> f64 {
    match n {
        Num::I(i) => i as f64,
        Num::F(f) => f,
    }
}

fn symbol(p: Prim) -> &'static str {
    match p {
        Prim::Add | Prim::InplaceAdd => "+",
        Prim::Sub => "-",
        Prim::Mul | Prim::InplaceMul => "*",
        Prim::Div => "/",
        Prim::FloorDiv => "//",
        Prim::Mod => "%",
        Prim::Pow => "** or pow()",
        Prim::MatMul => "@",
        Prim::LShift => "<<",
        Prim::RShift => ">>",
        Prim::BitAnd => "&",
        Prim::BitOr => "|",
        Prim::BitXor => "^",
        Prim::Lt => "<",
        Prim::Le => "<=",
        Prim::Gt => ">",
        Prim::Ge => ">=",
        Prim::Eq => "==",
        Prim::Ne => "!=",
        Prim::Divmod => "divmod()",
        _ => "?",
    }
}

fn unsupported(p: Prim, a: &Value, b: &Value) -> PyErr {
    type_error(format!(
        "unsupported operand type(s) for {}: '{}' and '{}'",
        symbol(p),
        a.type_name(),
        b.type_name()
    ))
}

/// A tensor operation if either side is a tensor and the other a tensor or Python scalar.
fn tensor_binary(p: Prim, a: &Value, b: &Value) -> Option<OpResult> {
    let op = p.def().kernels.binary_op()?;
    let r = match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => Tensor::binary(op, x, y),
        (Value::Tensor(x), s) => Tensor::binary_scalar(op, x, s.as_scalar()?, false),
        (s, Value::Tensor(y)) => Tensor::binary_scalar(op, y, s.as_scalar()?, true),
        _ => return None,
    };
    Some(tensor(r).map(Value::Tensor))
}

fn repeat(items: &[Value], n: i64, what: &str) -> Result<Rc<[Value]>, PyErr> {
    let n = n.max(0) as i128;
    if items.len() as i128 * n > MAX_ITEMS {
        return Err((
            "MemoryError",
            format!("{what} repetition result is too large"),
        ));
    }
    alloc::repeat(what, items, n as usize)
}

/// Binary operators, comparisons and `divmod`.
fn binary(p: Prim, a: &Value, b: &Value) -> OpResult {
    if let Some(r) = tensor_binary(p, a, b) {
        return r;
    }
    if matches!(
        p,
        Prim::Eq | Prim::Ne | Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge
    ) {
        return compare(p, a, b);
    }
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return arith(p, x, y, a, b);
    }
    let concat_err = |kind: &str| {
        type_error(format!(
            "can only concatenate {kind} (not \"{}\") to {kind}",
            b.type_name()
        ))
    };
    match (p, a, b) {
        (Prim::Add | Prim::InplaceAdd, Value::Str(x), Value::Str(y)) => {
            Ok(Value::Str(alloc::concat_str(&[x, y])?))
        }
        (Prim::Add | Prim::InplaceAdd, Value::Str(_), _) => Err(concat_err("str")),
        (Prim::Add | Prim::InplaceAdd, Value::Tuple(x), Value::Tuple(y)) => {
            Ok(Value::Tuple(alloc::concat("tuple", &[x, y])?))
        }
        (Prim::Add | Prim::InplaceAdd, Value::Tuple(_), _) => Err(concat_err("tuple")),
        // `xs += ys` extends the list (the frontend let it through only where `xs` is the
        // list's only holder, so the new list is exactly the old one extended).
        (Prim::Add, Value::List(x), Value::List(y))
        | (Prim::InplaceAdd, Value::List(x), Value::List(y) | Value::Tuple(y)) => {
            Ok(Value::List(alloc::concat("list", &[x, y])?))
        }
        (Prim::InplaceAdd, Value::List(_), other) => Err(type_error(format!(
            "compiled code extends a list by a list or a tuple, not by a '{}'",
            other.type_name()
        ))),
        (Prim::Add, Value::List(_), _) => Err(concat_err("list")),
        (Prim::Mul | Prim::InplaceMul, seq, n) | (Prim::Mul | Prim::InplaceMul, n, seq)
            if matches!(seq, Value::Str(_) | Value::Tuple(_) | Value::List(_))
                && matches!(n, Value::Int(_) | Value::Bool(_)) =>
        {
            let n = n.as_index().unwrap_or(0);
            match seq {
                Value::Str(s) => {
                    let reps = n.max(0) as i128;
                    if s.len() as i128 * reps > MAX_ITEMS {
                        return Err(("MemoryError", "str repetition result is too large".into()));
                    }
                    Ok(Value::Str(alloc::repeat_str(s, reps as usize)?))
                }
                Value::Tuple(items) => Ok(Value::Tuple(repeat(items, n, "tuple")?)),
                Value::List(items) => Ok(Value::List(repeat(items, n, "list")?)),
                _ => unreachable!("checked above"),
            }
        }
        (Prim::Mod, Value::Str(_), _) => Err(type_error(
            "string formatting with `%` is not supported in compiled code; build the text with str() and +",
        )),
        (Prim::Divmod, Value::Tensor(_), _) | (Prim::Divmod, _, Value::Tensor(_)) => {
            let q = binary(Prim::FloorDiv, a, b)?;
            let r = binary(Prim::Mod, a, b)?;
            Ok(Value::tuple(vec![q, r]))
        }
        _ => Err(unsupported(p, a, b)),
    }
}

fn arith(p: Prim, x: Num, y: Num, a: &Value, b: &Value) -> OpResult {
    use Num::*;
    let both_bool = matches!((a, b), (Value::Bool(_), Value::Bool(_)));
    let r = match (p, x, y) {
        (Prim::Add | Prim::InplaceAdd, I(i), I(j)) => {
            Value::Int(i.checked_add(j).ok_or_else(|| overflow("+"))?)
        }
        (Prim::Sub, I(i), I(j)) => Value::Int(i.checked_sub(j).ok_or_else(|| overflow("-"))?),
        (Prim::Mul | Prim::InplaceMul, I(i), I(j)) => {
            Value::Int(i.checked_mul(j).ok_or_else(|| overflow("*"))?)
        }
        (Prim::Add | Prim::InplaceAdd, x, y) => Value::new_float(as_f64(x) + as_f64(y)),
        (Prim::Sub, x, y) => Value::new_float(as_f64(x) - as_f64(y)),
        (Prim::Mul | Prim::InplaceMul, x, y) => Value::new_float(as_f64(x) * as_f64(y)),
        (Prim::Div, I(i), I(j)) => Value::new_float(pynum::int_true_div(i, j)?),
        (Prim::Div, x, y) => Value::new_float(pynum::float_true_div(as_f64(x), as_f64(y))?),
        (Prim::FloorDiv, I(i), I(j)) => Value::Int(pynum::int_floor_div(i, j)?),
        (Prim::FloorDiv, x, y) => Value::new_float(pynum::float_floor_div(as_f64(x), as_f64(y))?),
        (Prim::Mod, I(i), I(j)) => Value::Int(pynum::int_mod(i, j)?),
        (Prim::Mod, x, y) => Value::new_float(pynum::float_mod(as_f64(x), as_f64(y))?),
        (Prim::Divmod, I(i), I(j)) => {
            if j == 0 {
                return Err((
                    "ZeroDivisionError",
                    "integer division or modulo by zero".into(),
                ));
            }
            Value::tuple(vec![
                Value::Int(pynum::int_floor_div(i, j)?),
                Value::Int(pynum::int_mod(i, j)?),
            ])
        }
        (Prim::Divmod, x, y) => {
            let (q, r) = pynum::float_divmod(as_f64(x), as_f64(y))?;
            Value::tuple(vec![Value::new_float(q), Value::new_float(r)])
        }
        (Prim::Pow, I(i), I(j)) => match pynum::int_pow(i, j)? {
            IntPow::Int(v) => Value::Int(v),
            IntPow::Float(f) => Value::new_float(f),
        },
        (Prim::Pow, x, y) => Value::new_float(pynum::float_pow(as_f64(x), as_f64(y))?),
        (Prim::BitAnd | Prim::BitOr | Prim::BitXor, I(i), I(j)) => {
            let v = match p {
                Prim::BitAnd => i & j,
                Prim::BitOr => i | j,
                _ => i ^ j,
            };
            if both_bool {
                Value::Bool(v != 0)
            } else {
                Value::Int(v)
            }
        }
        (Prim::LShift, I(i), I(j)) => {
            if j < 0 {
                return Err(value_error("negative shift count"));
            }
            if i == 0 {
                Value::Int(0)
            } else if j >= 64 {
                return Err(overflow("<<"));
            } else {
                let r = i << j;
                if r >> j != i {
                    return Err(overflow("<<"));
                }
                Value::Int(r)
            }
        }
        (Prim::RShift, I(i), I(j)) => {
            if j < 0 {
                return Err(value_error("negative shift count"));
            }
            Value::Int(if j >= 64 {
                if i < 0 { -1 } else { 0 }
            } else {
                i >> j
            })
        }
        (Prim::Maximum, _, _) => {
            if truth(&compare(Prim::Gt, b, a)?)? {
                b.clone()
            } else {
                a.clone()
            }
        }
        (Prim::Minimum, _, _) => {
            if truth(&compare(Prim::Lt, b, a)?)? {
                b.clone()
            } else {
                a.clone()
            }
        }
        _ => return Err(unsupported(p, a, b)),
    };
    Ok(r)
}

fn seq_compare(p: Prim, x: &[Value], y: &[Value]) -> OpResult {
    for (u, v) in x.iter().zip(y.iter()) {
        if !crate::python::same_or_eq(u, v)? {
            return match p {
                Prim::Eq => Ok(Value::Bool(false)),
                Prim::Ne => Ok(Value::Bool(true)),
                _ => compare(p, u, v),
            };
        }
    }
    Ok(Value::Bool(ord_holds(p, x.len().cmp(&y.len()))))
}

fn ord_holds(p: Prim, o: Ordering) -> bool {
    match p {
        Prim::Eq => o == Ordering::Equal,
        Prim::Ne => o != Ordering::Equal,
        Prim::Lt => o == Ordering::Less,
        Prim::Le => o != Ordering::Greater,
        Prim::Gt => o == Ordering::Greater,
        Prim::Ge => o != Ordering::Less,
        _ => false,
    }
}

/// Comparisons `== != < <= > >=`.
fn compare(p: Prim, a: &Value, b: &Value) -> OpResult {
    crate::deep(|| compare_inner(p, a, b))
}

fn compare_inner(p: Prim, a: &Value, b: &Value) -> OpResult {
    if let Some(r) = tensor_binary(p, a, b) {
        return r;
    }
    let eq_only = matches!(p, Prim::Eq | Prim::Ne);
    let ord = match (a, b) {
        _ if num(a).is_some() && num(b).is_some() => {
            let o = match (num(a).unwrap(), num(b).unwrap()) {
                (Num::I(i), Num::I(j)) => Some(i.cmp(&j)),
                (Num::I(i), Num::F(f)) => pynum::cmp_int_float(i, f),
                (Num::F(f), Num::I(i)) => pynum::cmp_int_float(i, f).map(Ordering::reverse),
                (Num::F(f), Num::F(g)) => f.partial_cmp(&g),
            };
            // NaN compares unequal and unordered.
            return Ok(Value::Bool(match o {
                Some(o) => ord_holds(p, o),
                None => p == Prim::Ne,
            }));
        }
        (Value::Str(x), Value::Str(y)) => x.cmp(y),
        (Value::Tuple(x), Value::Tuple(y)) | (Value::List(x), Value::List(y)) => {
            return seq_compare(p, x, y);
        }
        (Value::None, Value::None) if eq_only => Ordering::Equal,
        (Value::Dict(x), Value::Dict(y)) if eq_only => {
            // Equal when both have the same keys, whatever their order, and equal values.
            let mut same = x.items.len() == y.items.len();
            for (k, v) in &x.items {
                if !same {
                    break;
                }
                same = match y.get(k) {
                    Some(w) => crate::python::same_or_eq(v, w)?,
                    None => false,
                };
            }
            if same {
                Ordering::Equal
            } else {
                Ordering::Less
            }
        }
        (Value::DType(x), Value::DType(y)) if eq_only => {
            if x == y {
                Ordering::Equal
            } else {
                Ordering::Less
            }
        }
        (Value::DType(d), Value::Str(s)) | (Value::Str(s), Value::DType(d)) if eq_only => {
            if DType::from_name(s) == Some(*d) {
                Ordering::Equal
            } else {
                Ordering::Less
            }
        }
        (Value::Range(x), Value::Range(y)) if eq_only => {
            let same = x.len() == y.len()
                && (x.is_empty() || (x.start == y.start && (x.len() == 1 || x.step == y.step)));
            if same {
                Ordering::Equal
            } else {
                Ordering::Less
            }
        }
        (Value::Prim(x), Value::Prim(y)) if eq_only => {
            if x == y {
                Ordering::Equal
            } else {
                Ordering::Less
            }
        }
        (Value::Closure(x), Value::Closure(y)) if eq_only => {
            let same = x.graph == y.graph
                && (Rc::ptr_eq(&x.captures, &y.captures)
                    || (x.captures.is_empty() && y.captures.is_empty()));
            if same {
                Ordering::Equal
            } else {
                Ordering::Less
            }
        }
        (Value::Ellipsis, Value::Ellipsis) if eq_only => Ordering::Equal,
        (Value::Slice(x), Value::Slice(y)) if eq_only => {
            if x == y {
                Ordering::Equal
            } else {
                Ordering::Less
            }
        }
        _ if eq_only => return Ok(Value::Bool(p == Prim::Ne)),
        _ => {
            return Err(type_error(format!(
                "'{}' not supported between instances of '{}' and '{}'",
                symbol(p),
                a.type_name(),
                b.type_name()
            )));
        }
    };
    Ok(Value::Bool(ord_holds(p, ord)))
}

/// Unary `-`, `+`, `~`.
fn unary(p: Prim, a: &Value) -> OpResult {
    let sym = match p {
        Prim::Neg => "-",
        Prim::Pos => "+",
        _ => "~",
    };
    match (p, a) {
        (_, Value::Tensor(t)) => {
            let op = p.def().kernels.unary_op().unwrap_or(UnaryOp::Invert);
            tensor(Tensor::unary(op, t)).map(Value::Tensor)
        }
        (Prim::Neg, Value::Float(f)) => Ok(Value::new_float(-f)),
        (Prim::Pos, Value::Float(f)) => Ok(Value::Float(*f)),
        (_, v) if v.as_index().is_some() => {
            let i = v.as_index().unwrap();
            Ok(Value::Int(match p {
                Prim::Neg => i.checked_neg().ok_or_else(|| overflow("unary -"))?,
                Prim::Pos => i,
                _ => !i,
            }))
        }
        _ => Err(type_error(format!(
            "bad operand type for unary {sym}: '{}'",
            a.type_name()
        ))),
    }
}

// ---- abstract values ----------------------------------------------------------------------

/// The result of a binary operation when a tensor is involved; `None` if no tensor is.
fn tensor_binary_abs(op: BinaryOp, a: &Abs, b: &Abs) -> Option<Rule> {
    let r = match (a, b) {
        (Abs::Tensor(x), Abs::Tensor(y)) => (|| {
            let shape = broadcast(&x.shape, &y.shape)?;
            let dtype = binary_result_dtype(op, x.dtype, y.dtype).map_err(from_tensor_error)?;
            Ok(tensor_abs(dtype, shape))
        })(),
        (Abs::Tensor(x), s) | (s, Abs::Tensor(x)) => match scalar_of(s) {
            Some(sc) => binary_scalar_result_dtype(op, x.dtype, sc)
                .map(|d| tensor_abs(d, x.shape.clone()))
                .map_err(from_tensor_error),
            // A tensor with something that is neither a tensor nor a number: a TypeError at
            // run time if the other side is known, unknown otherwise.
            None if matches!(s, Abs::Any | Abs::Bottom) => Ok(s.clone()),
            None => Ok(Abs::Bottom),
        },
        _ => return None,
    };
    Some(r)
}

fn number_binary(p: Prim, a: Kind, b: Kind) -> Abs {
    use Kind::*;
    let wider = if a == Float || b == Float { Float } else { Int };
    let of = |n: Kind| match n {
        Bool => Abs::Bool(None),
        Int => Abs::Int(None),
        Float => Abs::Float(None),
    };
    match p {
        Prim::Add
        | Prim::InplaceAdd
        | Prim::Sub
        | Prim::Mul
        | Prim::InplaceMul
        | Prim::FloorDiv
        | Prim::Mod => of(wider),
        Prim::Div => Abs::Float(None),
        Prim::Pow if wider == Float => Abs::Float(None),
        // An int to an int power is an int, or a float for a negative exponent.
        Prim::Pow => Abs::Any,
        Prim::BitAnd | Prim::BitOr | Prim::BitXor if a == Bool && b == Bool => Abs::Bool(None),
        Prim::BitAnd | Prim::BitOr | Prim::BitXor | Prim::LShift | Prim::RShift if wider == Int => {
            Abs::Int(None)
        }
        Prim::Eq | Prim::Ne | Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge => Abs::Bool(None),
        Prim::Maximum | Prim::Minimum if a == b => of(a),
        Prim::Maximum | Prim::Minimum => Abs::Any,
        Prim::Divmod => Abs::tuple(vec![of(wider), of(wider)]),
        // Bitwise operators on floats raise TypeError.
        _ => Abs::Bottom,
    }
}

/// `a op b` for Python values and tensors.
fn binary_abs(p: Prim, args: &[Abs]) -> Rule {
    let (a, b) = (&args[0], &args[1]);
    if let Some(op) = p.def().kernels.binary_op()
        && let Some(r) = tensor_binary_abs(op, a, b)
    {
        return r;
    }
    if matches!(a, Abs::Any) || matches!(b, Abs::Any) {
        // Comparisons with `==` always give a bool, unless a tensor is involved.
        return Ok(Abs::Any);
    }
    if let (Some(x), Some(y)) = (kind(a), kind(b)) {
        return Ok(number_binary(p, x, y));
    }
    let r = match (p, a, b) {
        (Prim::Eq | Prim::Ne, _, _) => Abs::Bool(None),
        (Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge, Abs::Str(_), Abs::Str(_)) => Abs::Bool(None),
        (Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge, Abs::Tuple(_), Abs::Tuple(_))
        | (Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge, Abs::List(_), Abs::List(_)) => Abs::Any,
        (Prim::Add | Prim::InplaceAdd, Abs::Str(_), Abs::Str(_)) => Abs::Str(None),
        (Prim::Add | Prim::InplaceAdd, Abs::Tuple(x), Abs::Tuple(y)) => {
            Abs::Tuple(x.iter().chain(y.iter()).cloned().collect())
        }
        (Prim::Add, Abs::List(x), Abs::List(y))
        | (Prim::InplaceAdd, Abs::List(x), Abs::List(y) | Abs::Tuple(y)) => {
            Abs::List(x.iter().chain(y.iter()).cloned().collect())
        }
        (Prim::Mul | Prim::InplaceMul, Abs::Str(_), n)
        | (Prim::Mul | Prim::InplaceMul, n, Abs::Str(_))
            if matches!(n, Abs::Int(_) | Abs::Bool(_)) =>
        {
            Abs::Str(None)
        }
        (Prim::Mul | Prim::InplaceMul, Abs::Tuple(items), n)
        | (Prim::Mul | Prim::InplaceMul, n, Abs::Tuple(items))
            if matches!(n, Abs::Int(_) | Abs::Bool(_)) =>
        {
            match n.as_i64() {
                Some(k) if (k.max(0) as usize).saturating_mul(items.len()) <= 4096 => {
                    let mut out = Vec::new();
                    for _ in 0..k.max(0) {
                        out.extend(items.iter().cloned());
                    }
                    Abs::tuple(out)
                }
                _ => Abs::Any,
            }
        }
        (Prim::Mul | Prim::InplaceMul, Abs::List(_), n)
        | (Prim::Mul | Prim::InplaceMul, n, Abs::List(_))
            if matches!(n, Abs::Int(_) | Abs::Bool(_)) =>
        {
            Abs::Any
        }
        // Everything else raises TypeError at run time.
        _ => Abs::Bottom,
    };
    Ok(r)
}

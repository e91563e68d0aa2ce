//! Primitive implementations with Python (and, for tensors, numpy) semantics. Everything here
//! is pure except `print`, which writes to the given sink. Errors are (exception class,
//! message) pairs with CPython's wording; the machine adds the location.

use std::cmp::Ordering;
use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;

use crate::Prim;
use anfora_tensor::{
    BinaryOp, DType, IndexItem, Nested, ReduceOp, Scalar, Tensor, TensorError, UnaryOp,
};

use crate::pynum::{self, IntPow, PyErr, overflow};
use crate::value::{Method, PartialApp, Range, Slice, Value, repr, to_str};

pub type OpResult = Result<Value, PyErr>;

/// Largest sequence a single operation may build (repetition, range materialization).
const MAX_ITEMS: i128 = 1 << 28;

/// `Gemm(a, b, c, transpose_a, transpose_b)`. `c` is taken by value: a unique accumulator of
/// the result's shape is written in place.
pub fn gemm(a: &Value, b: &Value, c: Value, ta: &Value, tb: &Value) -> OpResult {
    let c = match c {
        Value::None => None,
        c => Some(
            c.into_tensor()
                .map_err(|_| type_error("Gemm: the accumulator must be a tensor or None"))?,
        ),
    };
    let (a, b) = (need_tensor(a, "Gemm")?, need_tensor(b, "Gemm")?);
    tensor(Tensor::gemm(a, b, c, truth(ta)?, truth(tb)?)).map(Value::Tensor)
}

/// Two independent `Gemm`s, each given as its five arguments, run side by side where that pays
/// ([`Tensor::gemm_pair`]). `None`, with the arguments untouched, when one is not a product of
/// tensors: the caller then runs them one by one, which reports the error.
pub fn gemm_pair(first: &mut [Value], second: &mut [Value]) -> Option<(OpResult, OpResult)> {
    fn call(args: &mut [Value]) -> Option<anfora_tensor::GemmCall<'_>> {
        let [
            Value::Tensor(a),
            Value::Tensor(b),
            c,
            Value::Bool(ta),
            Value::Bool(tb),
        ] = args
        else {
            return None;
        };
        let c = match c {
            Value::None => None,
            Value::Tensor(_) => std::mem::replace(c, Value::None).into_tensor().ok(),
            _ => return None,
        };
        Some(anfora_tensor::GemmCall {
            a,
            b,
            c,
            transpose_a: *ta,
            transpose_b: *tb,
        })
    }
    // Both are checked before either accumulator is moved out.
    let valid = |args: &[Value]| {
        matches!(
            args,
            [
                Value::Tensor(_),
                Value::Tensor(_),
                Value::None | Value::Tensor(_),
                Value::Bool(_),
                Value::Bool(_)
            ]
        )
    };
    if !valid(first) || !valid(second) {
        return None;
    }
    let (x, y) = Tensor::gemm_pair(call(first)?, call(second)?);
    Some((tensor(x).map(Value::Tensor), tensor(y).map(Value::Tensor)))
}

pub fn type_error(msg: impl Into<String>) -> PyErr {
    ("TypeError", msg.into())
}

pub fn value_error(msg: impl Into<String>) -> PyErr {
    ("ValueError", msg.into())
}

/// The Python exception for a tensor error.
pub fn tensor_err(e: TensorError) -> PyErr {
    (e.kind.python_name(), e.message)
}

pub(crate) fn tensor<T>(r: Result<T, TensorError>) -> Result<T, PyErr> {
    r.map_err(tensor_err)
}

// ---- numbers ----------------------------------------------------------------------------

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

/// The tensor operation of a binary operator primitive.
pub fn tensor_op(p: Prim) -> Option<BinaryOp> {
    Some(match p {
        Prim::Add | Prim::InplaceAdd => BinaryOp::Add,
        Prim::Sub => BinaryOp::Sub,
        Prim::Mul | Prim::InplaceMul => BinaryOp::Mul,
        Prim::Div => BinaryOp::Div,
        Prim::FloorDiv => BinaryOp::FloorDiv,
        Prim::Mod => BinaryOp::Mod,
        Prim::Pow => BinaryOp::Pow,
        Prim::LShift => BinaryOp::LShift,
        Prim::RShift => BinaryOp::RShift,
        Prim::BitAnd => BinaryOp::BitAnd,
        Prim::BitOr => BinaryOp::BitOr,
        Prim::BitXor => BinaryOp::BitXor,
        Prim::Eq => BinaryOp::Eq,
        Prim::Ne => BinaryOp::Ne,
        Prim::Lt => BinaryOp::Lt,
        Prim::Le => BinaryOp::Le,
        Prim::Gt => BinaryOp::Gt,
        Prim::Ge => BinaryOp::Ge,
        Prim::Maximum => BinaryOp::Maximum,
        Prim::Minimum => BinaryOp::Minimum,
        _ => return None,
    })
}

/// A tensor operation if either side is a tensor and the other a tensor or Python scalar.
fn tensor_binary(p: Prim, a: &Value, b: &Value) -> Option<OpResult> {
    let op = tensor_op(p)?;
    let r = match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => Tensor::binary(op, x, y),
        (Value::Tensor(x), s) => Tensor::binary_scalar(op, x, s.as_scalar()?, false),
        (s, Value::Tensor(y)) => Tensor::binary_scalar(op, y, s.as_scalar()?, true),
        _ => return None,
    };
    Some(tensor(r).map(Value::Tensor))
}

fn repeat(items: &[Value], n: i64, what: &str) -> Result<Vec<Value>, PyErr> {
    let n = n.max(0) as i128;
    if items.len() as i128 * n > MAX_ITEMS {
        return Err((
            "MemoryError",
            format!("{what} repetition result is too large"),
        ));
    }
    let mut out = Vec::with_capacity(items.len() * n as usize);
    for _ in 0..n {
        out.extend_from_slice(items);
    }
    Ok(out)
}

/// Binary operators, comparisons and `divmod`.
pub fn binary(p: Prim, a: &Value, b: &Value) -> OpResult {
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
            Ok(Value::Str(Arc::from(format!("{x}{y}").as_str())))
        }
        (Prim::Add | Prim::InplaceAdd, Value::Str(_), _) => Err(concat_err("str")),
        (Prim::Add | Prim::InplaceAdd, Value::Tuple(x), Value::Tuple(y)) => {
            Ok(Value::tuple(x.iter().chain(y.iter()).cloned().collect()))
        }
        (Prim::Add | Prim::InplaceAdd, Value::Tuple(_), _) => Err(concat_err("tuple")),
        (Prim::InplaceAdd | Prim::InplaceMul, Value::List(_), _) => Err(type_error(
            "in-place `+=`/`*=` on a list would modify it in place, which compiled code does not do (lists are immutable values); write `xs = xs + [...]`",
        )),
        (Prim::Add, Value::List(x), Value::List(y)) => {
            Ok(Value::List(x.iter().chain(y.iter()).cloned().collect()))
        }
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
                    Ok(Value::str(&s.repeat(reps as usize)))
                }
                Value::Tuple(items) => Ok(Value::tuple(repeat(items, n, "tuple")?)),
                Value::List(items) => Ok(Value::List(Rc::from(repeat(items, n, "list")?))),
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
        (Prim::Add | Prim::InplaceAdd, x, y) => Value::Float(as_f64(x) + as_f64(y)),
        (Prim::Sub, x, y) => Value::Float(as_f64(x) - as_f64(y)),
        (Prim::Mul | Prim::InplaceMul, x, y) => Value::Float(as_f64(x) * as_f64(y)),
        (Prim::Div, I(i), I(j)) => Value::Float(pynum::int_true_div(i, j)?),
        (Prim::Div, x, y) => Value::Float(pynum::float_true_div(as_f64(x), as_f64(y))?),
        (Prim::FloorDiv, I(i), I(j)) => Value::Int(pynum::int_floor_div(i, j)?),
        (Prim::FloorDiv, x, y) => Value::Float(pynum::float_floor_div(as_f64(x), as_f64(y))?),
        (Prim::Mod, I(i), I(j)) => Value::Int(pynum::int_mod(i, j)?),
        (Prim::Mod, x, y) => Value::Float(pynum::float_mod(as_f64(x), as_f64(y))?),
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
            Value::tuple(vec![Value::Float(q), Value::Float(r)])
        }
        (Prim::Pow, I(i), I(j)) => match pynum::int_pow(i, j)? {
            IntPow::Int(v) => Value::Int(v),
            IntPow::Float(f) => Value::Float(f),
        },
        (Prim::Pow, x, y) => Value::Float(pynum::float_pow(as_f64(x), as_f64(y))?),
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

/// Python's `==` as a bool (tensor results must have one element).
pub fn py_eq(a: &Value, b: &Value) -> Result<bool, PyErr> {
    truth(&compare(Prim::Eq, a, b)?)
}

fn seq_compare(p: Prim, x: &[Value], y: &[Value]) -> OpResult {
    for (u, v) in x.iter().zip(y.iter()) {
        if !py_eq(u, v)? {
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
pub fn compare(p: Prim, a: &Value, b: &Value) -> OpResult {
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

/// Python truthiness; a tensor needs exactly one element, as in numpy.
pub fn truth(v: &Value) -> Result<bool, PyErr> {
    Ok(match v {
        Value::None => false,
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::Float(f) => *f != 0.0,
        Value::Str(s) => !s.is_empty(),
        Value::Tuple(t) | Value::List(t) => !t.is_empty(),
        Value::Tensor(t) => tensor(t.truth())?,
        Value::Range(r) => !r.is_empty(),
        _ => true,
    })
}

/// Unary `-`, `+`, `~`.
pub fn unary(p: Prim, a: &Value) -> OpResult {
    let sym = match p {
        Prim::Neg => "-",
        Prim::Pos => "+",
        _ => "~",
    };
    match (p, a) {
        (_, Value::Tensor(t)) => {
            let op = tensor_unary_op(p).unwrap_or(UnaryOp::Invert);
            tensor(Tensor::unary(op, t)).map(Value::Tensor)
        }
        (Prim::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
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

// ---- sequences --------------------------------------------------------------------------

/// CPython's slice index normalization: (start, stop, step, length).
pub fn slice_indices(s: &Slice, len: i64) -> Result<(i64, i64, i64, i64), PyErr> {
    let step = s.step.unwrap_or(1);
    if step == 0 {
        return Err(value_error("slice step cannot be zero"));
    }
    let adjust = |v: Option<i64>, default: i64, lo: i64, hi: i64| -> i64 {
        match v {
            None => default,
            Some(mut x) => {
                if x < 0 {
                    x = x.saturating_add(len);
                    if x < lo {
                        x = lo;
                    }
                } else if x > hi {
                    x = hi;
                }
                x
            }
        }
    };
    let (start, stop) = if step > 0 {
        (adjust(s.start, 0, 0, len), adjust(s.stop, len, 0, len))
    } else {
        (
            adjust(s.start, len - 1, -1, len - 1),
            adjust(s.stop, -1, -1, len - 1),
        )
    };
    let count = if step > 0 {
        if start < stop {
            (stop - start - 1) / step + 1
        } else {
            0
        }
    } else if stop < start {
        (start - stop - 1) / (-step) + 1
    } else {
        0
    };
    Ok((start, stop, step, count))
}

fn take_slice<T: Clone>(items: &[T], s: &Slice) -> Result<Vec<T>, PyErr> {
    let (start, _, step, n) = slice_indices(s, items.len() as i64)?;
    Ok((0..n)
        .map(|k| items[(start + k * step) as usize].clone())
        .collect())
}

fn seq_index(i: i64, len: usize, what: &str) -> Result<usize, PyErr> {
    let len = len as i64;
    let j = if i < 0 { i + len } else { i };
    if j < 0 || j >= len {
        return Err(("IndexError", format!("{what} index out of range")));
    }
    Ok(j as usize)
}

fn index_of(v: &Value) -> Option<i64> {
    match v {
        Value::Tensor(t) if t.ndim() == 0 && t.dtype().is_int() => match t.item() {
            Ok(Scalar::Int(i)) => Some(i),
            _ => None,
        },
        other => other.as_index(),
    }
}

/// The items of a basic tensor index (`x[i]`, `x[i, 1:3]`, `x[..., None]`).
pub fn tensor_index_items(idx: &Value) -> Result<Vec<IndexItem>, PyErr> {
    match idx {
        Value::Tuple(parts) => parts.iter().map(tensor_index_item).collect(),
        other => Ok(vec![tensor_index_item(other)?]),
    }
}

fn tensor_index_item(v: &Value) -> Result<IndexItem, PyErr> {
    Ok(match v {
        Value::Slice(s) => IndexItem::Slice {
            start: s.start,
            stop: s.stop,
            step: s.step,
        },
        Value::None => IndexItem::NewAxis,
        Value::Ellipsis => IndexItem::Ellipsis,
        Value::Int(i) => IndexItem::Int(*i),
        other => match index_of(other) {
            Some(i) if !matches!(other, Value::Bool(_)) => IndexItem::Int(i),
            _ => {
                return Err(("IndexError", "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are valid indices".into()));
            }
        },
    })
}

/// `obj[index]`.
pub fn getitem(obj: &Value, idx: &Value) -> OpResult {
    match obj {
        Value::Tuple(items) | Value::List(items) => {
            let what = obj.type_name();
            match idx {
                Value::Slice(s) => {
                    let part = take_slice(items, s)?;
                    Ok(if matches!(obj, Value::Tuple(_)) {
                        Value::tuple(part)
                    } else {
                        Value::List(Rc::from(part))
                    })
                }
                _ => match index_of(idx) {
                    Some(i) => Ok(items[seq_index(i, items.len(), what)?].clone()),
                    None => Err(type_error(format!(
                        "{what} indices must be integers or slices, not {}",
                        idx.type_name()
                    ))),
                },
            }
        }
        Value::Str(s) => {
            let chars: Vec<char> = s.chars().collect();
            match idx {
                Value::Slice(sl) => Ok(Value::str(
                    &take_slice(&chars, sl)?.into_iter().collect::<String>(),
                )),
                _ => match index_of(idx) {
                    Some(i) => {
                        let c = chars[seq_index(i, chars.len(), "string")?];
                        Ok(Value::str(c.encode_utf8(&mut [0; 4])))
                    }
                    None => Err(type_error(format!(
                        "string indices must be integers, not '{}'",
                        idx.type_name()
                    ))),
                },
            }
        }
        Value::Range(r) => {
            let len = range_len(r)?;
            match idx {
                Value::Slice(sl) => {
                    let (start, _, step, n) = slice_indices(sl, len)?;
                    let new_start = r.get(start);
                    let new_step = r.step * step;
                    Ok(Value::Range(Range {
                        start: new_start,
                        stop: new_start + n * new_step,
                        step: new_step,
                    }))
                }
                _ => match index_of(idx) {
                    Some(i) => Ok(Value::Int(
                        r.get(seq_index(i, len as usize, "range object")? as i64),
                    )),
                    None => Err(type_error(format!(
                        "range indices must be integers or slices, not {}",
                        idx.type_name()
                    ))),
                },
            }
        }
        Value::Tensor(t) => tensor(t.index(&tensor_index_items(idx)?)).map(Value::Tensor),
        _ => Err(type_error(format!(
            "'{}' object is not subscriptable",
            obj.type_name()
        ))),
    }
}

fn range_len(r: &Range) -> Result<i64, PyErr> {
    i64::try_from(r.len()).map_err(|_| overflow("len() of range"))
}

/// Length for `len()`.
pub fn len(v: &Value) -> Result<i64, PyErr> {
    Ok(match v {
        Value::Str(s) => s.chars().count() as i64,
        Value::Tuple(t) | Value::List(t) => t.len() as i64,
        Value::Range(r) => range_len(r)?,
        Value::Tensor(t) if t.ndim() == 0 => return Err(type_error("len() of unsized object")),
        Value::Tensor(t) => t.shape()[0] as i64,
        other => {
            return Err(type_error(format!(
                "object of type '{}' has no len()",
                other.type_name()
            )));
        }
    })
}

/// Length of something a `for` loop iterates over.
pub fn iter_len(v: &Value) -> Result<i64, PyErr> {
    match v {
        Value::Tensor(t) if t.ndim() == 0 => Err(type_error("iteration over a 0-d array")),
        Value::Str(_) | Value::Tuple(_) | Value::List(_) | Value::Range(_) | Value::Tensor(_) => {
            len(v)
        }
        other => Err(type_error(format!(
            "'{}' object is not iterable",
            other.type_name()
        ))),
    }
}

/// All items of an iterable, or `err(type_name)` if it is not one.
pub fn items(v: &Value, err: &dyn Fn(&str) -> PyErr) -> Result<Vec<Value>, PyErr> {
    Ok(match v {
        Value::Tuple(t) | Value::List(t) => t.to_vec(),
        Value::Str(s) => s
            .chars()
            .map(|c| Value::str(c.encode_utf8(&mut [0; 4])))
            .collect(),
        Value::Range(r) => {
            let n = r.len();
            if n > MAX_ITEMS {
                return Err(("MemoryError", "range is too large to materialize".into()));
            }
            (0..n as i64).map(|i| Value::Int(r.get(i))).collect()
        }
        Value::Tensor(t) => {
            if t.ndim() == 0 {
                return Err(type_error("iteration over a 0-d array"));
            }
            (0..t.shape()[0])
                .map(|i| tensor(t.index(&[IndexItem::Int(i as i64)])).map(Value::Tensor))
                .collect::<Result<_, _>>()?
        }
        other => return Err(err(other.type_name())),
    })
}

fn not_iterable(t: &str) -> PyErr {
    type_error(format!("'{t}' object is not iterable"))
}

/// `Unpack(seq, n)`.
pub fn unpack(seq: &Value, n: i64) -> OpResult {
    let xs = items(seq, &|t| {
        type_error(format!("cannot unpack non-iterable {t} object"))
    })?;
    let got = xs.len() as i64;
    if got > n {
        return Err(value_error(format!(
            "too many values to unpack (expected {n})"
        )));
    }
    if got < n {
        return Err(value_error(format!(
            "not enough values to unpack (expected {n}, got {got})"
        )));
    }
    Ok(Value::tuple(xs))
}

/// `x in container`.
pub fn contains(container: &Value, x: &Value) -> Result<bool, PyErr> {
    match container {
        Value::Tuple(items) | Value::List(items) => {
            for item in items.iter() {
                if py_eq(item, x)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Value::Str(s) => match x {
            Value::Str(sub) => Ok(s.contains(&**sub)),
            other => Err(type_error(format!(
                "'in <string>' requires string as left operand, not {}",
                other.type_name()
            ))),
        },
        Value::Range(r) => {
            let v = match x {
                Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => *f as i64,
                other => match other.as_index() {
                    Some(v) => v,
                    None => return Ok(false),
                },
            };
            let n = r.len();
            if n == 0 {
                return Ok(false);
            }
            let off = v as i128 - r.start as i128;
            Ok(off % r.step as i128 == 0 && (0..n).contains(&(off / r.step as i128)))
        }
        Value::Tensor(t) => {
            let eq = compare(Prim::Eq, &Value::Tensor(t.clone()), x)?;
            match &eq {
                Value::Tensor(e) => {
                    let any = tensor(Tensor::reduce(
                        ReduceOp::Max,
                        &tensor(e.try_cast(DType::I64))?,
                        None,
                        false,
                    ))?;
                    Ok(tensor(any.truth())?)
                }
                other => truth(other),
            }
        }
        other => Err(type_error(format!(
            "argument of type '{}' is not iterable",
            other.type_name()
        ))),
    }
}

// ---- builtins -----------------------------------------------------------------------------

fn int_of(v: &Value) -> OpResult {
    Ok(match v {
        Value::Int(i) => Value::Int(*i),
        Value::Bool(b) => Value::Int(*b as i64),
        Value::Float(f) => Value::Int(float_to_int(*f)?),
        Value::Str(s) => Value::Int(pynum::parse_int(s)?),
        Value::Tensor(t) => match tensor(t.item())? {
            Scalar::Float(f) => Value::Int(float_to_int(f)?),
            s => Value::Int(match s {
                Scalar::Int(i) => i,
                Scalar::Bool(b) => b as i64,
                Scalar::Float(_) => unreachable!(),
            }),
        },
        other => {
            return Err(type_error(format!(
                "int() argument must be a string, a bytes-like object or a real number, not '{}'",
                other.type_name()
            )));
        }
    })
}

fn float_to_int(f: f64) -> Result<i64, PyErr> {
    if f.is_nan() {
        return Err(value_error("cannot convert float NaN to integer"));
    }
    if f.is_infinite() {
        return Err((
            "OverflowError",
            "cannot convert float infinity to integer".into(),
        ));
    }
    let t = f.trunc();
    // 2^63 is exact in f64.
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    if !(-TWO63..TWO63).contains(&t) {
        return Err(overflow("int()"));
    }
    Ok(t as i64)
}

fn float_of(v: &Value) -> OpResult {
    Ok(Value::Float(match v {
        Value::Int(i) => *i as f64,
        Value::Bool(b) => *b as i64 as f64,
        Value::Float(f) => *f,
        Value::Str(s) => pynum::parse_float(s)?,
        Value::Tensor(t) => tensor(t.item())?.as_f64(),
        other => {
            return Err(type_error(format!(
                "float() argument must be a string or a real number, not '{}'",
                other.type_name()
            )));
        }
    }))
}

fn min_max(p: Prim, args: &[Value]) -> OpResult {
    let name = if p == Prim::Min { "min" } else { "max" };
    let candidates = match args {
        [] => {
            return Err(type_error(format!(
                "{name} expected at least 1 argument, got 0"
            )));
        }
        [one] => items(one, &not_iterable)?,
        many => many.to_vec(),
    };
    let mut it = candidates.into_iter();
    let Some(mut best) = it.next() else {
        return Err(value_error(format!("{name}() arg is an empty sequence")));
    };
    let better = if p == Prim::Min { Prim::Lt } else { Prim::Gt };
    for x in it {
        if truth(&compare(better, &x, &best)?)? {
            best = x;
        }
    }
    Ok(best)
}

fn isinstance(obj: &Value, cls: &Value) -> Result<bool, PyErr> {
    match cls {
        Value::Tuple(options) => {
            for c in options.iter() {
                if isinstance(obj, c)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Value::Prim(p) if p.is_type() => Ok(match p {
            Prim::IntType => matches!(obj, Value::Int(_) | Value::Bool(_)),
            Prim::FloatType => matches!(obj, Value::Float(_)),
            Prim::BoolType => matches!(obj, Value::Bool(_)),
            Prim::StrType => matches!(obj, Value::Str(_)),
            Prim::TupleType => matches!(obj, Value::Tuple(_)),
            Prim::ListType => matches!(obj, Value::List(_)),
            Prim::TensorType => matches!(obj, Value::Tensor(_)),
            _ => false,
        }),
        _ => Err(type_error(
            "isinstance() arg 2 must be a type, a tuple of types, or a union",
        )),
    }
}

fn range(args: &[Value]) -> OpResult {
    let int = int_arg;
    let (start, stop, step) = match args {
        [] => return Err(type_error("range expected at least 1 argument, got 0")),
        [stop] => (0, int(stop)?, 1),
        [start, stop] => (int(start)?, int(stop)?, 1),
        [start, stop, step] => (int(start)?, int(stop)?, int(step)?),
        more => {
            return Err(type_error(format!(
                "range expected at most 3 arguments, got {}",
                more.len()
            )));
        }
    };
    if step == 0 {
        return Err(value_error("range() arg 3 must not be zero"));
    }
    Ok(Value::Range(Range { start, stop, step }))
}

fn print(args: &[Value], out: &mut dyn Write) -> OpResult {
    let (values, rest) = args.split_at(args.len() - 2);
    let text = |v: &Value, what: &str, default: &str| -> Result<String, PyErr> {
        match v {
            Value::None => Ok(default.to_string()),
            Value::Str(s) => Ok(s.to_string()),
            other => Err(type_error(format!(
                "{what} must be None or a string, not {}",
                other.type_name()
            ))),
        }
    };
    let sep = text(&rest[0], "sep", " ")?;
    let end = text(&rest[1], "end", "\n")?;
    let mut line = String::new();
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            line.push_str(&sep);
        }
        line.push_str(&to_str(v));
    }
    line.push_str(&end);
    out.write_all(line.as_bytes())
        .map_err(|e| ("OSError", format!("cannot write output: {e}")))?;
    Ok(Value::None)
}

fn slice(args: &[Value]) -> OpResult {
    let part = |v: &Value| match v {
        Value::None => Ok(None),
        other => index_of(other).map(Some).ok_or_else(|| {
            type_error("slice indices must be integers or None or have an __index__ method")
        }),
    };
    Ok(Value::Slice(Rc::new(Slice {
        start: part(&args[0])?,
        stop: part(&args[1])?,
        step: part(&args[2])?,
    })))
}

// ---- tensors ----------------------------------------------------------------------------

pub(crate) fn need_tensor<'a>(v: &'a Value, func: &str) -> Result<&'a Tensor, PyErr> {
    match v {
        Value::Tensor(t) => Ok(t),
        other => Err(type_error(format!(
            "{func}() expects a Tensor, got {}",
            other.type_name()
        ))),
    }
}

/// A dtype argument: `None` (default), a dtype, or its name.
pub(crate) fn dtype_arg(v: &Value, default: Option<DType>) -> Result<Option<DType>, PyErr> {
    match v {
        Value::None => Ok(default),
        Value::DType(d) => Ok(Some(*d)),
        Value::Str(s) => DType::from_name(s)
            .map(Some)
            .ok_or_else(|| type_error(format!("data type '{s}' not understood"))),
        Value::Prim(Prim::FloatType) => Ok(Some(DType::F64)),
        Value::Prim(Prim::IntType) => Ok(Some(DType::I64)),
        Value::Prim(Prim::BoolType) => Ok(Some(DType::Bool)),
        other => Err(type_error(format!(
            "Cannot interpret '{}' as a data type",
            repr(other)
        ))),
    }
}

/// An int argument (bools count, as in Python).
pub(crate) fn int_arg(v: &Value) -> Result<i64, PyErr> {
    v.as_index().ok_or_else(|| {
        type_error(format!(
            "'{}' object cannot be interpreted as an integer",
            v.type_name()
        ))
    })
}

/// An int or a tuple/list of ints.
pub(crate) fn int_list(v: &Value) -> Result<Vec<i64>, PyErr> {
    match v {
        Value::Tuple(items) | Value::List(items) => items.iter().map(int_arg).collect(),
        other => Ok(vec![int_arg(other)?]),
    }
}

pub(crate) fn shape_arg(v: &Value) -> Result<Vec<usize>, PyErr> {
    let dims = int_list(v)?;
    if dims.iter().any(|d| *d < 0) {
        return Err(value_error("negative dimensions are not allowed"));
    }
    Ok(dims.into_iter().map(|d| d as usize).collect())
}

fn nested(v: &Value) -> Result<Nested, PyErr> {
    crate::deep(|| nested_inner(v))
}

fn nested_inner(v: &Value) -> Result<Nested, PyErr> {
    match v {
        Value::Tuple(items) | Value::List(items) => Ok(Nested::List(
            items.iter().map(nested).collect::<Result<_, _>>()?,
        )),
        Value::Tensor(t) if t.ndim() == 0 => Ok(Nested::Scalar(tensor(t.item())?)),
        other => other.as_scalar().map(Nested::Scalar).ok_or_else(|| {
            type_error(format!(
                "ops.tensor() expects numbers or nested lists of numbers, got {}",
                other.type_name()
            ))
        }),
    }
}

fn reduce(p: Prim, args: &[Value]) -> OpResult {
    let op = match p {
        Prim::ReduceSum => ReduceOp::Sum,
        Prim::ReduceMean => ReduceOp::Mean,
        Prim::ReduceMax => ReduceOp::Max,
        Prim::ReduceMin => ReduceOp::Min,
        _ => ReduceOp::Prod,
    };
    let t = need_tensor(&args[0], &p.python_name())?;
    let axes = match &args[1] {
        Value::None => None,
        v => Some(int_list(v)?),
    };
    let keep = truth(&args[2])?;
    tensor(Tensor::reduce(op, t, axes.as_deref(), keep)).map(Value::Tensor)
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

pub(crate) fn where_(args: &[Value]) -> OpResult {
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

/// The tensor operation of a unary primitive (operators and elementwise math).
pub fn tensor_unary_op(p: Prim) -> Option<UnaryOp> {
    Some(match p {
        Prim::Neg => UnaryOp::Neg,
        Prim::Pos => UnaryOp::Pos,
        Prim::Invert => UnaryOp::Invert,
        Prim::Exp => UnaryOp::Exp,
        Prim::Log => UnaryOp::Log,
        Prim::Sqrt => UnaryOp::Sqrt,
        Prim::Tanh => UnaryOp::Tanh,
        Prim::Sin => UnaryOp::Sin,
        Prim::Cos => UnaryOp::Cos,
        Prim::Sigmoid => UnaryOp::Sigmoid,
        Prim::Relu => UnaryOp::Relu,
        Prim::Abs => UnaryOp::Abs,
        Prim::LogicalNot => UnaryOp::LogicalNot,
        Prim::Log1p => UnaryOp::Log1p,
        Prim::Expm1 => UnaryOp::Expm1,
        Prim::Erf => UnaryOp::Erf,
        Prim::Silu => UnaryOp::Silu,
        Prim::Softplus => UnaryOp::Softplus,
        Prim::Rsqrt => UnaryOp::Rsqrt,
        Prim::Sign => UnaryOp::Sign,
        _ => return None,
    })
}

fn math(p: Prim, x: &Value) -> OpResult {
    let op = tensor_unary_op(p).unwrap_or(UnaryOp::LogicalNot);
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
            Ok(Value::Float(
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
            Ok(Value::Float(match p {
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

fn creation(p: Prim, args: &[Value]) -> OpResult {
    let t = match p {
        Prim::Zeros | Prim::Ones => {
            let shape = shape_arg(&args[0])?;
            let d = dtype_arg(&args[1], Some(DType::F32))?.unwrap_or(DType::F32);
            if p == Prim::Zeros {
                tensor(Tensor::zeros(&shape, d))?
            } else {
                tensor(Tensor::ones(&shape, d))?
            }
        }
        Prim::Full => {
            let shape = shape_arg(&args[0])?;
            let fill = match &args[1] {
                Value::Tensor(t) if t.ndim() == 0 => tensor(t.item())?,
                v => v.as_scalar().ok_or_else(|| {
                    type_error(format!(
                        "ops.full() fill_value must be a number, got {}",
                        v.type_name()
                    ))
                })?,
            };
            let default = match fill {
                Scalar::Bool(_) => DType::Bool,
                Scalar::Int(_) => DType::I64,
                Scalar::Float(_) => DType::F32,
            };
            let d = dtype_arg(&args[2], Some(default))?.unwrap_or(default);
            tensor(Tensor::full(&shape, fill, d))?
        }
        Prim::Arange => {
            let scalar = |v: &Value| {
                v.as_scalar().ok_or_else(|| {
                    type_error(format!(
                        "ops.arange() expects numbers, got {}",
                        v.type_name()
                    ))
                })
            };
            let (start, stop) = match &args[1] {
                Value::None => (Scalar::Int(0), scalar(&args[0])?),
                s => (scalar(&args[0])?, scalar(s)?),
            };
            let step = match &args[2] {
                Value::None => Scalar::Int(1),
                s => scalar(s)?,
            };
            let d = dtype_arg(&args[3], None)?;
            tensor(Tensor::arange(start, stop, step, d))?
        }
        Prim::MakeTensor => {
            let d = dtype_arg(&args[1], None)?;
            match &args[0] {
                Value::Tensor(t) => match d {
                    Some(d) => tensor(t.try_cast(d))?,
                    None => t.clone(),
                },
                data => tensor(Tensor::from_nested(&nested(data)?, d))?,
            }
        }
        _ => {
            let x = need_tensor(&args[0], &p.python_name())?;
            let d = dtype_arg(&args[1], Some(x.dtype()))?.unwrap_or(x.dtype());
            if p == Prim::ZerosLike {
                tensor(Tensor::zeros(x.shape(), d))?
            } else {
                tensor(Tensor::ones(x.shape(), d))?
            }
        }
    };
    Ok(Value::Tensor(t))
}

/// Attribute access: tensors have `shape`, `dtype`, `ndim`, `size`, `T` and methods.
pub fn getattr(obj: &Value, name: &str) -> OpResult {
    if let Value::Ref(r) = obj {
        let method = match name {
            "assign" => Some(Prim::Assign),
            "assign_add" => Some(Prim::AssignAdd),
            "assign_sub" => Some(Prim::AssignSub),
            _ => None,
        };
        return match (method, name) {
            (Some(p), _) => Ok(Value::Partial(Rc::new(PartialApp {
                func: Value::Prim(p),
                args: vec![obj.clone()],
            }))),
            (None, "name") => Ok(Value::str(r.name())),
            (None, "requires_grad") => Ok(Value::Bool(r.requires_grad())),
            (None, _) => getattr(&Value::Tensor(r.get()), name),
        };
    }
    if let Value::Tensor(t) = obj {
        return Ok(match name {
            "shape" => Value::tuple(t.shape().iter().map(|d| Value::Int(*d as i64)).collect()),
            "dtype" => Value::DType(t.dtype()),
            "ndim" => Value::Int(t.ndim() as i64),
            "size" => Value::Int(t.numel() as i64),
            "T" => Value::Tensor(tensor(t.transpose(None))?),
            other => match Method::from_name(other) {
                Some(m) => Value::Method(Rc::new((m, t.clone()))),
                None => {
                    return Err((
                        "AttributeError",
                        format!("'Tensor' object has no attribute '{other}'"),
                    ));
                }
            },
        });
    }
    Err((
        "AttributeError",
        format!(
            "attribute '{name}' of a '{}' value is not supported in compiled code (only tensors have attributes)",
            obj.type_name()
        ),
    ))
}

/// Calls a tensor method with positional `args` and keyword `kwargs` (name, value).
pub fn call_method(
    m: Method,
    t: &Tensor,
    args: Vec<Value>,
    kwargs: Vec<(String, Value)>,
) -> OpResult {
    let this = Value::Tensor(t.clone());
    let no_kwargs = |kwargs: &[(String, Value)]| -> Result<(), PyErr> {
        match kwargs.first() {
            Some((k, _)) => Err(type_error(format!(
                "Tensor.{}() got an unexpected keyword argument '{k}'",
                m.name()
            ))),
            None => Ok(()),
        }
    };
    match m {
        Method::Sum | Method::Mean | Method::Max | Method::Min | Method::Prod => {
            let prim = match m {
                Method::Sum => Prim::ReduceSum,
                Method::Mean => Prim::ReduceMean,
                Method::Max => Prim::ReduceMax,
                Method::Min => Prim::ReduceMin,
                _ => Prim::ReduceProd,
            };
            let sig = prim.signature();
            let names: Vec<&str> = kwargs.iter().map(|(k, _)| k.as_str()).collect();
            let mut positional = vec![this];
            positional.extend(args);
            let bound = sig
                .bind(positional.len(), &names)
                .map_err(|e| type_error(e.message(&format!("Tensor.{}", m.name()))))?;
            let full: Vec<Value> = bound
                .into_iter()
                .map(|s| match s {
                    crate::ArgSource::Positional(i) => positional[i].clone(),
                    crate::ArgSource::Keyword(j) => kwargs[j].1.clone(),
                    crate::ArgSource::Default(c) => {
                        crate::value::from_const(&c, &mut |_| Value::None)
                    }
                })
                .collect();
            reduce(prim, &full)
        }
        Method::Reshape | Method::Transpose | Method::Permute => {
            no_kwargs(&kwargs)?;
            let spec = match args.as_slice() {
                [] if m == Method::Transpose => None,
                [] | [Value::None] if m == Method::Permute => {
                    return Err(type_error("permute() needs the axes"));
                }
                [one @ (Value::Tuple(_) | Value::List(_))] => Some(int_list(one)?),
                [Value::None] if m == Method::Transpose => None,
                many => Some(
                    many.iter()
                        .map(|v| int_list(v).map(|l| l[0]))
                        .collect::<Result<Vec<_>, _>>()?,
                ),
            };
            if m == Method::Reshape {
                let shape =
                    spec.ok_or_else(|| type_error("reshape() takes at least 1 argument"))?;
                tensor(t.reshape(&shape)).map(Value::Tensor)
            } else {
                tensor(t.transpose(spec.as_deref())).map(Value::Tensor)
            }
        }
        Method::Astype => {
            let dtype = match (args.as_slice(), kwargs.as_slice()) {
                ([d], []) => d.clone(),
                ([], [(k, d)]) if k == "dtype" => d.clone(),
                _ => return Err(type_error("astype() takes exactly one argument (dtype)")),
            };
            let d = dtype_arg(&dtype, None)?.ok_or_else(|| type_error("astype() needs a dtype"))?;
            Ok(Value::Tensor(tensor(t.try_cast(d))?))
        }
        Method::Item => {
            no_kwargs(&kwargs)?;
            if !args.is_empty() {
                return Err(type_error("item() takes no arguments"));
            }
            Ok(Value::from_scalar(tensor(t.item())?))
        }
    }
}

/// Drops the effect states a call passes last (they carry no data).
pub fn without_monads(mut args: Vec<Value>) -> Vec<Value> {
    while matches!(args.last(), Some(Value::Monad(_))) {
        args.pop();
    }
    args
}

/// Calls a primitive whose arguments are already bound (defaults filled). Control primitives
/// that call functions (`CallKw`) are handled by the machine.
pub fn call_prim(p: Prim, args: &[Value], out: &mut dyn Write) -> OpResult {
    match p {
        // State plumbing: the value (or state) passes through.
        Prim::UpdateState | Prim::Depend => {
            return Ok(args.first().cloned().unwrap_or(Value::None));
        }
        Prim::Load => {
            return match &args[0] {
                Value::Ref(r) => Ok(Value::Tensor(r.get())),
                other => Ok(other.clone()),
            };
        }
        _ => {}
    }
    // Effectful primitives receive their state as trailing arguments; it carries no data.
    let mut args = args;
    while let [rest @ .., Value::Monad(_)] = args {
        args = rest;
    }
    // A Parameter passed where a value is expected is read at this point of the program.
    if args
        .iter()
        .enumerate()
        .any(|(i, a)| matches!(a, Value::Ref(_)) && !p.takes_ref(i))
    {
        let read: Vec<Value> = args
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                Value::Ref(r) if !p.takes_ref(i) => Value::Tensor(r.get()),
                a => a.clone(),
            })
            .collect();
        return call_prim_values(p, &read, out);
    }
    call_prim_values(p, args, out)
}

fn call_prim_values(p: Prim, args: &[Value], out: &mut dyn Write) -> OpResult {
    use Prim::*;
    match p {
        Switch => Ok(if truth(&args[0])? {
            args[1].clone()
        } else {
            args[2].clone()
        }),
        Partial => {
            let (f, rest) = args
                .split_first()
                .ok_or_else(|| type_error("Partial needs a function"))?;
            Ok(Value::Partial(Rc::new(PartialApp {
                func: f.clone(),
                args: rest.to_vec(),
            })))
        }
        MakeTuple => Ok(Value::tuple(args.to_vec())),
        MakeList => Ok(Value::List(Rc::from(args.to_vec()))),
        TupleGetItem | GetItem => getitem(&args[0], &args[1]),
        MakeSlice => slice(args),
        Truth => Ok(Value::Bool(truth(&args[0])?)),
        Not => Ok(Value::Bool(!truth(&args[0])?)),
        GetAttr => match &args[1] {
            Value::Str(name) => getattr(&args[0], name),
            _ => Err(type_error("attribute name must be a string")),
        },
        CheckBound => match &args[0] {
            Value::Unbound => {
                let name = to_str(&args[1]);
                if truth(&args[2])? {
                    Err((
                        "NameError",
                        format!(
                            "cannot access free variable '{name}' where it is not associated with a value in enclosing scope"
                        ),
                    ))
                } else {
                    Err((
                        "UnboundLocalError",
                        format!(
                            "cannot access local variable '{name}' where it is not associated with a value"
                        ),
                    ))
                }
            }
            v => Ok(v.clone()),
        },
        Unpack => unpack(&args[0], args[1].as_index().unwrap_or(0)),
        Raise => Err((
            match &args[0] {
                Value::Str(s) if &**s == "AssertionError" => "AssertionError",
                _ => "RuntimeError",
            },
            to_str(&args[1]),
        )),
        Assert => {
            if truth(&args[0])? {
                Ok(Value::None)
            } else {
                Err((
                    "AssertionError",
                    match &args[1] {
                        Value::None => String::new(),
                        m => to_str(m),
                    },
                ))
            }
        }
        Enumerate => {
            let start = int_arg(&args[1])?;
            let xs = items(&args[0], &not_iterable)?;
            let mut out = Vec::with_capacity(xs.len());
            for (i, x) in xs.into_iter().enumerate() {
                let n = start
                    .checked_add(i as i64)
                    .ok_or_else(|| overflow("enumerate"))?;
                out.push(Value::tuple(vec![Value::Int(n), x]));
            }
            Ok(Value::tuple(out))
        }
        Zip => {
            let lists: Vec<Vec<Value>> = args
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    items(a, &|t| {
                        type_error(format!(
                            "zip argument #{} must support iteration ('{t}' is not iterable)",
                            i + 1
                        ))
                    })
                })
                .collect::<Result<_, _>>()?;
            let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
            Ok(Value::tuple(
                (0..n)
                    .map(|k| Value::tuple(lists.iter().map(|l| l[k].clone()).collect()))
                    .collect(),
            ))
        }
        IterLen => iter_len(&args[0]).map(Value::Int),
        Add | Sub | Mul | Div | FloorDiv | Mod | Pow | MatMul | LShift | RShift | BitAnd
        | BitOr | BitXor | InplaceAdd | InplaceMul | Divmod => {
            if p == MatMul {
                return match (&args[0], &args[1]) {
                    (Value::Tensor(a), Value::Tensor(b)) => {
                        tensor(Tensor::matmul(a, b)).map(Value::Tensor)
                    }
                    (a, b) => Err(unsupported(MatMul, a, b)),
                };
            }
            binary(p, &args[0], &args[1])
        }
        Eq | Ne | Lt | Le | Gt | Ge => compare(p, &args[0], &args[1]),
        Maximum | Minimum => match tensor_binary(p, &args[0], &args[1]) {
            Some(r) => r,
            None => match (num(&args[0]), num(&args[1])) {
                (Some(x), Some(y)) => arith(p, x, y, &args[0], &args[1]),
                _ => Err(type_error(format!(
                    "{}() expects tensors or numbers",
                    p.python_name()
                ))),
            },
        },
        Neg | Pos | Invert => unary(p, &args[0]),
        Is | IsNot => {
            let same = match (&args[0], &args[1]) {
                (Value::None, Value::None) => true,
                (Value::Ref(a), Value::Ref(b)) => a == b,
                (Value::Bool(a), Value::Bool(b)) => a == b,
                _ => false,
            };
            Ok(Value::Bool(same == (p == Is)))
        }
        In => contains(&args[1], &args[0]).map(Value::Bool),
        NotIn => contains(&args[1], &args[0]).map(|b| Value::Bool(!b)),
        Print => print(args, out),
        Len => len(&args[0]).map(Value::Int),
        Abs => match &args[0] {
            Value::Int(i) => i
                .checked_abs()
                .map(Value::Int)
                .ok_or_else(|| overflow("abs()")),
            Value::Bool(b) => Ok(Value::Int(*b as i64)),
            Value::Float(f) => Ok(Value::Float(f.abs())),
            Value::Tensor(_) => math(Abs, &args[0]),
            other => Err(type_error(format!(
                "bad operand type for abs(): '{}'",
                other.type_name()
            ))),
        },
        Min | Max => min_max(p, args),
        IntType => int_of(&args[0]),
        FloatType => float_of(&args[0]),
        BoolType => Ok(Value::Bool(truth(&args[0])?)),
        StrType => Ok(Value::str(&to_str(&args[0]))),
        Repr => Ok(Value::str(&repr(&args[0]))),
        TupleType => Ok(Value::tuple(items(&args[0], &not_iterable)?)),
        ListType => Ok(Value::List(Rc::from(items(&args[0], &not_iterable)?))),
        Range => range(args),
        IsInstance => isinstance(&args[0], &args[1]).map(Value::Bool),
        Sum => {
            if matches!(args[1], Value::Str(_)) {
                return Err(type_error(
                    "sum() can't sum strings [use ''.join(seq) instead]",
                ));
            }
            let mut acc = args[1].clone();
            for x in items(&args[0], &not_iterable)? {
                acc = binary(Add, &acc, &x)?;
            }
            Ok(acc)
        }
        Any | All => {
            let want = p == Any;
            for x in items(&args[0], &not_iterable)? {
                if truth(&x)? == want {
                    return Ok(Value::Bool(want));
                }
            }
            Ok(Value::Bool(!want))
        }
        TensorType => Err(type_error(
            "anfora.Tensor cannot be called; use ops.tensor(data)",
        )),
        Zeros | Ones | Full | Arange | MakeTensor | ZerosLike | OnesLike => creation(p, args),
        Exp | Log | Sqrt | Tanh | Sin | Cos | Sigmoid | Relu | Log1p | Expm1 | Erf | Silu
        | Softplus | Rsqrt | Sign => math(p, &args[0]),
        Gelu => gelu(&args[0], &args[1]),
        Clip | ClipGrad => crate::nn_ops::call(p, args),
        ArgMax | ArgMin | OneHot | Squeeze | ExpandDims | BroadcastTo | Concat | Stack | Split
        | ConcatGrad | StackGrad | Take | TakeGrad | Pad | PadGrad | ReflectionPad2D
        | ReplicationPad2D | ZeroPad2D | Pad2DGrad | Permute | IndexSelect => {
            crate::array_ops::call(p, args)
        }
        LogicalNot => match &args[0] {
            Value::Tensor(_) => math(p, &args[0]),
            v => Ok(Value::Bool(!truth(v)?)),
        },
        Where => where_(args),
        Cast => {
            let t = need_tensor(&args[0], "ops.cast")?;
            let d =
                dtype_arg(&args[1], None)?.ok_or_else(|| type_error("ops.cast() needs a dtype"))?;
            Ok(Value::Tensor(tensor(t.try_cast(d))?))
        }
        ReduceSum | ReduceMean | ReduceMax | ReduceMin | ReduceProd => reduce(p, args),
        Gemm => gemm(&args[0], &args[1], args[2].clone(), &args[3], &args[4]),
        Reshape => {
            let t = need_tensor(&args[0], "ops.reshape")?;
            tensor(t.reshape(&int_list(&args[1])?)).map(Value::Tensor)
        }
        Transpose => {
            let t = need_tensor(&args[0], "ops.transpose")?;
            let axes = match &args[1] {
                Value::None => None,
                v => Some(int_list(v)?),
            };
            tensor(t.transpose(axes.as_deref())).map(Value::Tensor)
        }
        Conv2D | Conv2DBackpropInput | Conv2DBackpropFilter | MaxPool2D | AvgPool2D
        | MaxPool2DGrad | MaxPool2DGradGrad | AvgPool2DGrad | Softmax | LogSoftmax | LogSumExp => {
            crate::nn_ops::call(p, args)
        }
        CallKw => Err(("SystemError", "CallKw is executed by the machine".into())),
        Load | UpdateState | Depend => call_prim(p, args, out),
        MakeParameter => crate::state::make_parameter(args),
        Assign | AssignAdd | AssignSub | ScatterUpdate | ScatterAdd | ScatterNdUpdate
        | ScatterNdAdd | Sgd | ApplyMomentum | Adam => crate::state::update(p, args),
        SetSeed | Uniform | Normal | Randint | Bernoulli | Dropout | DropoutMask => {
            crate::state::random(p, args)
        }
        DropoutApply => crate::state::dropout_apply(&args[0], &args[1], &args[2], &args[3]),
        Custom(id) => crate::state::custom(id, args),
        Grad | ValueAndGrad | Vjp | Jvp | StopGradient | GradAdd | SumToShape | BroadcastLike
        | FillZeros | SensOnes | SensCheck | GradTupleAt | GradItem | GradHead | GradPad
        | IndexGrad | CustomGrad | MatMulGrad | ReduceGrad | TransposeGrad => {
            crate::grad_ops::call(p, args)
        }
    }
}

fn call_kw_error(msg: &str) -> PyErr {
    ("SystemError", format!("internal error: {msg}"))
}

/// Splits the arguments of `CallKw(f, names, args..., kwvalues...)` into the function, the
/// positional arguments and the keyword names with their values.
#[allow(clippy::type_complexity)]
pub fn split_call_kw(
    args: Vec<Value>,
) -> Result<(Value, Vec<Value>, (Vec<String>, Vec<Value>)), PyErr> {
    let mut args = args.into_iter();
    let f = args
        .next()
        .ok_or_else(|| call_kw_error("CallKw without a function"))?;
    let names: Vec<String> = match &args.next() {
        Some(Value::Tuple(t)) => t.iter().map(crate::value::to_str).collect(),
        _ => return Err(call_kw_error("CallKw without keyword names")),
    };
    let mut positional: Vec<Value> = args.collect();
    let split = positional
        .len()
        .checked_sub(names.len())
        .ok_or_else(|| call_kw_error("CallKw arity"))?;
    let values = positional.split_off(split);
    Ok((f, positional, (names, values)))
}

/// Binds the positional and keyword arguments of a call of primitive `p` to its parameters.
pub fn bind_prim(
    p: Prim,
    args: Vec<Value>,
    kw: Option<(Vec<String>, Vec<Value>)>,
) -> Result<Vec<Value>, PyErr> {
    let sig = p.signature();
    let (names, values) = kw.unwrap_or_default();
    let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    let bound = sig
        .bind(args.len(), &refs)
        .map_err(|e| type_error(e.message(&sig.name)))?;
    Ok(bound
        .into_iter()
        .map(|s| match s {
            crate::ArgSource::Positional(i) => args[i].clone(),
            crate::ArgSource::Keyword(j) => values[j].clone(),
            crate::ArgSource::Default(c) => crate::value::from_const(&c, &mut |_| Value::None),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::repr;

    fn int(i: i64) -> Value {
        Value::Int(i)
    }

    fn tup(items: &[i64]) -> Value {
        Value::tuple(items.iter().map(|&i| Value::Int(i)).collect())
    }

    fn err(r: OpResult) -> String {
        let (k, m) = r.unwrap_err();
        format!("{k}: {m}")
    }

    #[test]
    fn arithmetic_dispatch_follows_python() {
        assert_eq!(
            repr(&binary(Prim::Add, &Value::Bool(true), &Value::Bool(true)).unwrap()),
            "2"
        );
        assert_eq!(
            repr(&binary(Prim::BitAnd, &Value::Bool(true), &Value::Bool(false)).unwrap()),
            "False"
        );
        assert_eq!(
            repr(&binary(Prim::BitOr, &Value::Bool(true), &int(2)).unwrap()),
            "3"
        );
        assert_eq!(
            repr(&binary(Prim::Mul, &Value::str("ab"), &int(3)).unwrap()),
            "'ababab'"
        );
        assert_eq!(
            repr(&binary(Prim::Mul, &int(-1), &tup(&[1])).unwrap()),
            "()"
        );
        assert_eq!(
            repr(&binary(Prim::Add, &int(1), &Value::Float(0.5)).unwrap()),
            "1.5"
        );
        assert_eq!(
            err(binary(Prim::Add, &int(1), &Value::str("a"))),
            "TypeError: unsupported operand type(s) for +: 'int' and 'str'"
        );
        assert_eq!(
            err(binary(Prim::Add, &Value::str("a"), &int(1))),
            "TypeError: can only concatenate str (not \"int\") to str"
        );
        assert_eq!(
            err(binary(
                Prim::InplaceAdd,
                &Value::List(Rc::from(vec![])),
                &Value::List(Rc::from(vec![]))
            ))
            .split(':')
            .next()
            .unwrap(),
            "TypeError"
        );
        assert_eq!(
            err(binary(Prim::LShift, &int(1), &int(-1))),
            "ValueError: negative shift count"
        );
        assert_eq!(
            err(binary(Prim::Mod, &Value::str("%d"), &int(1)))
                .split(':')
                .next()
                .unwrap(),
            "TypeError"
        );
        assert_eq!(
            err(binary(Prim::Mul, &Value::str("ab"), &int(1 << 40))),
            "MemoryError: str repetition result is too large"
        );
    }

    #[test]
    fn comparisons_and_equality() {
        let lt = |a: &Value, b: &Value| repr(&compare(Prim::Lt, a, b).unwrap());
        assert_eq!(lt(&tup(&[1, 2]), &tup(&[1, 3])), "True");
        assert_eq!(lt(&tup(&[1, 2]), &tup(&[1, 2, 0])), "True");
        assert_eq!(lt(&Value::str("b"), &Value::str("ab")), "False");
        assert_eq!(
            repr(&compare(Prim::Eq, &int(1), &Value::str("1")).unwrap()),
            "False"
        );
        assert_eq!(
            repr(&compare(Prim::Ne, &Value::None, &Value::None).unwrap()),
            "False"
        );
        assert_eq!(
            repr(&compare(Prim::Eq, &Value::Float(f64::NAN), &Value::Float(f64::NAN)).unwrap()),
            "False"
        );
        assert_eq!(
            err(compare(Prim::Lt, &Value::None, &int(1))),
            "TypeError: '<' not supported between instances of 'NoneType' and 'int'"
        );
        assert!(py_eq(&Value::DType(DType::F32), &Value::str("float32")).unwrap());
    }

    #[test]
    fn slicing_matches_python() {
        let t = tup(&[0, 1, 2, 3, 4, 5]);
        let s = |start: Option<i64>, stop: Option<i64>, step: Option<i64>| {
            repr(&getitem(&t, &Value::Slice(Rc::new(Slice { start, stop, step }))).unwrap())
        };
        assert_eq!(s(None, None, Some(-1)), "(5, 4, 3, 2, 1, 0)");
        assert_eq!(s(Some(-2), None, None), "(4, 5)");
        assert_eq!(s(Some(10), Some(-10), Some(-2)), "(5, 3, 1)");
        assert_eq!(s(Some(1), Some(100), Some(3)), "(1, 4)");
        assert_eq!(s(Some(4), Some(1), None), "()");
        assert_eq!(
            err(getitem(
                &t,
                &Value::Slice(Rc::new(Slice {
                    start: None,
                    stop: None,
                    step: Some(0)
                }))
            )),
            "ValueError: slice step cannot be zero"
        );
        assert_eq!(
            repr(&getitem(&Value::str("héllo"), &int(1)).unwrap()),
            "'é'"
        );
        assert_eq!(
            err(getitem(&t, &int(6))),
            "IndexError: tuple index out of range"
        );
        assert_eq!(
            err(getitem(&t, &Value::Float(1.0))),
            "TypeError: tuple indices must be integers or slices, not float"
        );
        let r = Value::Range(Range {
            start: 10,
            stop: 0,
            step: -2,
        });
        assert_eq!(
            repr(
                &getitem(
                    &r,
                    &Value::Slice(Rc::new(Slice {
                        start: Some(1),
                        stop: None,
                        step: Some(2)
                    }))
                )
                .unwrap()
            ),
            "range(8, 0, -4)"
        );
        assert_eq!(repr(&getitem(&r, &int(-1)).unwrap()), "2");
    }

    #[test]
    fn membership_unpacking_and_iteration() {
        assert!(contains(&tup(&[1, 2]), &Value::Float(2.0)).unwrap());
        assert!(contains(&Value::str("hello"), &Value::str("ell")).unwrap());
        let r = Value::Range(Range {
            start: 0,
            stop: 10,
            step: 3,
        });
        assert!(contains(&r, &int(9)).unwrap());
        assert!(!contains(&r, &int(10)).unwrap());
        assert_eq!(
            err(contains(&int(1), &int(1)).map(Value::Bool)),
            "TypeError: argument of type 'int' is not iterable"
        );
        assert_eq!(
            err(unpack(&tup(&[1, 2, 3]), 2)),
            "ValueError: too many values to unpack (expected 2)"
        );
        assert_eq!(
            err(unpack(&tup(&[1]), 2)),
            "ValueError: not enough values to unpack (expected 2, got 1)"
        );
        assert_eq!(
            err(unpack(&int(1), 2)),
            "TypeError: cannot unpack non-iterable int object"
        );
        assert_eq!(iter_len(&Value::str("ab")).unwrap(), 2);
        assert_eq!(
            err(iter_len(&Value::None).map(Value::Int)),
            "TypeError: 'NoneType' object is not iterable"
        );
    }

    #[test]
    fn builtins() {
        let mut sink = Vec::new();
        let call = |p: Prim, args: &[Value], sink: &mut Vec<u8>| call_prim(p, args, sink);
        assert_eq!(
            repr(&call(Prim::Max, &[int(1), Value::Float(1.0), int(0)], &mut sink).unwrap()),
            "1"
        );
        assert_eq!(
            repr(&call(Prim::Min, &[tup(&[3, 1, 2])], &mut sink).unwrap()),
            "1"
        );
        assert_eq!(
            err(call(Prim::Min, &[tup(&[])], &mut sink)),
            "ValueError: min() arg is an empty sequence"
        );
        assert_eq!(
            repr(&call(Prim::Sum, &[tup(&[1, 2]), Value::Float(0.5)], &mut sink).unwrap()),
            "3.5"
        );
        assert_eq!(
            repr(&call(Prim::IntType, &[Value::Float(-2.7)], &mut sink).unwrap()),
            "-2"
        );
        assert_eq!(
            repr(&call(Prim::IntType, &[Value::str(" 12 ")], &mut sink).unwrap()),
            "12"
        );
        assert_eq!(
            err(call(
                Prim::IntType,
                &[Value::Float(f64::INFINITY)],
                &mut sink
            )),
            "OverflowError: cannot convert float infinity to integer"
        );
        assert_eq!(
            repr(
                &call(
                    Prim::IsInstance,
                    &[Value::Bool(true), Value::Prim(Prim::IntType)],
                    &mut sink
                )
                .unwrap()
            ),
            "True"
        );
        assert_eq!(
            repr(&call(Prim::Divmod, &[int(-7), int(2)], &mut sink).unwrap()),
            "(-4, 1)"
        );
        assert_eq!(
            repr(&call(Prim::Range, &[int(5)], &mut sink).unwrap()),
            "range(0, 5)"
        );
        assert_eq!(
            err(call(Prim::Range, &[int(1), int(2), int(0)], &mut sink)),
            "ValueError: range() arg 3 must not be zero"
        );
        assert_eq!(
            repr(&call(Prim::Enumerate, &[Value::str("ab"), int(1)], &mut sink).unwrap()),
            "((1, 'a'), (2, 'b'))"
        );
        assert_eq!(
            repr(&call(Prim::Zip, &[tup(&[1, 2, 3]), Value::str("xy")], &mut sink).unwrap()),
            "((1, 'x'), (2, 'y'))"
        );
        call(
            Prim::Print,
            &[int(1), Value::str("a"), Value::str("-"), Value::str("!\n")],
            &mut sink,
        )
        .unwrap();
        assert_eq!(String::from_utf8(sink.clone()).unwrap(), "1-a!\n");
        assert_eq!(
            err(call(Prim::Print, &[int(1), int(0), Value::None], &mut sink)),
            "TypeError: sep must be None or a string, not int"
        );
    }

    #[test]
    fn tensors_mix_with_python_scalars() {
        let mut sink = Vec::new();
        let t = call_prim(
            Prim::MakeTensor,
            &[Value::tuple(vec![int(1), int(2)]), Value::None],
            &mut sink,
        )
        .unwrap();
        assert_eq!(repr(&t), "Tensor([1, 2])");
        assert_eq!(
            repr(&binary(Prim::Mul, &t, &Value::Float(2.5)).unwrap()),
            "Tensor([2.5, 5. ])"
        );
        assert_eq!(repr(&getattr(&t, "shape").unwrap()), "(2,)");
        assert_eq!(repr(&getattr(&t, "dtype").unwrap()), "anfora.int64");
        assert_eq!(
            err(truth(&t).map(Value::Bool)),
            "ValueError: The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()"
        );
        assert_eq!(
            repr(&call_prim(Prim::Exp, &[Value::Float(0.0)], &mut sink).unwrap()),
            "1.0"
        );
        assert_eq!(
            repr(&call_prim(Prim::Relu, &[int(-3)], &mut sink).unwrap()),
            "0"
        );
        assert_eq!(
            err(call_prim(
                Prim::ReduceSum,
                &[int(1), Value::None, Value::Bool(false)],
                &mut sink
            )),
            "TypeError: ops.sum() expects a Tensor, got int"
        );
        let sum = call_method(
            Method::Sum,
            match &t {
                Value::Tensor(t) => t,
                _ => unreachable!(),
            },
            vec![],
            vec![("axis".into(), int(0))],
        )
        .unwrap();
        assert_eq!(repr(&sum), "Tensor(3)");
    }

    /// Found by tests/python/test_ops_random.py against numpy.
    #[test]
    fn clip_broadcasts_and_promotes_its_operands_together() {
        let mut sink = Vec::new();
        let zeros = |shape: &[usize]| {
            Value::Tensor(anfora_tensor::Tensor::zeros(shape, anfora_tensor::DType::F64).unwrap())
        };
        // np.clip broadcasts its three operands together: a mismatch names every shape,
        // a Python number as ().
        for (lo, hi, shapes) in [
            (zeros(&[3]), zeros(&[4]), "(2,3) (3,) (4,)"),
            (Value::Float(5.0), zeros(&[4]), "(2,3) () (4,)"),
            (zeros(&[4]), Value::None, "(2,3) (4,)"),
        ] {
            assert_eq!(
                err(call_prim(Prim::Clip, &[zeros(&[2, 3]), lo, hi], &mut sink)),
                format!(
                    "ValueError: operands could not be broadcast together with shapes {shapes} "
                )
            );
        }
        // ... and promotes them together, Python numbers weak: clip(bool, -4, int32) is
        // int32 and clip(bool, -4, float32) float32 (maximum, then minimum, would give int64
        // and float64).
        let typed =
            |d: anfora_tensor::DType| Value::Tensor(anfora_tensor::Tensor::zeros(&[1], d).unwrap());
        for (hi, dtype) in [
            (typed(anfora_tensor::DType::I32), "int32"),
            (typed(anfora_tensor::DType::F32), "float32"),
        ] {
            let x = typed(anfora_tensor::DType::Bool);
            let v = call_prim(Prim::Clip, &[x, int(-4), hi], &mut sink).unwrap();
            assert_eq!(
                repr(&getattr(&v, "dtype").unwrap()),
                format!("anfora.{dtype}")
            );
        }
    }

    /// np.concatenate(..., axis=None) joins the arrays flattened (found by
    /// tests/python/test_ops_random.py against numpy).
    #[test]
    fn concat_of_axis_none_joins_the_flattened_tensors() {
        let mut sink = Vec::new();
        let t = |shape: &[i64], start: i64| {
            let n: i64 = shape.iter().product();
            let mut sink = std::io::sink();
            let r = call_prim(
                Prim::Arange,
                &[int(start), int(start + n), Value::None, Value::None],
                &mut sink,
            )
            .unwrap();
            call_prim(Prim::Reshape, &[r, tup(shape)], &mut sink).unwrap()
        };
        let joined = call_prim(
            Prim::Concat,
            &[
                Value::List(vec![t(&[2, 2], 0), t(&[], 4), t(&[1, 3], 5)].into()),
                Value::None,
            ],
            &mut sink,
        )
        .unwrap();
        assert_eq!(repr(&joined), "Tensor([0, 1, 2, 3, 4, 5, 6, 7])");
        // Its gradient cuts the flat sensitivity back into the tensors' shapes.
        let parts = call_prim(
            Prim::ConcatGrad,
            &[
                joined,
                Value::tuple(vec![t(&[2, 2], 0), t(&[], 4), t(&[1, 3], 5)]),
                Value::None,
            ],
            &mut sink,
        )
        .unwrap();
        assert_eq!(
            repr(&parts),
            "(Tensor([[0, 1],\n        [2, 3]]), Tensor(4), Tensor([[5, 6, 7]]))"
        );
    }
}

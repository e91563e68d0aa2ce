//! Inference rules: the abstract result of every primitive.
//!
//! * Constants fold by running the reference VM's own implementation of the primitive, so
//!   folding has exactly the runtime semantics. An operation that would raise stays in the
//!   program (its abstract is `Bottom`), so the error happens at run time, where Python has it.
//! * Tensor shape and dtype incompatibilities are compile-time errors (`RuleError`), as in JAX
//!   and MindSpore: they are found before the program runs.
//! * Otherwise rules compute types (and shapes) from types, and `Any` when nothing is known.

use std::sync::Arc;

use crate::Prim;
use crate::Value;
use crate::ops::{tensor_op, tensor_unary_op};
use crate::value::{Method, Slice};
use anfora_tensor::{
    BinaryOp, DType, ReduceOp, Scalar, TensorError, UnaryOp, binary_result_dtype,
    binary_scalar_result_dtype, broadcast_shapes, promote_types, reduce_result_dtype,
    unary_result_dtype,
};

use crate::abs::{Abs, Func, TensorAbs, shape_text};

/// Largest tensor kept as a compile-time constant.
pub const MAX_CONST_ELEMENTS: usize = 64;

/// A compile-time error of a primitive: a message in numpy's words.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleError(pub String);

type Rule = Result<Abs, RuleError>;

fn err(msg: impl Into<String>) -> RuleError {
    RuleError(msg.into())
}

fn from_tensor_error(e: TensorError) -> RuleError {
    RuleError(e.message)
}

/// The name of an operation in compile-time error messages: the `anfora.ops` or builtin name
/// (`add`, `matmul`, `sum`, `len`), numpy's ufunc name for operators that have neither.
pub fn op_label(p: Prim) -> String {
    match p {
        Prim::GetItem | Prim::TupleGetItem => return "index".into(),
        Prim::InplaceAdd => return "add".into(),
        Prim::InplaceMul => return "mul".into(),
        Prim::SensCheck => return "the output sensitivity".into(),
        _ => {}
    }
    if let Some(op) = tensor_op(p) {
        let name = p.python_name();
        if !name.starts_with("ops.") && !name.chars().all(|c| c.is_ascii_lowercase()) {
            return op.ufunc_name().into();
        }
    }
    match p {
        Prim::Invert => return "invert".into(),
        Prim::Pos => return "positive".into(),
        _ => {}
    }
    let name = p.python_name();
    name.strip_prefix("ops.").unwrap_or(&name).to_string()
}

/// The arguments of primitives that must be known at compile time: (position, name).
fn constant_args(p: Prim) -> &'static [(usize, &'static str)] {
    match p {
        Prim::Pad => &[(2, "mode")],
        Prim::PadGrad | Prim::Pad2DGrad => &[(3, "mode")],
        _ => &[],
    }
}

/// The message of E0304 when an argument of `p` that must be known at compile time is not.
pub fn not_constant(p: Prim, args: &[Abs]) -> Option<String> {
    constant_args(p).iter().find_map(|&(i, name)| {
        let a = args.get(i)?;
        if matches!(a, Abs::Bottom) || to_value(a).is_some() {
            return None;
        }
        let what = match a {
            Abs::Str(None) => "a str computed at run time".to_string(),
            Abs::Any => "a value known only at run time".to_string(),
            other => format!("{other} (known only at run time)"),
        };
        Some(format!(
            "the {name} must be known at compile time (a constant such as 'reflect'), got {what}"
        ))
    })
}

/// `operation: message`, unless the message already starts with the operation's name (numpy's
/// matmul messages do).
pub fn shape_message(operation: &str, msg: &str) -> String {
    let msg = msg.trim_end();
    if msg
        .strip_prefix(operation)
        .is_some_and(|rest| rest.starts_with(':'))
    {
        msg.to_string()
    } else {
        format!("{operation}: {msg}")
    }
}

// ---- values <-> abstracts -----------------------------------------------------------------

/// The value of a fully constant abstract.
pub fn to_value(a: &Abs) -> Option<Value> {
    Some(match a {
        Abs::None => Value::None,
        Abs::Bool(Some(b)) => Value::Bool(*b),
        Abs::Int(Some(i)) => Value::Int(*i),
        Abs::Float(Some(f)) => Value::Float(*f),
        Abs::Str(Some(s)) => Value::Str(s.clone()),
        Abs::Tuple(items) => Value::tuple(items.iter().map(to_value).collect::<Option<_>>()?),
        Abs::List(items) => Value::List(items.iter().map(to_value).collect::<Option<_>>()?),
        Abs::Tensor(t) => Value::Tensor(t.value.clone()?),
        Abs::DType(d) => Value::DType(*d),
        Abs::Func(fs) if fs.len() == 1 => match &fs[0] {
            Func::Prim(p) => Value::Prim(*p),
            _ => return None,
        },
        Abs::Range(Some(r)) => Value::Range(*r),
        Abs::Slice(Some(s)) => Value::Slice(std::rc::Rc::new(*s)),
        Abs::Ellipsis => Value::Ellipsis,
        _ => return None,
    })
}

/// The abstract of a runtime value (tensors keep their value only when small).
pub fn from_value(v: &Value) -> Abs {
    match v {
        Value::None => Abs::None,
        Value::Bool(b) => Abs::Bool(Some(*b)),
        Value::Int(i) => Abs::Int(Some(*i)),
        Value::Float(f) => Abs::Float(Some(*f)),
        Value::Str(s) => Abs::Str(Some(s.clone())),
        Value::Tuple(items) => Abs::Tuple(items.iter().map(from_value).collect()),
        Value::List(items) => Abs::List(items.iter().map(from_value).collect()),
        Value::Tensor(t) => Abs::tensor(TensorAbs {
            dtype: t.dtype(),
            shape: t.shape().iter().map(|&d| Some(d)).collect(),
            value: (t.numel() <= MAX_CONST_ELEMENTS).then(|| t.clone()),
        }),
        Value::DType(d) => Abs::DType(*d),
        Value::Prim(p) => Abs::func(Func::Prim(*p)),
        Value::Range(r) => Abs::Range(Some(*r)),
        Value::Slice(s) => Abs::Slice(Some(**s)),
        Value::Ellipsis => Abs::Ellipsis,
        Value::Unbound => Abs::Unbound,
        Value::Ref(r) => Abs::Ref(Arc::new(crate::abs::RefAbs::of(r))),
        Value::Monad(m) => Abs::Monad(*m),
        Value::Closure(_) | Value::Partial(_) | Value::Method(_) => Abs::Any,
    }
}

// ---- helpers ------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Num {
    Bool,
    Int,
    Float,
}

fn num(a: &Abs) -> Option<Num> {
    match a {
        Abs::Bool(_) => Some(Num::Bool),
        Abs::Int(_) => Some(Num::Int),
        Abs::Float(_) => Some(Num::Float),
        _ => None,
    }
}

/// A representative Python scalar of a number abstract (for dtype rules, which depend only on
/// the kind of the scalar).
fn scalar_of(a: &Abs) -> Option<Scalar> {
    Some(match a {
        Abs::Bool(b) => Scalar::Bool(b.unwrap_or(false)),
        Abs::Int(i) => Scalar::Int(i.unwrap_or(0)),
        Abs::Float(f) => Scalar::Float(f.unwrap_or(0.0)),
        _ => return None,
    })
}

pub(crate) fn tensor_abs(dtype: DType, shape: Vec<Option<usize>>) -> Abs {
    Abs::tensor(TensorAbs::new(dtype, shape))
}

fn shape_str(shape: &[Option<usize>]) -> String {
    shape_text(shape, "?", ", ")
}

/// A shape as numpy prints it in broadcasting errors, `(2,3)`, with `?` for unknown sizes.
fn compact_shape(shape: &[Option<usize>]) -> String {
    shape_text(shape, "?", ",")
}

/// numpy broadcasting over possibly unknown dimensions.
/// numpy's error for operands that do not broadcast together, naming all their shapes (as
/// `where` and `clip` report it), when every shape is known.
pub(crate) fn check_broadcast_all(shapes: &[&[Option<usize>]]) -> Result<(), RuleError> {
    let known: Option<Vec<Vec<usize>>> = shapes
        .iter()
        .map(|s| s.iter().copied().collect::<Option<Vec<_>>>())
        .collect();
    if let Some(known) = known {
        let refs: Vec<&[usize]> = known.iter().map(Vec::as_slice).collect();
        anfora_tensor::broadcast_shapes_n(&refs).map_err(from_tensor_error)?;
    }
    Ok(())
}

fn broadcast(a: &[Option<usize>], b: &[Option<usize>]) -> Result<Vec<Option<usize>>, RuleError> {
    if let (Some(x), Some(y)) = (
        a.iter().copied().collect::<Option<Vec<_>>>(),
        b.iter().copied().collect::<Option<Vec<_>>>(),
    ) {
        return broadcast_shapes(&x, &y)
            .map(|s| s.into_iter().map(Some).collect())
            .map_err(from_tensor_error);
    }
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            Some(1)
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            Some(1)
        };
        out.push(match (da, db) {
            (Some(1), d) | (d, Some(1)) => d,
            (Some(x), Some(y)) if x == y => Some(x),
            (Some(_), Some(_)) => {
                return Err(err(format!(
                    "operands could not be broadcast together with shapes {} {}",
                    compact_shape(a),
                    compact_shape(b)
                )));
            }
            _ => None,
        });
    }
    Ok(out)
}

/// The result of a binary operation when a tensor is involved; `None` if no tensor is.
fn tensor_binary(op: BinaryOp, a: &Abs, b: &Abs) -> Option<Rule> {
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

fn number_binary(p: Prim, a: Num, b: Num) -> Abs {
    use Num::*;
    let wider = if a == Float || b == Float { Float } else { Int };
    let of = |n: Num| match n {
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
pub(crate) fn binary(p: Prim, a: &Abs, b: &Abs) -> Rule {
    if let Some(op) = tensor_op(p)
        && let Some(r) = tensor_binary(op, a, b)
    {
        return r;
    }
    if p == Prim::MatMul {
        return matmul(a, b);
    }
    if matches!(a, Abs::Any) || matches!(b, Abs::Any) {
        // Comparisons with `==` always give a bool, unless a tensor is involved.
        return Ok(Abs::Any);
    }
    if let (Some(x), Some(y)) = (num(a), num(b)) {
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
        (Prim::Add, Abs::List(x), Abs::List(y)) => {
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

fn matmul(a: &Abs, b: &Abs) -> Rule {
    let (Abs::Tensor(x), Abs::Tensor(y)) = (a, b) else {
        return Ok(if matches!(a, Abs::Any) || matches!(b, Abs::Any) {
            Abs::Any
        } else {
            Abs::Bottom
        });
    };
    if x.shape.is_empty() || y.shape.is_empty() {
        return Err(err(
            "matmul: Input operand does not have enough dimensions (a scalar is not allowed)",
        ));
    }
    let dtype = promote_types(x.dtype, y.dtype);
    let (xs, ys) = (&x.shape, &y.shape);
    let k1 = xs[xs.len() - 1];
    let k2 = if ys.len() == 1 {
        ys[0]
    } else {
        ys[ys.len() - 2]
    };
    if let (Some(p), Some(q)) = (k1, k2)
        && p != q
    {
        return Err(err(format!(
            "matmul: shapes {} and {} do not align ({p} != {q})",
            shape_str(xs),
            shape_str(ys)
        )));
    }
    let batch_x = &xs[..xs.len().saturating_sub(2)];
    let batch_y = &ys[..ys.len().saturating_sub(2)];
    let mut shape = broadcast(batch_x, batch_y)?;
    if xs.len() >= 2 {
        shape.push(xs[xs.len() - 2]);
    }
    if ys.len() >= 2 {
        shape.push(ys[ys.len() - 1]);
    }
    Ok(tensor_abs(dtype, shape))
}

fn unary(p: Prim, a: &Abs) -> Rule {
    match a {
        Abs::Tensor(t) => {
            let op = match p {
                // Both forms compute in the same dtype.
                Prim::Gelu => UnaryOp::Gelu,
                _ => tensor_unary_op(p).expect("a unary primitive"),
            };
            if op == UnaryOp::Relu && t.dtype == DType::Bool {
                return Err(err("relu is not supported for boolean tensors"));
            }
            let d = unary_result_dtype(op, t.dtype).map_err(from_tensor_error)?;
            Ok(tensor_abs(d, t.shape.clone()))
        }
        Abs::Any => Ok(Abs::Any),
        x => Ok(match (p, num(x)) {
            (Prim::Neg | Prim::Pos | Prim::Abs, Some(Num::Float)) => Abs::Float(None),
            (Prim::Neg | Prim::Pos | Prim::Abs | Prim::Invert, Some(_)) => Abs::Int(None),
            (Prim::Relu | Prim::Sign, Some(Num::Float)) => Abs::Float(None),
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

/// Python truthiness as a bool abstract.
fn truth(a: &Abs) -> Abs {
    match a {
        Abs::None => Abs::Bool(Some(false)),
        Abs::Tuple(t) | Abs::List(t) => Abs::Bool(Some(!t.is_empty())),
        Abs::Func(_) | Abs::DType(_) | Abs::Ellipsis => Abs::Bool(Some(true)),
        Abs::Tensor(t) => match t.numel() {
            Some(1) => Abs::Bool(None),
            // numpy refuses the truth value of arrays that are not single elements.
            Some(_) => Abs::Bottom,
            None => Abs::Bool(None),
        },
        Abs::Bottom => Abs::Bottom,
        _ => Abs::Bool(None),
    }
}

/// The items of a sequence whose length is known.
fn items(a: &Abs) -> Option<Vec<Abs>> {
    match a {
        Abs::Tuple(t) | Abs::List(t) => Some(t.to_vec()),
        Abs::Str(Some(s)) => Some(
            s.chars()
                .map(|c| Abs::Str(Some(Arc::from(c.to_string().as_str()))))
                .collect(),
        ),
        Abs::Range(Some(r)) if r.len() <= 4096 => Some(
            (0..r.len() as i64)
                .map(|i| Abs::Int(Some(r.get(i))))
                .collect(),
        ),
        Abs::Tensor(t) if !t.shape.is_empty() => {
            let n = t.shape[0]?;
            if n > 4096 {
                return None;
            }
            let row = tensor_abs(t.dtype, t.shape[1..].to_vec());
            Some(vec![row; n])
        }
        _ => None,
    }
}

/// The abstract of one item of an iterable (any item): used for loops over sequences.
fn element(a: &Abs) -> Abs {
    match a {
        Abs::Tuple(t) | Abs::List(t) => t
            .iter()
            .try_fold(Abs::Bottom, |acc, x| acc.join(x))
            .unwrap_or(Abs::Any),
        Abs::Str(_) => Abs::Str(None),
        Abs::Range(_) => Abs::Int(None),
        Abs::Tensor(t) if !t.shape.is_empty() => tensor_abs(t.dtype, t.shape[1..].to_vec()),
        Abs::Tensor(_) => Abs::Bottom,
        Abs::Any => Abs::Any,
        _ => Abs::Bottom,
    }
}

fn length(a: &Abs) -> Abs {
    match a {
        Abs::Tuple(t) | Abs::List(t) => Abs::Int(Some(t.len() as i64)),
        Abs::Str(Some(s)) => Abs::Int(Some(s.chars().count() as i64)),
        Abs::Range(Some(r)) => match i64::try_from(r.len()) {
            Ok(n) => Abs::Int(Some(n)),
            Err(_) => Abs::Bottom,
        },
        Abs::Tensor(t) if t.shape.is_empty() => Abs::Bottom,
        Abs::Tensor(t) => Abs::Int(t.shape[0].map(|d| d as i64)),
        Abs::Str(None) | Abs::Range(None) | Abs::Any => Abs::Int(None),
        _ => Abs::Bottom,
    }
}

/// An index that Python accepts as an int: ints, bools and 0-d integer tensors (`Some(None)`
/// when its value is unknown).
fn int_index(a: &Abs) -> Option<Option<i64>> {
    match a {
        Abs::Int(i) => Some(*i),
        Abs::Bool(b) => Some(b.map(i64::from)),
        Abs::Tensor(t) if t.shape.is_empty() && t.dtype.is_int() => {
            Some(t.value.as_ref().and_then(|v| match v.item() {
                Ok(Scalar::Int(i)) => Some(i),
                _ => None,
            }))
        }
        _ => None,
    }
}

pub(crate) fn getitem(obj: &Abs, idx: &Abs) -> Rule {
    // A 0-d integer tensor indexes sequences as an int.
    if !matches!(obj, Abs::Tensor(_))
        && matches!(idx, Abs::Tensor(_))
        && let Some(i) = int_index(idx)
    {
        return getitem(obj, &Abs::Int(i));
    }
    Ok(match obj {
        Abs::Tuple(items) | Abs::List(items) => match idx {
            Abs::Int(Some(_)) | Abs::Bool(Some(_)) => {
                let i = idx.as_i64().unwrap();
                let n = items.len() as i64;
                let j = if i < 0 { i + n } else { i };
                if j < 0 || j >= n {
                    Abs::Bottom
                } else {
                    items[j as usize].clone()
                }
            }
            Abs::Int(None) | Abs::Bool(None) | Abs::Any => element(obj),
            Abs::Slice(Some(s)) => {
                let (start, _, step, count) = match crate::ops::slice_indices(s, items.len() as i64)
                {
                    Ok(v) => v,
                    Err(_) => return Ok(Abs::Bottom),
                };
                let part: Vec<Abs> = (0..count)
                    .map(|k| items[(start + k * step) as usize].clone())
                    .collect();
                if matches!(obj, Abs::Tuple(_)) {
                    Abs::tuple(part)
                } else {
                    Abs::List(Arc::from(part))
                }
            }
            Abs::Slice(None) => Abs::Any,
            _ => Abs::Bottom,
        },
        Abs::Str(_) => match idx {
            Abs::Int(_) | Abs::Bool(_) | Abs::Slice(_) | Abs::Any => Abs::Str(None),
            _ => Abs::Bottom,
        },
        Abs::Range(_) => match idx {
            Abs::Int(_) | Abs::Bool(_) | Abs::Any => Abs::Int(None),
            Abs::Slice(_) => Abs::Range(None),
            _ => Abs::Bottom,
        },
        Abs::Tensor(t) => return tensor_index(t, idx),
        Abs::Any => Abs::Any,
        _ => Abs::Bottom,
    })
}

/// Shape of basic indexing with ints, slices, None and `...` (values may be unknown).
fn tensor_index(t: &TensorAbs, idx: &Abs) -> Rule {
    let parts: Vec<Abs> = match idx {
        Abs::Tuple(items) => items.to_vec(),
        other => vec![other.clone()],
    };
    let mut out = Vec::new();
    let mut dim = 0usize;
    if parts.iter().filter(|p| matches!(p, Abs::Ellipsis)).count() > 1 {
        return Err(err("an index can only have a single ellipsis ('...')"));
    }
    // A 0-d integer tensor indexes as an int.
    let parts: Vec<Abs> = parts
        .into_iter()
        .map(|p| match (&p, int_index(&p)) {
            (Abs::Tensor(_), Some(i)) => Abs::Int(i),
            _ => p,
        })
        .collect();
    let consumed = parts
        .iter()
        .filter(|p| !matches!(p, Abs::None | Abs::Ellipsis))
        .count();
    if consumed > t.shape.len() {
        return Err(err(format!(
            "too many indices for array: array is {}-dimensional, but {consumed} were indexed",
            t.shape.len()
        )));
    }
    for p in &parts {
        match p {
            Abs::Int(Some(i)) => {
                if let Some(n) = t.shape[dim] {
                    let j = if *i < 0 { i + n as i64 } else { *i };
                    if j < 0 || j >= n as i64 {
                        return Err(err(format!(
                            "index {i} is out of bounds for axis {dim} with size {n}"
                        )));
                    }
                }
                dim += 1;
            }
            Abs::Int(None) => dim += 1,
            Abs::Slice(s) => {
                let len = match (s, t.shape[dim]) {
                    (Some(s), Some(n)) => match crate::ops::slice_indices(s, n as i64) {
                        Ok((_, _, _, count)) => Some(count as usize),
                        Err(_) => return Ok(Abs::Bottom),
                    },
                    _ => None,
                };
                out.push(len);
                dim += 1;
            }
            Abs::None => out.push(Some(1)),
            Abs::Ellipsis => {
                let rest = t.shape.len() - consumed;
                out.extend_from_slice(&t.shape[dim..dim + rest]);
                dim += rest;
            }
            Abs::Any => return Ok(Abs::Any),
            _ => return Ok(Abs::Bottom),
        }
    }
    out.extend_from_slice(&t.shape[dim..]);
    Ok(tensor_abs(t.dtype, out))
}

/// A shape argument: an int or a tuple/list of ints (known or not).
pub(crate) fn shape_arg(a: &Abs) -> Option<Vec<Option<usize>>> {
    let dim = |x: &Abs| match x {
        Abs::Int(Some(i)) if *i >= 0 => Some(Some(*i as usize)),
        Abs::Bool(Some(b)) => Some(Some(*b as usize)),
        Abs::Int(None) | Abs::Bool(None) => Some(None),
        _ => None,
    };
    match a {
        Abs::Tuple(items) | Abs::List(items) => items.iter().map(dim).collect(),
        other => dim(other).map(|d| vec![d]),
    }
}

pub(crate) fn dtype_arg(a: &Abs, default: DType) -> Option<DType> {
    match a {
        Abs::None => Some(default),
        Abs::DType(d) => Some(*d),
        Abs::Str(Some(s)) => DType::from_name(s),
        Abs::Func(fs) if fs.len() == 1 => match fs[0] {
            Func::Prim(Prim::FloatType) => Some(DType::F64),
            Func::Prim(Prim::IntType) => Some(DType::I64),
            Func::Prim(Prim::BoolType) => Some(DType::Bool),
            _ => None,
        },
        _ => None,
    }
}

fn axes_arg(a: &Abs) -> Option<Option<Vec<i64>>> {
    match a {
        Abs::None => Some(None),
        Abs::Tuple(items) | Abs::List(items) => Some(Some(
            items.iter().map(Abs::as_i64).collect::<Option<Vec<_>>>()?,
        )),
        other => other.as_i64().map(|i| Some(vec![i])),
    }
}

pub(crate) fn normalize_axis(axis: i64, ndim: usize) -> Result<usize, RuleError> {
    let n = ndim as i64;
    let a = if axis < 0 { axis + n } else { axis };
    if a < 0 || a >= n.max(1) && !(n == 0 && (axis == 0 || axis == -1)) {
        return Err(err(format!(
            "axis {axis} is out of bounds for array of dimension {ndim}"
        )));
    }
    Ok(a as usize)
}

pub(crate) fn reduce(p: Prim, args: &[Abs]) -> Rule {
    let t = match &args[0] {
        Abs::Tensor(t) => t.clone(),
        Abs::Any => return Ok(Abs::Any),
        // `ops.sum(3)`: TypeError at run time.
        _ => return Ok(Abs::Bottom),
    };
    let op = match p {
        Prim::ReduceSum => ReduceOp::Sum,
        Prim::ReduceMean => ReduceOp::Mean,
        Prim::ReduceMax => ReduceOp::Max,
        Prim::ReduceMin => ReduceOp::Min,
        _ => ReduceOp::Prod,
    };
    let dtype = reduce_result_dtype(op, t.dtype);
    let (Some(axes), Some(keep)) = (
        axes_arg(&args[1]),
        args[2].as_bool().or(match &args[2] {
            Abs::Int(Some(i)) => Some(*i != 0),
            _ => None,
        }),
    ) else {
        return Ok(Abs::Any);
    };
    let ndim = t.shape.len();
    let axes: Vec<usize> = match axes {
        None => (0..ndim).collect(),
        Some(list) => {
            let mut v = Vec::new();
            for a in list {
                let a = normalize_axis(a, ndim)?;
                if v.contains(&a) {
                    return Err(err("duplicate value in 'axis'"));
                }
                v.push(a);
            }
            v
        }
    };
    if matches!(op, ReduceOp::Max | ReduceOp::Min) {
        for &a in &axes {
            if t.shape.get(a) == Some(&Some(0)) {
                let name = if op == ReduceOp::Max {
                    "maximum"
                } else {
                    "minimum"
                };
                return Err(err(format!(
                    "zero-size array to reduction operation {name} which has no identity"
                )));
            }
        }
    }
    let shape = t
        .shape
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| {
            if axes.contains(&i) {
                keep.then_some(Some(1))
            } else {
                Some(d)
            }
        })
        .collect();
    Ok(tensor_abs(dtype, shape))
}

fn reshape(t: &TensorAbs, spec: &Abs) -> Rule {
    let dims: Vec<i64> = match spec {
        Abs::Tuple(items) | Abs::List(items) => match items.iter().map(Abs::as_i64).collect() {
            Some(d) => d,
            // Some entries are known only at run time: keep the known sizes, and check that
            // they divide the number of elements (whatever the others are).
            None => {
                let shape: Vec<Option<usize>> = items
                    .iter()
                    .map(|a| a.as_i64().and_then(|d| usize::try_from(d).ok()))
                    .collect();
                let known = shape
                    .iter()
                    .flatten()
                    .try_fold(1usize, |acc, &d| acc.checked_mul(d));
                if let (Some(total), Some(known)) = (t.numel(), known)
                    && known > 0
                    && total % known != 0
                {
                    return Err(err(format!(
                        "cannot reshape array of size {total} into shape {}",
                        compact_shape(&shape)
                    )));
                }
                return Ok(tensor_abs(t.dtype, shape));
            }
        },
        other => match other.as_i64() {
            Some(d) => vec![d],
            None => return Ok(tensor_abs(t.dtype, vec![None])),
        },
    };
    let Some(total) = t.numel() else {
        let shape = dims
            .iter()
            .map(|&d| (d >= 0).then_some(d as usize))
            .collect();
        return Ok(tensor_abs(t.dtype, shape));
    };
    resolve_reshape(total, &dims)
        .map(|shape| tensor_abs(t.dtype, shape.into_iter().map(Some).collect()))
}

/// The shape `reshape` gives `total` elements for the requested `dims` (at most one negative,
/// unknown entry), with the tensor library's rule and messages (numpy's).
fn resolve_reshape(total: usize, dims: &[i64]) -> Result<Vec<usize>, RuleError> {
    anfora_tensor::resolve_reshape(total, dims).map_err(from_tensor_error)
}

fn transpose(t: &TensorAbs, axes: &Abs) -> Rule {
    let ndim = t.shape.len();
    let perm: Vec<usize> = match axes_arg(axes) {
        Some(None) => (0..ndim).rev().collect(),
        Some(Some(list)) => {
            if list.len() != ndim {
                return Err(err("axes don't match array"));
            }
            let mut perm = Vec::new();
            for a in list {
                let a = normalize_axis(a, ndim)?;
                if perm.contains(&a) {
                    return Err(err("repeated axis in transpose"));
                }
                perm.push(a);
            }
            perm
        }
        None => return Ok(tensor_abs(t.dtype, vec![None; ndim])),
    };
    Ok(tensor_abs(
        t.dtype,
        perm.iter().map(|&i| t.shape[i]).collect(),
    ))
}

fn creation(p: Prim, args: &[Abs]) -> Rule {
    let t = match p {
        Prim::Zeros | Prim::Ones => {
            let Some(shape) = shape_arg(&args[0]) else {
                return Ok(Abs::Bottom);
            };
            let Some(d) = dtype_arg(&args[1], DType::F32) else {
                return Ok(Abs::Any);
            };
            tensor_abs(d, shape)
        }
        Prim::Full => {
            let Some(shape) = shape_arg(&args[0]) else {
                return Ok(Abs::Bottom);
            };
            // The fill value is a Python scalar (a 0-d tensor becomes one): its kind picks the
            // default dtype.
            let default = match &args[1] {
                Abs::Bool(_) => DType::Bool,
                Abs::Int(_) => DType::I64,
                Abs::Float(_) => DType::F32,
                Abs::Tensor(t) if t.shape.is_empty() => match t.dtype {
                    DType::Bool => DType::Bool,
                    DType::I32 | DType::I64 => DType::I64,
                    DType::F32 | DType::F64 | DType::F16 | DType::BF16 => DType::F32,
                },
                Abs::Any => return Ok(Abs::Any),
                // ops.full() fill_value must be a number: TypeError at run time.
                _ => return Ok(Abs::Bottom),
            };
            let Some(d) = dtype_arg(&args[2], default) else {
                return Ok(Abs::Any);
            };
            tensor_abs(d, shape)
        }
        Prim::Arange => {
            let all_int = args[..3]
                .iter()
                .all(|a| matches!(a, Abs::Int(_) | Abs::Bool(_) | Abs::None));
            let default = if all_int { DType::I64 } else { DType::F32 };
            let Some(d) = dtype_arg(&args[3], default) else {
                return Ok(Abs::Any);
            };
            tensor_abs(d, vec![None])
        }
        Prim::ZerosLike | Prim::OnesLike => match &args[0] {
            Abs::Tensor(x) => {
                let Some(d) = dtype_arg(&args[1], x.dtype) else {
                    return Ok(Abs::Any);
                };
                tensor_abs(d, x.shape.clone())
            }
            Abs::Any => return Ok(Abs::Any),
            _ => return Ok(Abs::Bottom),
        },
        // ops.tensor(data): the shape comes from the data.
        _ => match &args[0] {
            Abs::Tensor(x) => match dtype_arg(&args[1], x.dtype) {
                Some(d) => tensor_abs(d, x.shape.clone()),
                None => return Ok(Abs::Any),
            },
            data => match nested_data(data) {
                Nested::Shape(shape, kind) => {
                    // Float data (or none) defaults to float32, as literals do.
                    let default = match kind {
                        Some(Num::Bool) => DType::Bool,
                        Some(Num::Int) => DType::I64,
                        Some(Num::Float) | None => DType::F32,
                    };
                    match dtype_arg(&args[1], default) {
                        Some(d) => tensor_abs(d, shape.into_iter().map(Some).collect()),
                        None => return Ok(Abs::Any),
                    }
                }
                Nested::Unknown => return Ok(Abs::Any),
                Nested::Invalid => return Ok(Abs::Bottom),
            },
        },
    };
    Ok(t)
}

/// What `ops.tensor` sees in nested tuples and lists of numbers.
enum Nested {
    /// Their shape and the widest kind of number (`None` when there are none).
    Shape(Vec<usize>, Option<Num>),
    /// Something is not known at compile time.
    Unknown,
    /// Not numbers, or ragged: an error at run time.
    Invalid,
}

fn nested_data(a: &Abs) -> Nested {
    fn wider(a: Option<Num>, b: Option<Num>) -> Option<Num> {
        match (a, b) {
            (Some(Num::Float), _) | (_, Some(Num::Float)) => Some(Num::Float),
            (Some(Num::Int), _) | (_, Some(Num::Int)) => Some(Num::Int),
            (Some(Num::Bool), _) | (_, Some(Num::Bool)) => Some(Num::Bool),
            _ => None,
        }
    }
    match a {
        Abs::Bool(_) | Abs::Int(_) | Abs::Float(_) => Nested::Shape(vec![], num(a)),
        Abs::Tensor(t) if t.shape.is_empty() => Nested::Shape(
            vec![],
            Some(match t.dtype {
                DType::Bool => Num::Bool,
                DType::I32 | DType::I64 => Num::Int,
                DType::F32 | DType::F64 | DType::F16 | DType::BF16 => Num::Float,
            }),
        ),
        Abs::Tuple(items) | Abs::List(items) => {
            let mut shape: Option<Vec<usize>> = None;
            let mut kind = None;
            for item in items.iter() {
                match nested_data(item) {
                    Nested::Shape(s, k) => {
                        if shape.as_ref().is_some_and(|prev| *prev != s) {
                            return Nested::Invalid;
                        }
                        shape = Some(s);
                        kind = wider(kind, k);
                    }
                    other => return other,
                }
            }
            let mut full = vec![items.len()];
            full.extend(shape.unwrap_or_default());
            Nested::Shape(full, kind)
        }
        Abs::Any | Abs::Bottom => Nested::Unknown,
        _ => Nested::Invalid,
    }
}

fn where_(args: &[Abs]) -> Rule {
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

fn getattr(obj: &Abs, name: &str) -> Abs {
    match obj {
        Abs::Ref(r) => match name {
            "assign" | "assign_add" | "assign_sub" => {
                let p = match name {
                    "assign" => Prim::Assign,
                    "assign_add" => Prim::AssignAdd,
                    _ => Prim::AssignSub,
                };
                Abs::func(Func::Partial(
                    Arc::new(Func::Prim(p)),
                    Arc::from(vec![obj.clone()]),
                ))
            }
            "name" => Abs::Str(r.param.as_ref().map(|p| Arc::from(p.name()))),
            "requires_grad" => Abs::Bool(r.param.as_ref().map(|p| p.requires_grad())),
            _ => getattr(&r.value(), name),
        },
        Abs::Tensor(t) => match name {
            "shape" => Abs::Tuple(
                t.shape
                    .iter()
                    .map(|d| Abs::Int(d.map(|d| d as i64)))
                    .collect(),
            ),
            "dtype" => Abs::DType(t.dtype),
            "ndim" => Abs::Int(Some(t.shape.len() as i64)),
            "size" => Abs::Int(t.numel().map(|n| n as i64)),
            "T" => tensor_abs(t.dtype, t.shape.iter().rev().copied().collect()),
            other => match Method::from_name(other) {
                Some(m) => Abs::func(Func::Method(
                    m,
                    Arc::new(TensorAbs::new(t.dtype, t.shape.clone())),
                )),
                None => Abs::Bottom,
            },
        },
        Abs::Any => Abs::Any,
        _ => Abs::Bottom,
    }
}

/// The result of a method call on a tensor.
pub fn method(m: Method, t: &Arc<TensorAbs>, args: &[Abs]) -> Rule {
    let this = Abs::Tensor(t.clone());
    match m {
        Method::Sum | Method::Mean | Method::Max | Method::Min | Method::Prod => {
            let p = match m {
                Method::Sum => Prim::ReduceSum,
                Method::Mean => Prim::ReduceMean,
                Method::Max => Prim::ReduceMax,
                Method::Min => Prim::ReduceMin,
                _ => Prim::ReduceProd,
            };
            if args.len() > 2 {
                // TypeError at run time.
                return Ok(Abs::Bottom);
            }
            let axis = args.first().cloned().unwrap_or(Abs::None);
            let keep = args.get(1).cloned().unwrap_or(Abs::Bool(Some(false)));
            reduce(p, &[this, axis, keep])
        }
        Method::Reshape => {
            let spec = match args {
                [one @ (Abs::Tuple(_) | Abs::List(_))] => one.clone(),
                many => Abs::tuple(many.to_vec()),
            };
            reshape(t, &spec)
        }
        // permute() needs the axes: a TypeError at run time.
        Method::Permute if matches!(args, [] | [Abs::None]) => Ok(Abs::Bottom),
        Method::Transpose | Method::Permute => {
            let axes = match args {
                [] | [Abs::None] => Abs::None,
                [one @ (Abs::Tuple(_) | Abs::List(_))] => one.clone(),
                many => Abs::tuple(many.to_vec()),
            };
            transpose(t, &axes)
        }
        Method::Astype => match args {
            // astype() needs a dtype: TypeError at run time.
            [] | [Abs::None] => Ok(Abs::Bottom),
            [d] => Ok(match dtype_arg(d, t.dtype) {
                Some(d) => tensor_abs(d, t.shape.clone()),
                None => Abs::Any,
            }),
            _ => Ok(Abs::Bottom),
        },
        Method::Item if !args.is_empty() => Ok(Abs::Bottom),
        Method::Item => Ok(match t.dtype {
            DType::Bool => Abs::Bool(None),
            DType::I32 | DType::I64 => Abs::Int(None),
            _ => Abs::Float(None),
        }),
    }
}

fn isinstance(obj: &Abs, cls: &Abs) -> Abs {
    let check = |p: Prim| -> Option<bool> {
        Some(match (p, obj) {
            (_, Abs::Any | Abs::Bottom | Abs::Unbound) => return None,
            (Prim::IntType, o) => matches!(o, Abs::Int(_) | Abs::Bool(_)),
            (Prim::FloatType, o) => matches!(o, Abs::Float(_)),
            (Prim::BoolType, o) => matches!(o, Abs::Bool(_)),
            (Prim::StrType, o) => matches!(o, Abs::Str(_)),
            (Prim::TupleType, o) => matches!(o, Abs::Tuple(_)),
            (Prim::ListType, o) => matches!(o, Abs::List(_)),
            (Prim::TensorType, o) => matches!(o, Abs::Tensor(_)),
            _ => return None,
        })
    };
    let classes: Vec<Abs> = match cls {
        Abs::Tuple(items) => items.to_vec(),
        other => vec![other.clone()],
    };
    let mut result = Some(false);
    for c in classes {
        let r = match &c {
            Abs::Func(fs) if fs.len() == 1 => match fs[0] {
                Func::Prim(p) if p.is_type() => check(p),
                _ => return Abs::Bottom,
            },
            _ => return Abs::Bool(None),
        };
        result = match (result, r) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        };
    }
    Abs::Bool(result)
}

/// The abstract result of calling primitive `p` with arguments `args` (already bound to its
/// signature).
pub fn infer_prim(p: Prim, args: &[Abs]) -> Rule {
    // A Parameter passed where a value is expected is read there.
    if args
        .iter()
        .enumerate()
        .any(|(i, a)| matches!(a, Abs::Ref(_)) && !p.takes_ref(i))
    {
        let read: Vec<Abs> = args
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                Abs::Ref(r) if !p.takes_ref(i) => r.value(),
                a => a.clone(),
            })
            .collect();
        return infer_prim(p, &read);
    }
    if args.iter().any(Abs::is_bottom)
        && !matches!(p, Prim::Switch | Prim::MakeTuple | Prim::MakeList)
    {
        return Ok(Abs::Bottom);
    }
    // Tensor rules first: they give compile-time shape errors even for constant tensors.
    let typed = infer_types(p, args)?;
    if p.foldable()
        && !typed.is_bottom()
        && let Some(values) = args.iter().map(to_value).collect::<Option<Vec<_>>>()
    {
        let mut sink = std::io::sink();
        return Ok(match crate::ops::call_prim(p, &values, &mut sink) {
            Ok(v) => from_value(&v),
            // The operation raises: keep it for run time.
            Err(_) => Abs::Bottom,
        });
    }
    Ok(typed)
}

fn infer_types(p: Prim, args: &[Abs]) -> Rule {
    Ok(match p {
        Prim::Switch => match args[0].as_bool() {
            Some(true) => args[1].clone(),
            Some(false) => args[2].clone(),
            None => args[1].join(&args[2]).unwrap_or(Abs::Any),
        },
        Prim::Partial => match &args[0] {
            Abs::Func(fs) if fs.len() == 1 => Abs::func(Func::Partial(
                Arc::new(fs[0].clone()),
                Arc::from(args[1..].to_vec()),
            )),
            _ => Abs::Any,
        },
        Prim::MakeTuple => Abs::tuple(args.to_vec()),
        Prim::MakeList => Abs::List(Arc::from(args.to_vec())),
        Prim::TupleGetItem | Prim::GetItem => getitem(&args[0], &args[1])?,
        Prim::MakeSlice => {
            let part = |a: &Abs| match a {
                Abs::None => Some(None),
                other => other.as_i64().map(Some),
            };
            match (part(&args[0]), part(&args[1]), part(&args[2])) {
                (Some(start), Some(stop), Some(step)) => {
                    Abs::Slice(Some(Slice { start, stop, step }))
                }
                _ => Abs::Slice(None),
            }
        }
        Prim::Truth | Prim::BoolType => truth(&args[0]),
        Prim::Not => match truth(&args[0]) {
            Abs::Bool(b) => Abs::Bool(b.map(|b| !b)),
            other => other,
        },
        Prim::GetAttr => match &args[1] {
            Abs::Str(Some(name)) => getattr(&args[0], name),
            _ => Abs::Any,
        },
        Prim::CheckBound => match &args[0] {
            Abs::Unbound => Abs::Bottom,
            other => other.clone(),
        },
        Prim::Unpack => match (items(&args[0]), args[1].as_i64()) {
            (Some(xs), Some(n)) if xs.len() as i64 == n => Abs::tuple(xs),
            (Some(_), Some(_)) => Abs::Bottom,
            (None, Some(n))
                if matches!(
                    args[0],
                    Abs::Any
                        | Abs::Tuple(_)
                        | Abs::List(_)
                        | Abs::Str(_)
                        | Abs::Range(_)
                        | Abs::Tensor(_)
                ) =>
            {
                let e = element(&args[0]);
                Abs::tuple(vec![e; n.max(0) as usize])
            }
            _ => Abs::Bottom,
        },
        Prim::Raise => Abs::Bottom,
        Prim::Assert | Prim::Print => Abs::None,
        Prim::Enumerate => match items(&args[0]) {
            Some(xs) => Abs::tuple(
                xs.into_iter()
                    .enumerate()
                    .map(|(i, x)| {
                        Abs::tuple(vec![Abs::Int(args[1].as_i64().map(|s| s + i as i64)), x])
                    })
                    .collect(),
            ),
            None => Abs::Any,
        },
        Prim::Zip => match args.iter().map(items).collect::<Option<Vec<_>>>() {
            Some(lists) => {
                let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
                Abs::tuple(
                    (0..n)
                        .map(|k| Abs::tuple(lists.iter().map(|l| l[k].clone()).collect()))
                        .collect(),
                )
            }
            None => Abs::Any,
        },
        Prim::IterLen | Prim::Len => length(&args[0]),
        Prim::Add
        | Prim::Sub
        | Prim::Mul
        | Prim::Div
        | Prim::FloorDiv
        | Prim::Mod
        | Prim::Pow
        | Prim::MatMul
        | Prim::LShift
        | Prim::RShift
        | Prim::BitAnd
        | Prim::BitOr
        | Prim::BitXor
        | Prim::InplaceAdd
        | Prim::InplaceMul
        | Prim::Eq
        | Prim::Ne
        | Prim::Lt
        | Prim::Le
        | Prim::Gt
        | Prim::Ge
        | Prim::Divmod => binary(p, &args[0], &args[1])?,
        Prim::Maximum | Prim::Minimum => binary(p, &args[0], &args[1])?,
        Prim::Neg
        | Prim::Pos
        | Prim::Invert
        | Prim::Abs
        | Prim::Exp
        | Prim::Log
        | Prim::Sqrt
        | Prim::Tanh
        | Prim::Sin
        | Prim::Cos
        | Prim::Sigmoid
        | Prim::Relu
        | Prim::LogicalNot
        | Prim::Log1p
        | Prim::Expm1
        | Prim::Erf
        | Prim::Gelu
        | Prim::Silu
        | Prim::Softplus
        | Prim::Rsqrt
        | Prim::Sign => unary(p, &args[0])?,
        Prim::Clip | Prim::ClipGrad => crate::nn_rules::clip(p, args)?,
        Prim::ArgMax
        | Prim::ArgMin
        | Prim::OneHot
        | Prim::Squeeze
        | Prim::ExpandDims
        | Prim::BroadcastTo
        | Prim::Concat
        | Prim::Stack
        | Prim::Split
        | Prim::ConcatGrad
        | Prim::StackGrad
        | Prim::Take
        | Prim::TakeGrad
        | Prim::Pad
        | Prim::PadGrad
        | Prim::ReflectionPad2D
        | Prim::ReplicationPad2D
        | Prim::ZeroPad2D
        | Prim::Pad2DGrad
        | Prim::IndexSelect => crate::array_rules::infer(p, args)?,
        Prim::Is | Prim::IsNot => {
            let same = match (&args[0], &args[1]) {
                (Abs::None, Abs::None) => Some(true),
                (Abs::Bool(Some(a)), Abs::Bool(Some(b))) => Some(a == b),
                (Abs::Any | Abs::Bool(None), _) | (_, Abs::Any | Abs::Bool(None)) => None,
                _ => Some(false),
            };
            Abs::Bool(same.map(|s| s == (p == Prim::Is)))
        }
        Prim::In | Prim::NotIn => Abs::Bool(None),
        Prim::IntType => match &args[0] {
            Abs::Int(_) | Abs::Bool(_) | Abs::Float(_) | Abs::Str(_) | Abs::Tensor(_) => {
                Abs::Int(None)
            }
            Abs::Any => Abs::Any,
            _ => Abs::Bottom,
        },
        Prim::FloatType => match &args[0] {
            Abs::Int(_) | Abs::Bool(_) | Abs::Float(_) | Abs::Str(_) | Abs::Tensor(_) => {
                Abs::Float(None)
            }
            Abs::Any => Abs::Any,
            _ => Abs::Bottom,
        },
        Prim::StrType | Prim::Repr => Abs::Str(None),
        Prim::TupleType => match items(&args[0]) {
            Some(xs) => Abs::tuple(xs),
            None => Abs::Any,
        },
        Prim::ListType => match items(&args[0]) {
            Some(xs) => Abs::List(Arc::from(xs)),
            None => Abs::Any,
        },
        Prim::Range => {
            if args.iter().all(|a| matches!(a, Abs::Int(_) | Abs::Bool(_)))
                && (1..=3).contains(&args.len())
            {
                Abs::Range(None)
            } else if args.iter().any(|a| matches!(a, Abs::Any)) {
                Abs::Any
            } else {
                Abs::Bottom
            }
        }
        Prim::IsInstance => isinstance(&args[0], &args[1]),
        Prim::Min | Prim::Max => {
            let candidates = match args {
                [one] => items(one),
                many => Some(many.to_vec()),
            };
            match candidates {
                Some(c) if c.is_empty() => Abs::Bottom,
                Some(c) => c
                    .iter()
                    .try_fold(Abs::Bottom, |acc, x| acc.join(x))
                    .unwrap_or(Abs::Any),
                None => element(&args[0]),
            }
        }
        Prim::Sum => match items(&args[0]) {
            Some(xs) => {
                let mut acc = args[1].clone();
                for x in xs {
                    acc = binary(Prim::Add, &acc, &x)?;
                }
                acc
            }
            None => Abs::Any,
        },
        Prim::Any | Prim::All => Abs::Bool(None),
        Prim::TensorType => Abs::Bottom,
        Prim::Zeros
        | Prim::Ones
        | Prim::Full
        | Prim::Arange
        | Prim::MakeTensor
        | Prim::ZerosLike
        | Prim::OnesLike => creation(p, args)?,
        Prim::Where => where_(args)?,
        Prim::Cast => match (&args[0], &args[1]) {
            // ops.cast() needs a dtype: TypeError at run time.
            (_, Abs::None) => Abs::Bottom,
            (Abs::Tensor(t), d) => match dtype_arg(d, t.dtype) {
                Some(d) => tensor_abs(d, t.shape.clone()),
                None if matches!(d, Abs::Any | Abs::Str(None)) => Abs::Any,
                None => Abs::Bottom,
            },
            (Abs::Any, _) => Abs::Any,
            _ => Abs::Bottom,
        },
        Prim::ReduceSum
        | Prim::ReduceMean
        | Prim::ReduceMax
        | Prim::ReduceMin
        | Prim::ReduceProd => reduce(p, args)?,
        Prim::Reshape => match &args[0] {
            Abs::Tensor(t) => reshape(t, &args[1])?,
            Abs::Any => Abs::Any,
            _ => Abs::Bottom,
        },
        Prim::Transpose => match &args[0] {
            Abs::Tensor(t) => transpose(t, &args[1])?,
            Abs::Any => Abs::Any,
            _ => Abs::Bottom,
        },
        // Transpose with the axes required: None is a TypeError at run time.
        Prim::Permute => match (&args[0], &args[1]) {
            (Abs::Tensor(_), Abs::None) => Abs::Bottom,
            (Abs::Tensor(t), axes) => transpose(t, axes)?,
            (Abs::Any, _) => Abs::Any,
            _ => Abs::Bottom,
        },
        Prim::Conv2D
        | Prim::Conv2DBackpropInput
        | Prim::Conv2DBackpropFilter
        | Prim::MaxPool2D
        | Prim::AvgPool2D
        | Prim::MaxPool2DGrad
        | Prim::MaxPool2DGradGrad
        | Prim::AvgPool2DGrad
        | Prim::Softmax
        | Prim::LogSoftmax
        | Prim::LogSumExp => crate::nn_rules::infer(p, args)?,
        Prim::CallKw => Abs::Any,
        Prim::Load
        | Prim::UpdateState
        | Prim::Depend
        | Prim::MakeParameter
        | Prim::Assign
        | Prim::AssignAdd
        | Prim::AssignSub
        | Prim::ScatterUpdate
        | Prim::ScatterAdd
        | Prim::ScatterNdUpdate
        | Prim::ScatterNdAdd
        | Prim::Sgd
        | Prim::ApplyMomentum
        | Prim::Adam
        | Prim::SetSeed
        | Prim::Uniform
        | Prim::Normal
        | Prim::Randint
        | Prim::Bernoulli
        | Prim::Dropout
        | Prim::DropoutMask
        | Prim::DropoutApply
        | Prim::Custom(_) => crate::effect_rules::infer(p, args)?,
        Prim::Grad
        | Prim::ValueAndGrad
        | Prim::Vjp
        | Prim::Jvp
        | Prim::StopGradient
        | Prim::GradAdd
        | Prim::SumToShape
        | Prim::BroadcastLike
        | Prim::FillZeros
        | Prim::SensOnes
        | Prim::SensCheck
        | Prim::GradTupleAt
        | Prim::IndexGrad
        | Prim::CustomGrad
        | Prim::GradItem
        | Prim::GradHead
        | Prim::GradPad
        | Prim::MatMulGrad
        | Prim::Gemm
        | Prim::ReduceGrad
        | Prim::TransposeGrad => crate::grad_rules::infer(p, args)?,
    })
}

/// Whether evaluating `p` on these arguments can raise at run time (operations that cannot
/// may be removed when their result is unused).
pub fn may_raise(p: Prim, args: &[Abs]) -> bool {
    let floats = args.iter().all(|a| matches!(a, Abs::Float(_)));
    let tensors_of = |pred: fn(DType) -> bool| {
        args.iter().all(|a| match a {
            Abs::Tensor(t) => pred(t.dtype),
            Abs::Float(_) => true,
            _ => false,
        })
    };
    match p {
        Prim::MakeTuple
        | Prim::MakeList
        | Prim::Partial
        | Prim::Switch
        | Prim::TupleGetItem
        | Prim::Is
        | Prim::IsNot
        | Prim::Load
        | Prim::UpdateState
        | Prim::Depend
        | Prim::StopGradient => false,
        // Inference checked shapes that are all known; float arithmetic does not raise.
        Prim::Relu
        | Prim::MatMul
        | Prim::MatMulGrad
        | Prim::Gemm
        | Prim::ReduceSum
        | Prim::ReduceMean
        | Prim::ReduceGrad
        | Prim::ZerosLike
        | Prim::OnesLike => !args.iter().all(|a| match a {
            Abs::Tensor(t) => t.dtype.is_float() && t.known_shape().is_some(),
            Abs::Any | Abs::Bottom | Abs::Unbound => false,
            _ => true,
        }),
        Prim::Conv2D
        | Prim::Conv2DBackpropInput
        | Prim::Conv2DBackpropFilter
        | Prim::MaxPool2D
        | Prim::AvgPool2D
        | Prim::MaxPool2DGrad
        | Prim::MaxPool2DGradGrad
        | Prim::AvgPool2DGrad
        | Prim::Softmax
        | Prim::LogSoftmax
        | Prim::LogSumExp => crate::nn_rules::may_raise(args),
        Prim::Eq | Prim::Ne => !args
            .iter()
            .any(|a| matches!(a, Abs::Tensor(_) | Abs::Tuple(_) | Abs::List(_) | Abs::Any)),
        Prim::Add
        | Prim::Sub
        | Prim::Mul
        | Prim::Lt
        | Prim::Le
        | Prim::Gt
        | Prim::Ge
        | Prim::Maximum
        | Prim::Minimum => !(floats || tensors_of(DType::is_float)),
        Prim::Div => !tensors_of(DType::is_float),
        Prim::Neg
        | Prim::Exp
        | Prim::Log
        | Prim::Sqrt
        | Prim::Tanh
        | Prim::Sin
        | Prim::Cos
        | Prim::Sigmoid
        | Prim::Log1p
        | Prim::Expm1
        | Prim::Erf
        | Prim::Silu
        | Prim::Softplus
        | Prim::Rsqrt
        | Prim::Sign => !(floats || tensors_of(DType::is_float)),
        Prim::Gelu => !matches!(
            (&args[0], &args[1]),
            (Abs::Tensor(t), Abs::Bool(Some(_))) if t.dtype.is_float()
        ),
        Prim::Truth | Prim::Not => !args.iter().all(|a| {
            matches!(
                a,
                Abs::Bool(_) | Abs::Int(_) | Abs::Float(_) | Abs::Str(_) | Abs::None
            )
        }),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dtype: DType, shape: &[usize]) -> Abs {
        tensor_abs(dtype, shape.iter().map(|&d| Some(d)).collect())
    }

    #[test]
    fn constants_fold_with_runtime_semantics() {
        assert_eq!(
            infer_prim(Prim::FloorDiv, &[Abs::Int(Some(-7)), Abs::Int(Some(2))]).unwrap(),
            Abs::Int(Some(-4))
        );
        assert_eq!(
            infer_prim(Prim::Div, &[Abs::Int(Some(1)), Abs::Int(Some(0))]).unwrap(),
            Abs::Bottom
        );
        assert_eq!(
            infer_prim(
                Prim::Add,
                &[Abs::Str(Some("a".into())), Abs::Str(Some("b".into()))]
            )
            .unwrap(),
            Abs::Str(Some("ab".into()))
        );
        assert_eq!(
            infer_prim(Prim::Len, &[Abs::tuple(vec![Abs::Any, Abs::Any])]).unwrap(),
            Abs::Int(Some(2))
        );
    }

    #[test]
    fn types_propagate_without_constants() {
        assert_eq!(
            infer_prim(Prim::Add, &[Abs::Int(None), Abs::Float(Some(1.0))]).unwrap(),
            Abs::Float(None)
        );
        assert_eq!(
            infer_prim(Prim::Div, &[Abs::Int(None), Abs::Int(None)]).unwrap(),
            Abs::Float(None)
        );
        assert_eq!(
            infer_prim(Prim::Lt, &[Abs::Int(None), Abs::Int(None)]).unwrap(),
            Abs::Bool(None)
        );
        assert_eq!(
            infer_prim(Prim::Add, &[Abs::Int(None), Abs::Str(None)]).unwrap(),
            Abs::Bottom
        );
    }

    #[test]
    fn tensor_shapes_and_dtypes() {
        let r = infer_prim(Prim::Add, &[t(DType::F32, &[2, 3]), t(DType::F32, &[3])]).unwrap();
        assert_eq!(r, t(DType::F32, &[2, 3]));
        let r = infer_prim(Prim::Mul, &[t(DType::I64, &[4]), Abs::Float(None)]).unwrap();
        assert_eq!(r, t(DType::F64, &[4]));
        let r = infer_prim(Prim::Mul, &[t(DType::F32, &[4]), Abs::Float(None)]).unwrap();
        assert_eq!(r, t(DType::F32, &[4]));
        let r = infer_prim(
            Prim::MatMul,
            &[t(DType::F32, &[2, 3]), t(DType::F32, &[3, 5])],
        )
        .unwrap();
        assert_eq!(r, t(DType::F32, &[2, 5]));
        let r = infer_prim(
            Prim::ReduceSum,
            &[
                t(DType::I32, &[2, 3]),
                Abs::Int(Some(-1)),
                Abs::Bool(Some(true)),
            ],
        )
        .unwrap();
        assert_eq!(r, t(DType::I64, &[2, 1]));
    }

    #[test]
    fn shape_errors_are_compile_errors() {
        let e = infer_prim(
            Prim::MatMul,
            &[t(DType::F32, &[3, 4]), t(DType::F32, &[5, 6])],
        )
        .unwrap_err();
        assert_eq!(
            e.0,
            "matmul: shapes (3, 4) and (5, 6) do not align (4 != 5)"
        );
        let e = infer_prim(Prim::Add, &[t(DType::F32, &[2, 3]), t(DType::F32, &[4])]).unwrap_err();
        assert_eq!(
            e.0,
            "operands could not be broadcast together with shapes (2,3) (4,) "
        );
        let e = infer_prim(
            Prim::Reshape,
            &[t(DType::F32, &[2, 3]), Abs::tuple(vec![Abs::Int(Some(4))])],
        )
        .unwrap_err();
        assert_eq!(e.0, "cannot reshape array of size 6 into shape (4,)");
    }

    #[test]
    fn truth_of_tensors_needs_one_element() {
        assert_eq!(
            infer_prim(Prim::Truth, &[t(DType::F32, &[1])]).unwrap(),
            Abs::Bool(None)
        );
        assert_eq!(
            infer_prim(Prim::Truth, &[t(DType::F32, &[3])]).unwrap(),
            Abs::Bottom
        );
    }
}

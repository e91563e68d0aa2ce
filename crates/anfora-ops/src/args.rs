//! Argument checking shared by the families: what a runtime value or an abstract value must be
//! to be a tensor, a dtype, an axis or a shape argument, with numpy's messages.

use anfora_tensor::{
    DType, ReduceOp, Scalar, Tensor, UnaryOp, broadcast_shapes, unary_result_dtype,
};

use crate::abs::{Abs, Func, Rule, RuleError, TensorAbs, err, from_tensor_error, shape_text};
use crate::prim::Prim;
use crate::pynum::{PyErr, tensor as t, type_error, value_error};
use crate::value::{Value, repr};

pub fn need_tensor<'a>(v: &'a Value, func: &str) -> Result<&'a Tensor, PyErr> {
    match v {
        Value::Tensor(t) => Ok(t),
        other => Err(type_error(format!(
            "{func}() expects a Tensor, got {}",
            other.type_name()
        ))),
    }
}

/// A dtype argument: `None` (default), a dtype, or its name.
pub fn dtype_arg(v: &Value, default: Option<DType>) -> Result<Option<DType>, PyErr> {
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
pub fn int_arg(v: &Value) -> Result<i64, PyErr> {
    v.as_index().ok_or_else(|| {
        type_error(format!(
            "'{}' object cannot be interpreted as an integer",
            v.type_name()
        ))
    })
}

/// An int or a tuple/list of ints.
pub fn int_list(v: &Value) -> Result<Vec<i64>, PyErr> {
    match v {
        Value::Tuple(items) | Value::List(items) => items.iter().map(int_arg).collect(),
        other => Ok(vec![int_arg(other)?]),
    }
}

pub fn shape_arg(v: &Value) -> Result<Vec<usize>, PyErr> {
    let dims = int_list(v)?;
    if dims.iter().any(|d| *d < 0) {
        return Err(value_error("negative dimensions are not allowed"));
    }
    Ok(dims.into_iter().map(|d| d as usize).collect())
}

/// An axis argument: `None`, an int, or a tuple/list of ints.
pub fn axes_arg(v: &Value) -> Result<Option<Vec<i64>>, PyErr> {
    Ok(match v {
        Value::None => None,
        Value::Tuple(items) | Value::List(items) => {
            Some(items.iter().map(int_arg).collect::<Result<_, _>>()?)
        }
        other => Some(vec![int_arg(other)?]),
    })
}

// ---- abstract values ----------------------------------------------------------------------

pub fn tensor_abs(dtype: DType, shape: Vec<Option<usize>>) -> Abs {
    Abs::tensor(TensorAbs::new(dtype, shape))
}

pub fn shape_str(shape: &[Option<usize>]) -> String {
    shape_text(shape, "?", ", ")
}

/// A shape as numpy prints it in broadcasting errors, `(2,3)`, with `?` for unknown sizes.
pub fn compact_shape(shape: &[Option<usize>]) -> String {
    shape_text(shape, "?", ",")
}

/// numpy broadcasting over possibly unknown dimensions.
/// numpy's error for operands that do not broadcast together, naming all their shapes (as
/// `where` and `clip` report it), when every shape is known.
pub fn check_broadcast_all(shapes: &[&[Option<usize>]]) -> Result<(), RuleError> {
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

pub fn broadcast(
    a: &[Option<usize>],
    b: &[Option<usize>],
) -> Result<Vec<Option<usize>>, RuleError> {
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

/// A shape argument: an int or a tuple/list of ints (known or not).
pub fn shape_arg_abs(a: &Abs) -> Option<Vec<Option<usize>>> {
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

pub fn dtype_arg_abs(a: &Abs, default: DType) -> Option<DType> {
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

pub fn axes_arg_abs(a: &Abs) -> Option<Option<Vec<i64>>> {
    match a {
        Abs::None => Some(None),
        Abs::Tuple(items) | Abs::List(items) => Some(Some(
            items.iter().map(Abs::as_i64).collect::<Option<Vec<_>>>()?,
        )),
        other => other.as_i64().map(|i| Some(vec![i])),
    }
}

/// The axes `list` of an array of `ndim` dimensions, normalized; `repeated` is the error when
/// one is named twice.
pub fn distinct_axes(list: Vec<i64>, ndim: usize, repeated: &str) -> Result<Vec<usize>, RuleError> {
    let mut axes = Vec::with_capacity(list.len());
    for a in list {
        let a = normalize_axis(a, ndim)?;
        if axes.contains(&a) {
            return Err(err(repeated));
        }
        axes.push(a);
    }
    Ok(axes)
}

pub fn normalize_axis(axis: i64, ndim: usize) -> Result<usize, RuleError> {
    let n = ndim as i64;
    let a = if axis < 0 { axis + n } else { axis };
    if a < 0 || a >= n.max(1) && !(n == 0 && (axis == 0 || axis == -1)) {
        return Err(err(format!(
            "axis {axis} is out of bounds for array of dimension {ndim}"
        )));
    }
    Ok(a as usize)
}

/// A representative Python scalar of a number abstract (for dtype rules, which depend only on
/// the kind of the scalar).
pub fn scalar_of(a: &Abs) -> Option<Scalar> {
    Some(match a {
        Abs::Bool(b) => Scalar::Bool(b.unwrap_or(false)),
        Abs::Int(i) => Scalar::Int(i.unwrap_or(0)),
        Abs::Float(f) => Scalar::Float(f.unwrap_or(0.0)),
        _ => return None,
    })
}

/// Sensitivity `d` as a tensor: itself, or a number filled into `shape` and `dtype`; `None`
/// when it is neither.
pub fn sens_tensor(
    d: &Value,
    shape: &[usize],
    dtype: DType,
) -> Result<Option<Tensor>, crate::pynum::PyErr> {
    Ok(match d {
        Value::Tensor(dt) => Some(dt.clone()),
        v => match v.as_scalar() {
            Some(s) => Some(t(Tensor::full(shape, s, dtype))?),
            None => None,
        },
    })
}

pub fn reshaped(x: &Tensor, shape: &[usize]) -> Result<Tensor, crate::pynum::PyErr> {
    let s: Vec<i64> = shape.iter().map(|&n| n as i64).collect();
    t(x.reshape(&s))
}

/// Sums `d` over the dimensions that broadcasting to its shape added to `shape`, then casts.
pub fn reduce_to(d: &Tensor, shape: &[usize], dtype: DType) -> Result<Tensor, crate::pynum::PyErr> {
    let mut r = d.clone();
    if r.shape() != shape {
        let lead = r.ndim().saturating_sub(shape.len());
        let mut axes: Vec<i64> = (0..lead as i64).collect();
        for (i, &s) in shape.iter().enumerate() {
            if s == 1 && r.shape().get(lead + i).is_some_and(|&n| n != 1) {
                axes.push((lead + i) as i64);
            }
        }
        if !axes.is_empty() {
            r = t(Tensor::reduce(ReduceOp::Sum, &r, Some(&axes), true))?;
        }
        let target: Vec<i64> = shape.iter().map(|&n| n as i64).collect();
        r = t(r.reshape(&target))?;
    }
    if r.dtype() != dtype {
        r = r.cast(dtype);
    }
    Ok(r)
}

pub fn swap_last(x: &Tensor) -> Result<Tensor, crate::pynum::PyErr> {
    let n = x.ndim() as i64;
    let mut axes: Vec<i64> = (0..n).collect();
    axes.swap((n - 1) as usize, (n - 2) as usize);
    t(x.transpose(Some(&axes)))
}

/// The tensor argument, or what the rule returns without one.
/// `f` of a tensor argument; unknown for `Any`, and `Bottom` (a TypeError at run time) for
/// anything else.
pub fn on_tensor(a: &Abs, f: impl FnOnce(&TensorAbs) -> Rule) -> Rule {
    match a {
        Abs::Tensor(t) => f(t),
        Abs::Any => Ok(Abs::Any),
        _ => Ok(Abs::Bottom),
    }
}

/// The tensor operand `$a` of an abstract rule, or, when it is not a tensor, the rule's result
/// (`Any` when unknown, else `Bottom`: a TypeError at run time) returned at once.
macro_rules! tensor_operand {
    ($a:expr) => {
        match $crate::args::tensor_arg_abs($a) {
            Ok(x) => x,
            Err(r) => return Ok(r),
        }
    };
}
pub(crate) use tensor_operand;

pub fn tensor_arg_abs(a: &Abs) -> Result<&TensorAbs, Abs> {
    match a {
        Abs::Tensor(t) => Ok(t),
        Abs::Any => Err(Abs::Any),
        // A TypeError at run time.
        _ => Err(Abs::Bottom),
    }
}

pub fn reduced_axes(axis: &Value, ndim: usize) -> Result<Vec<usize>, crate::pynum::PyErr> {
    let list: Vec<i64> = match axis {
        Value::None => (0..ndim as i64).collect(),
        Value::Tuple(xs) | Value::List(xs) => {
            xs.iter().map(int_arg).collect::<Result<Vec<_>, _>>()?
        }
        v => vec![int_arg(v)?],
    };
    Ok(list
        .into_iter()
        .map(|a| if a < 0 { a + ndim as i64 } else { a } as usize)
        .collect())
}

/// Shaped like x, in d's dtype.
pub fn shaped_like_x(args: &[Abs]) -> Abs {
    match (&args[0], &args[1]) {
        (Abs::Tensor(d), Abs::Tensor(x)) => tensor_abs(d.dtype, x.shape.clone()),
        (Abs::Any, _) | (_, Abs::Any) => Abs::Any,
        _ => Abs::Bottom,
    }
}

/// The tensor a unary elementwise function `op` gives for `t`.
pub fn unary_tensor_abs(op: UnaryOp, t: &TensorAbs) -> Rule {
    let d = unary_result_dtype(op, t.dtype).map_err(from_tensor_error)?;
    Ok(tensor_abs(d, t.shape.clone()))
}

/// The kind of a Python number.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    Int,
    Float,
}

pub fn kind(a: &Abs) -> Option<Kind> {
    match a {
        Abs::Bool(_) => Some(Kind::Bool),
        Abs::Int(_) => Some(Kind::Int),
        Abs::Float(_) => Some(Kind::Float),
        _ => None,
    }
}

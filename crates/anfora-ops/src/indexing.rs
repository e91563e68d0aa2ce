//! Item assignment and numpy's advanced indexing, shared by the `GetItem`, `SetItem` and
//! `InplaceCast` primitives and their gradients.
//!
//! The IR is pure, so `x[idx] = v` is `x = SetItem(x, idx, v)`: a new value equal to what
//! numpy's (or Python's) assignment leaves in `x`. `x op= v` on a tensor is
//! `x = InplaceCast(x, op(x, v))`: numpy's checks on the output of an in-place ufunc.

use std::rc::Rc;
use std::sync::Arc;

use anfora_tensor::{AdvIndexItem, DType, IndexItem, Nested, Scalar, Tensor};

use crate::abs::{Abs, Rule, TensorAbs, err};
use crate::args::{compact_shape, tensor_abs};
use crate::pynum::{PyErr, tensor, type_error, value_error};
use crate::python::{getitem_abs, index_of, int_index, items, seq_index, slice_indices};
use crate::state::same_kind;
use crate::value::{OpResult, Slice, Value};

const BAD_INDEX: &str = "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) \
                         and integer or boolean arrays are valid indices";

fn index_error(message: impl Into<String>) -> PyErr {
    ("IndexError", message.into())
}

/// The items of a tensor subscript, advanced ones included: `x[i]`, `x[i, 1:3]`, `x[[0, 2]]`,
/// `x[mask]`, `x[..., idx, None]`. A list is an array index (numpy's rule), as is a bool.
pub fn tensor_adv_items(idx: &Value) -> Result<Vec<AdvIndexItem>, PyErr> {
    match idx {
        Value::Tuple(parts) => parts.iter().map(adv_item).collect(),
        other => Ok(vec![adv_item(other)?]),
    }
}

fn adv_item(v: &Value) -> Result<AdvIndexItem, PyErr> {
    Ok(match v {
        Value::Slice(s) => AdvIndexItem::Basic(IndexItem::Slice {
            start: s.start,
            stop: s.stop,
            step: s.step,
        }),
        Value::None => AdvIndexItem::Basic(IndexItem::NewAxis),
        Value::Ellipsis => AdvIndexItem::Basic(IndexItem::Ellipsis),
        Value::Int(i) => AdvIndexItem::Basic(IndexItem::Int(*i)),
        Value::Bool(b) => AdvIndexItem::Array(tensor(Tensor::from_bool(vec![*b], &[]))?),
        Value::Tensor(t) if t.ndim() == 0 && t.dtype().is_int() => {
            AdvIndexItem::Basic(IndexItem::Int(index_of(v).unwrap_or(0)))
        }
        Value::Tensor(t) if t.dtype().is_int() || t.dtype() == DType::Bool => {
            AdvIndexItem::Array(t.clone())
        }
        Value::Tensor(_) => {
            return Err(index_error(
                "arrays used as indices must be of integer (or boolean) type",
            ));
        }
        Value::List(_) => AdvIndexItem::Array(index_array(v)?),
        _ => return Err(index_error(BAD_INDEX)),
    })
}

/// A list used as an index: nested lists of ints (int64) or of bools (a mask).
fn index_array(v: &Value) -> Result<Tensor, PyErr> {
    fn nested(v: &Value) -> Result<Nested, PyErr> {
        crate::deep(|| match v {
            Value::List(items) | Value::Tuple(items) => Ok(Nested::List(
                items.iter().map(nested).collect::<Result<_, _>>()?,
            )),
            Value::Bool(b) => Ok(Nested::Scalar(Scalar::Bool(*b))),
            Value::Int(i) => Ok(Nested::Scalar(Scalar::Int(*i))),
            other => match index_of(other) {
                Some(i) => Ok(Nested::Scalar(Scalar::Int(i))),
                None => Err(index_error(BAD_INDEX)),
            },
        })
    }
    let data = nested(v)?;
    let t = tensor(Tensor::from_nested(&data, None))?;
    // An empty list is an (empty) integer index.
    if t.numel() == 0 && t.dtype() != DType::I64 {
        return tensor(t.try_cast(DType::I64));
    }
    Ok(t)
}

/// A value assigned to tensor items as a tensor: Python numbers and (nested) lists as numpy
/// reads them (floats as float64).
pub fn value_tensor(v: &Value) -> Result<Tensor, PyErr> {
    fn has_float(v: &Value) -> bool {
        match v {
            Value::Float(_) => true,
            Value::Tensor(t) => t.dtype().is_float(),
            Value::List(xs) | Value::Tuple(xs) => xs.iter().any(has_float),
            _ => false,
        }
    }
    fn nested(v: &Value) -> Result<Nested, PyErr> {
        crate::deep(|| match v {
            Value::List(items) | Value::Tuple(items) => Ok(Nested::List(
                items.iter().map(nested).collect::<Result<_, _>>()?,
            )),
            Value::Tensor(t) if t.ndim() == 0 => Ok(Nested::Scalar(tensor(t.item())?)),
            other => other.as_scalar().map(Nested::Scalar).ok_or_else(|| {
                type_error(format!(
                    "a tensor item can only be assigned numbers, tensors or lists of numbers, \
                     not {}",
                    other.type_name()
                ))
            }),
        })
    }
    match v {
        Value::Tensor(t) => Ok(t.clone()),
        Value::Bool(b) => tensor(Tensor::from_bool(vec![*b], &[])),
        Value::Int(i) => tensor(Tensor::from_i64(vec![*i], &[])),
        Value::Float(f) => tensor(Tensor::from_f64(vec![*f], &[])),
        Value::List(_) | Value::Tuple(_) => {
            let dtype = has_float(v).then_some(DType::F64);
            tensor(Tensor::from_nested(&nested(v)?, dtype))
        }
        other => Err(type_error(format!(
            "a tensor item can only be assigned numbers, tensors or lists of numbers, not {}",
            other.type_name()
        ))),
    }
}

/// `obj[index]` of a tensor (a view for basic indices, a copy for advanced ones).
pub fn tensor_getitem(t: &Tensor, idx: &Value) -> OpResult {
    Ok(Value::Tensor(tensor(t.index_adv(&tensor_adv_items(idx)?))?))
}

/// A list index: an int or a slice.
enum ListIndex<'a> {
    At(i64),
    Slice(&'a Slice),
}

/// Python's `xs[index] = value` on a copy of `xs` (`value` is the item, or the items for a
/// slice).
fn list_assign<T: Clone>(
    xs: &[T],
    index: ListIndex,
    value: T,
    values: impl FnOnce() -> Result<Vec<T>, PyErr>,
) -> Result<Vec<T>, PyErr> {
    match index {
        ListIndex::At(i) => {
            let j = seq_index(i, xs.len(), "list assignment")?;
            let mut out = xs.to_vec();
            out[j] = value;
            Ok(out)
        }
        ListIndex::Slice(s) => {
            let (start, stop, step, count) = slice_indices(s, xs.len() as i64)?;
            let new = values()?;
            if step == 1 {
                let start = start as usize;
                let stop = (stop.max(start as i64)) as usize;
                let mut out = xs[..start].to_vec();
                out.extend(new);
                out.extend_from_slice(&xs[stop..]);
                return Ok(out);
            }
            if new.len() as i64 != count {
                return Err(value_error(format!(
                    "attempt to assign sequence of size {} to extended slice of size {count}",
                    new.len()
                )));
            }
            let mut out = xs.to_vec();
            for (k, v) in new.into_iter().enumerate() {
                out[(start + k as i64 * step) as usize] = v;
            }
            Ok(out)
        }
    }
}

/// [`setitem`] of an object the caller gives up (the executor's last read of it): a tensor
/// nothing else holds is written in place.
pub fn setitem_owned(obj: Value, idx: &Value, value: &Value) -> OpResult {
    match obj.into_tensor() {
        Ok(t) => {
            let items = tensor_adv_items(idx)?;
            let v = value_tensor(value)?;
            Ok(Value::Tensor(tensor(t.index_assign_owned(&items, &v))?))
        }
        Err(other) => setitem(&other, idx, value),
    }
}

/// `SetItem(obj, index, value)`: what `obj[index] = value` leaves in (a copy of) `obj`.
pub fn setitem(obj: &Value, idx: &Value, value: &Value) -> OpResult {
    match obj {
        Value::Tensor(t) => {
            let items = tensor_adv_items(idx)?;
            let v = value_tensor(value)?;
            Ok(Value::Tensor(tensor(t.index_assign(&items, &v))?))
        }
        Value::List(xs) => {
            let index = match idx {
                Value::Slice(s) => ListIndex::Slice(s),
                other => match index_of(other) {
                    Some(i) => ListIndex::At(i),
                    None => {
                        return Err(type_error(format!(
                            "list indices must be integers or slices, not {}",
                            idx.type_name()
                        )));
                    }
                },
            };
            let extended = matches!(&index, ListIndex::Slice(s) if s.step.unwrap_or(1) != 1);
            let out = list_assign(xs, index, value.clone(), || {
                items(value, &|_| {
                    type_error(if extended {
                        "must assign iterable to extended slice"
                    } else {
                        "can only assign an iterable"
                    })
                })
            })?;
            Ok(Value::List(Rc::from(out)))
        }
        other => Err(type_error(format!(
            "'{}' object does not support item assignment",
            other.type_name()
        ))),
    }
}

/// The abstract value of `SetItem(obj, index, value)`.
pub fn setitem_abs(obj: &Abs, idx: &Abs, value: &Abs) -> Rule {
    match obj {
        Abs::Tensor(t) => {
            // Index errors certain at compile time are reported by the read's rule.
            if let Abs::Tensor(sel) = getitem_abs(obj, idx)?
                && let Some(vs) = value_shape(value)
            {
                check_fits(&vs, &sel.shape)?;
            }
            Ok(tensor_abs(t.dtype, t.shape.clone()))
        }
        Abs::List(xs) => {
            let index = match idx {
                Abs::Slice(Some(s)) => ListIndex::Slice(s),
                Abs::Slice(None) | Abs::Any => return Ok(Abs::Any),
                other => match int_index(other) {
                    Some(Some(i)) => ListIndex::At(i),
                    Some(None) => {
                        // Any item may be the one replaced.
                        let joined: Option<Vec<Abs>> =
                            xs.iter().map(|x| x.join(value).ok()).collect();
                        return Ok(joined.map_or(Abs::Any, |j| Abs::List(Arc::from(j))));
                    }
                    None => return Ok(Abs::Bottom),
                },
            };
            let values = || match value {
                Abs::List(v) | Abs::Tuple(v) => Ok(v.to_vec()),
                _ => Err(type_error("unknown")),
            };
            let known_values = matches!(value, Abs::List(_) | Abs::Tuple(_));
            match list_assign(xs, index, value.clone(), values) {
                Ok(out) => Ok(Abs::List(Arc::from(out))),
                Err(_) if !known_values && matches!(idx, Abs::Slice(_)) => Ok(Abs::Any),
                Err(_) => Ok(Abs::Bottom),
            }
        }
        Abs::Any => Ok(Abs::Any),
        _ => Ok(Abs::Bottom),
    }
}

/// The shape of an assigned value, when it is known to be a tensor or a number.
fn value_shape(v: &Abs) -> Option<Vec<Option<usize>>> {
    match v {
        Abs::Tensor(t) => Some(t.shape.clone()),
        Abs::Int(_) | Abs::Float(_) | Abs::Bool(_) => Some(vec![]),
        _ => None,
    }
}

/// numpy's check that an assigned value of shape `value` broadcasts into a selection of
/// shape `sel` (leading length-1 dimensions of the value dropped), where it is certain.
fn check_fits(value: &[Option<usize>], sel: &[Option<usize>]) -> Result<(), crate::abs::RuleError> {
    let mut dims = value;
    while dims.len() > sel.len() && dims[0].is_none_or(|d| d == 1) {
        if dims[0].is_none() {
            return Ok(());
        }
        dims = &dims[1..];
    }
    let certain_misfit = dims.len() > sel.len()
        || dims
            .iter()
            .rev()
            .zip(sel.iter().rev())
            .any(|(v, s)| matches!((v, s), (Some(v), Some(s)) if v != s && *v != 1));
    if certain_misfit {
        return Err(err(format!(
            "could not broadcast input array from shape {} into shape {}",
            compact_shape(value),
            compact_shape(sel)
        )));
    }
    Ok(())
}

fn dtype_repr(d: DType) -> String {
    format!("dtype('{d}')")
}

/// Why an in-place update of a 0-d tensor is refused where numpy's result depends on whether
/// the value is a scalar or a 0-d array.
pub const ZERO_D: &str = "in-place update of a 0-d tensor where numpy's result depends on \
    whether it is a 0-d array (changed in place for every holder, keeping its dtype and shape) \
    or a scalar, as numpy's operations return (only rebound); anfora has no separate scalar type";
pub const ZERO_D_HINT: &str = "write `s = s + v` to bind a new value to this name only";

/// `InplaceCast(old, new)`: the value `old op= v` leaves in `old`, from `new = old op v`.
pub fn inplace_cast(old: &Value, new: &Value) -> OpResult {
    let Value::Tensor(o) = old else {
        return Ok(new.clone());
    };
    let n = value_tensor(new)?;
    if o.ndim() == 0 && (n.ndim() != 0 || n.dtype() != o.dtype()) {
        return Err(("NotImplementedError", ZERO_D.into()));
    }
    if n.shape() != o.shape() {
        return Err(value_error(format!(
            "non-broadcastable output operand with shape {} doesn't match the broadcast shape {}",
            compact_shape(&known(o.shape())),
            compact_shape(&known(n.shape()))
        )));
    }
    if !same_kind(n.dtype(), o.dtype()) {
        return Err(type_error(cast_message(n.dtype(), o.dtype())));
    }
    Ok(Value::Tensor(tensor(n.try_cast(o.dtype()))?))
}

fn cast_message(from: DType, to: DType) -> String {
    format!(
        "Cannot cast ufunc output from {} to {} with casting rule 'same_kind'",
        dtype_repr(from),
        dtype_repr(to)
    )
}

fn known(shape: &[usize]) -> Vec<Option<usize>> {
    shape.iter().map(|&d| Some(d)).collect()
}

/// The abstract value of `InplaceCast(old, new)`.
pub fn inplace_cast_abs(old: &Abs, new: &Abs) -> Rule {
    let o = match old {
        Abs::Tensor(o) => o,
        Abs::Any => return Ok(Abs::Any),
        _ => return Ok(new.clone()),
    };
    let (shape, dtype) = match new {
        Abs::Tensor(n) => (n.shape.clone(), n.dtype),
        Abs::Float(_) => (vec![], DType::F64),
        Abs::Int(_) => (vec![], DType::I64),
        Abs::Bool(_) => (vec![], DType::Bool),
        Abs::Any => return Ok(tensor_abs(o.dtype, o.shape.clone())),
        _ => return Ok(Abs::Bottom),
    };
    if o.shape.is_empty() && (!shape.is_empty() || dtype != o.dtype) {
        return Err(err(ZERO_D));
    }
    let misfit = shape.len() != o.shape.len()
        || shape
            .iter()
            .zip(&o.shape)
            .any(|(a, b)| matches!((a, b), (Some(a), Some(b)) if a != b));
    if misfit {
        return Err(err(format!(
            "non-broadcastable output operand with shape {} doesn't match the broadcast shape {}",
            compact_shape(&o.shape),
            compact_shape(&shape)
        )));
    }
    if !same_kind(dtype, o.dtype) {
        return Err(err(cast_message(dtype, o.dtype)));
    }
    let joined = o.shape.iter().zip(&shape).map(|(a, b)| a.or(*b)).collect();
    Ok(tensor_abs(o.dtype, joined))
}

// ---- advanced indexing on abstract tensors ------------------------------------------------

/// An abstract subscript item of an advanced index.
enum AbsItem {
    Basic(Abs),
    /// An array index: the shape it contributes to the broadcast and the dims it consumes.
    Array(Vec<Option<usize>>, usize),
}

/// Whether an abstract index item makes the index advanced.
pub(crate) fn is_advanced_abs(p: &Abs) -> bool {
    match p {
        Abs::Tensor(t) => !(t.shape.is_empty() && t.dtype.is_int()),
        Abs::List(_) | Abs::Bool(_) => true,
        _ => false,
    }
}

fn abs_item(p: &Abs) -> Result<Option<AbsItem>, crate::abs::RuleError> {
    Ok(Some(match p {
        Abs::Bool(b) => AbsItem::Array(vec![b.map(usize::from)], 0),
        Abs::Tensor(t) if t.dtype == DType::Bool => {
            if t.shape.is_empty() {
                let n = t
                    .value
                    .as_ref()
                    .map(|v| usize::from(v.to_f64_vec()[0] != 0.0));
                AbsItem::Array(vec![n], 0)
            } else {
                let count = t
                    .value
                    .as_ref()
                    .map(|v| v.to_f64_vec().iter().filter(|&&x| x != 0.0).count());
                AbsItem::Array(vec![count], t.shape.len())
            }
        }
        Abs::Tensor(t) if t.dtype.is_int() => AbsItem::Array(t.shape.clone(), 1),
        Abs::Tensor(_) => {
            return Err(err(
                "arrays used as indices must be of integer (or boolean) type",
            ));
        }
        Abs::List(xs) => {
            if xs.iter().all(|x| matches!(x, Abs::Bool(_))) && !xs.is_empty() {
                let count = xs
                    .iter()
                    .map(|x| x.as_bool().map(usize::from))
                    .sum::<Option<usize>>();
                AbsItem::Array(vec![count], 1)
            } else if xs.iter().all(|x| int_index(x).is_some()) {
                AbsItem::Array(vec![Some(xs.len())], 1)
            } else {
                return Ok(None);
            }
        }
        Abs::Int(_) => AbsItem::Array(vec![], 1),
        Abs::Slice(_) | Abs::None | Abs::Ellipsis => AbsItem::Basic(p.clone()),
        _ => return Ok(None),
    }))
}

/// The shape of `t[parts]` when some part is an array index (numpy's advanced indexing).
pub(crate) fn adv_index_abs(t: &TensorAbs, parts: &[Abs]) -> Rule {
    let mut resolved = Vec::with_capacity(parts.len());
    for p in parts {
        match abs_item(p)? {
            Some(item) => resolved.push(item),
            None => return Ok(Abs::Any),
        }
    }
    let ndim = t.shape.len();
    let consumed: usize = resolved
        .iter()
        .map(|i| match i {
            AbsItem::Basic(Abs::Slice(_)) => 1,
            AbsItem::Basic(_) => 0,
            AbsItem::Array(_, c) => *c,
        })
        .sum();
    if consumed > ndim {
        return Err(err(format!(
            "too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed"
        )));
    }
    let mut basic: Vec<Option<usize>> = Vec::new();
    let mut arrays: Vec<Vec<Option<usize>>> = Vec::new();
    let mut first = None;
    let mut last = 0;
    let mut groups = 0usize;
    let mut axis = 0usize;
    for (k, item) in resolved.iter().enumerate() {
        match item {
            AbsItem::Basic(Abs::Slice(s)) => {
                let len = match (s, t.shape[axis]) {
                    (Some(s), Some(n)) => match slice_indices(s, n as i64) {
                        Ok((_, _, _, count)) => Some(count as usize),
                        Err(_) => return Ok(Abs::Bottom),
                    },
                    _ => None,
                };
                basic.push(len);
                axis += 1;
            }
            AbsItem::Basic(Abs::None) => basic.push(Some(1)),
            AbsItem::Basic(_) => {
                // The ellipsis.
                basic.extend_from_slice(&t.shape[axis..axis + ndim - consumed]);
                axis += ndim - consumed;
            }
            AbsItem::Array(shape, c) => {
                if let Abs::Tensor(m) = &parts[k]
                    && m.dtype == DType::Bool
                {
                    for (j, &d) in m.shape.iter().enumerate() {
                        if let (Some(d), Some(n)) = (d, t.shape[axis + j])
                            && d != n
                        {
                            return Err(err(format!(
                                "boolean index did not match indexed array along axis {}; size \
                                 of axis is {n} but size of corresponding boolean axis is {d}",
                                axis + j
                            )));
                        }
                    }
                }
                if first.is_none() {
                    first = Some(basic.len());
                }
                last = k;
                groups += 1;
                arrays.push(shape.clone());
                axis += c;
            }
        }
    }
    basic.extend_from_slice(&t.shape[axis..]);
    let positions: Vec<usize> = resolved
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i, AbsItem::Array(..)))
        .map(|(k, _)| k)
        .collect();
    let adjacent = positions.first().is_none_or(|&p| last - p + 1 == groups);
    let mut block: Vec<Option<usize>> = Vec::new();
    for s in &arrays {
        block = crate::args::broadcast(&block, s).map_err(|_| {
            let listed: String = arrays
                .iter()
                .map(|s| format!("{} ", compact_shape(s)))
                .collect();
            err(format!(
                "shape mismatch: indexing arrays could not be broadcast together with shapes \
                 {listed}"
            ))
        })?;
    }
    let at = if adjacent { first.unwrap_or(0) } else { 0 };
    let mut out = basic[..at].to_vec();
    out.extend(block);
    out.extend_from_slice(&basic[at..]);
    Ok(tensor_abs(t.dtype, out))
}

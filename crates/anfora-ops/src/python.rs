//! Python semantics shared by several families: truthiness, sequences, indexing, iteration,
//! membership and attributes of runtime values, with CPython's error messages; and the same of
//! abstract values, for inference.

use std::rc::Rc;
use std::sync::Arc;

use anfora_tensor::{DType, IndexItem, ReduceOp, Scalar, Tensor};

use crate::abs::{Abs, Func, Rule, RuleError, TensorAbs, err};
use crate::args::{dtype_arg, int_list, tensor_abs};
use crate::prim::Prim;
use crate::pynum::{PyErr, overflow, tensor, type_error, value_error};
use crate::value::{Method, OpResult, PartialApp, Range, Slice, Value};

/// `a op b` for the binary operator `p` (by its declaration, so any family may use it).
pub fn binary(p: Prim, a: &Value, b: &Value) -> OpResult {
    p.eval(&[a.clone(), b.clone()])
}

/// Why a `for` loop cannot run over a dict directly (its items are read by position).
pub(crate) const DICT_ITERATION: &str = "a `for` loop over a dict is not supported in compiled code: loop over d.items(), d.keys() or tuple(d)";

/// The dict methods compiled code has.
const DICT_METHODS: &str = "dicts have `get`, and `items()`, `keys()` and `values()` in a `for` header or inside tuple()/list(); read items with d[k] and test keys with `in`";

/// Largest sequence a single operation may build (repetition, range materialization).
pub(crate) const MAX_ITEMS: i128 = 1 << 28;

/// Python truthiness; a tensor needs exactly one element, as in numpy.
pub fn truth(v: &Value) -> Result<bool, PyErr> {
    Ok(match v {
        Value::None => false,
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::Float(f) => *f != 0.0,
        Value::Str(s) => !s.is_empty(),
        Value::Tuple(t) | Value::List(t) => !t.is_empty(),
        Value::Dict(d) => !d.items.is_empty(),
        Value::Tensor(t) => tensor(t.truth())?,
        Value::Range(r) => !r.is_empty(),
        _ => true,
    })
}

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

pub(crate) fn take_slice<T: Clone>(items: &[T], s: &Slice) -> Result<Vec<T>, PyErr> {
    let (start, _, step, n) = slice_indices(s, items.len() as i64)?;
    Ok((0..n)
        .map(|k| items[(start + k * step) as usize].clone())
        .collect())
}

pub(crate) fn seq_index(i: i64, len: usize, what: &str) -> Result<usize, PyErr> {
    let len = len as i64;
    let j = if i < 0 { i + len } else { i };
    if j < 0 || j >= len {
        return Err(("IndexError", format!("{what} index out of range")));
    }
    Ok(j as usize)
}

pub(crate) fn index_of(v: &Value) -> Option<i64> {
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

pub(crate) fn tensor_index_item(v: &Value) -> Result<IndexItem, PyErr> {
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
        Value::Tensor(t) => crate::indexing::tensor_getitem(t, idx),
        Value::Dict(d) => match idx {
            Value::Str(k) => d
                .get(k)
                .cloned()
                .ok_or_else(|| ("KeyError", crate::value::repr(idx))),
            _ => Err(("KeyError", crate::value::repr(idx))),
        },
        _ => Err(type_error(format!(
            "'{}' object is not subscriptable",
            obj.type_name()
        ))),
    }
}

pub(crate) fn range_len(r: &Range) -> Result<i64, PyErr> {
    i64::try_from(r.len()).map_err(|_| overflow("len() of range"))
}

/// Length for `len()`.
pub fn len(v: &Value) -> Result<i64, PyErr> {
    Ok(match v {
        Value::Str(s) => s.chars().count() as i64,
        Value::Tuple(t) | Value::List(t) => t.len() as i64,
        Value::Dict(d) => d.items.len() as i64,
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
        Value::Dict(_) => Err(type_error(DICT_ITERATION)),
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
        // Iterating over a dict gives its keys.
        Value::Dict(d) => d.items.iter().map(|(k, _)| Value::Str(k.clone())).collect(),
        Value::Str(s) => s
            .chars()
            .map(|c| Value::str(c.encode_utf8(&mut [0; 4])))
            .collect(),
        Value::Range(r) => {
            let n = r.len();
            if n > MAX_ITEMS {
                return Err(("MemoryError", "range is too large to materialize".into()));
            }
            let mut items = crate::alloc::room("list", n as usize)?;
            items.extend((0..n as i64).map(|i| Value::Int(r.get(i))));
            items
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

pub(crate) fn not_iterable(t: &str) -> PyErr {
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

/// The items of `seq` for `a, *b, c = seq`: at least `n`, else Python's ValueError.
pub fn unpack_at_least(seq: &Value, n: i64) -> OpResult {
    let xs = items(seq, &|t| {
        type_error(format!("cannot unpack non-iterable {t} object"))
    })?;
    let got = xs.len() as i64;
    if got < n {
        return Err(value_error(format!(
            "not enough values to unpack (expected at least {n}, got {got})"
        )));
    }
    Ok(Value::tuple(xs))
}

/// The shape of `x.reshape(...)` or the axes of `x.transpose(...)` / `x.permute(...)`, as
/// the method was called: one tuple or list, or the ints one by one; `None` (no argument, or
/// `None`) is a transpose's reversed axes.
pub fn layout_spec(m: Method, args: &[Value]) -> Result<Option<Vec<i64>>, PyErr> {
    Ok(match args {
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
    })
}

/// `x in container`.
pub fn contains(container: &Value, x: &Value) -> Result<bool, PyErr> {
    match container {
        Value::Tuple(items) | Value::List(items) => {
            for item in items.iter() {
                if same_or_eq(item, x)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Value::Dict(d) => Ok(match x {
            Value::Str(k) => d.get(k).is_some(),
            _ => false,
        }),
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
            let eq = binary(Prim::Eq, &Value::Tensor(t.clone()), x)?;
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

/// Python's `==` as a bool (tensor results must have one element).
pub fn py_eq(a: &Value, b: &Value) -> Result<bool, PyErr> {
    truth(&binary(Prim::Eq, a, b)?)
}

/// How a container compares its items: the same object, or `==` (CPython's
/// `PyObject_RichCompare` after an identity check). Only NaN floats tell the two apart.
pub fn same_or_eq(a: &Value, b: &Value) -> Result<bool, PyErr> {
    if let (Value::Float(x), Value::Float(y)) = (a, b)
        && crate::pynum::same_object(*x, *y)
    {
        return Ok(true);
    }
    py_eq(a, b)
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
            (None, "name") => Ok(Value::str(&r.name())),
            (None, "requires_grad") => Ok(Value::Bool(r.requires_grad())),
            (None, _) => getattr(&Value::Tensor(r.get()), name),
        };
    }
    if let Value::Dict(_) = obj {
        return match name {
            "get" => Ok(Value::Partial(Rc::new(PartialApp {
                func: Value::Prim(Prim::DictGet),
                args: vec![obj.clone()],
            }))),
            _ => Err((
                "AttributeError",
                format!(
                    "'dict' object has no attribute '{name}' in compiled code ({DICT_METHODS})"
                ),
            )),
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
            let prim = m.reduction().expect("a reduction method");
            let sig = prim.signature();
            let names: Vec<&str> = kwargs.iter().map(|(k, _)| k.as_str()).collect();
            let mut positional = vec![this];
            positional.extend(args);
            let values: Vec<Value> = kwargs.iter().map(|(_, v)| v.clone()).collect();
            let full = sig
                .bind_args(
                    &positional,
                    (&names, &values),
                    |c| crate::value::from_const(c, &mut |_| Value::None),
                    Value::tuple,
                    // Primitives take no `**kwargs`.
                    |_| Value::None,
                )
                .map_err(|e| type_error(e.message(&format!("Tensor.{}", m.name()))))?;
            prim.eval(&full)
        }
        Method::Reshape | Method::Transpose | Method::Permute => {
            no_kwargs(&kwargs)?;
            let spec = layout_spec(m, &args)?;
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

// ---- abstract values ----------------------------------------------------------------------

/// Python truthiness as a bool abstract.
pub fn truth_abs(a: &Abs) -> Abs {
    match a {
        Abs::None => Abs::Bool(Some(false)),
        Abs::Tuple(t) | Abs::List(t) => Abs::Bool(Some(!t.is_empty())),
        Abs::Dict(d) => Abs::Bool(Some(!d.is_empty())),
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
pub fn items_abs(a: &Abs) -> Option<Vec<Abs>> {
    match a {
        Abs::Tuple(t) | Abs::List(t) => Some(t.to_vec()),
        Abs::Dict(d) => Some(d.iter().map(|(k, _)| Abs::Str(Some(k.clone()))).collect()),
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
pub fn element_abs(a: &Abs) -> Abs {
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

pub fn length_abs(a: &Abs) -> Abs {
    match a {
        Abs::Tuple(t) | Abs::List(t) => Abs::Int(Some(t.len() as i64)),
        Abs::Dict(d) => Abs::Int(Some(d.len() as i64)),
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
pub(crate) fn int_index(a: &Abs) -> Option<Option<i64>> {
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

pub fn getitem_abs(obj: &Abs, idx: &Abs) -> Rule {
    // A 0-d integer tensor indexes sequences as an int.
    if !matches!(obj, Abs::Tensor(_))
        && matches!(idx, Abs::Tensor(_))
        && let Some(i) = int_index(idx)
    {
        return getitem_abs(obj, &Abs::Int(i));
    }
    if let Abs::Dict(d) = obj {
        return dict_item_abs(d, idx);
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
            Abs::Int(None) | Abs::Bool(None) | Abs::Any => element_abs(obj),
            Abs::Slice(Some(s)) => {
                let (start, _, step, count) = match slice_indices(s, items.len() as i64) {
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
pub(crate) fn tensor_index(t: &TensorAbs, idx: &Abs) -> Rule {
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
    if parts.iter().any(crate::indexing::is_advanced_abs) {
        return crate::indexing::adv_index_abs(t, &parts);
    }
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
                    (Some(s), Some(n)) => match slice_indices(s, n as i64) {
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

/// `d[key]` of a dict: the key must be known at compile time (a dict's keys are).
fn dict_item_abs(d: &[(Arc<str>, Abs)], key: &Abs) -> Rule {
    // A key the dict lacks: KeyError at run time.
    Ok(dict_lookup_abs(d, key)?.unwrap_or(Abs::Bottom))
}

/// What a dict holds at `key`, `None` where it holds nothing there (only string keys exist);
/// an error where the key is a string not known at compile time. `d[k]` and `d.get(k)` both
/// read a dict's items through it.
pub(crate) fn dict_lookup_abs(d: &[(Arc<str>, Abs)], key: &Abs) -> Result<Option<Abs>, RuleError> {
    match key {
        Abs::Str(Some(k)) => Ok(d.iter().find(|(name, _)| name == k).map(|(_, a)| a.clone())),
        Abs::Str(None) => Err(err(
            "a dict's key must be known at compile time (a string constant, or a variable that holds one)",
        )),
        _ => Ok(None),
    }
}

/// The rule of `IterLen`: a `for` loop's trip count.
pub fn iter_len_abs(a: &Abs) -> Rule {
    match a {
        Abs::Dict(_) => Err(err(DICT_ITERATION)),
        other => Ok(length_abs(other)),
    }
}

pub fn getattr_abs(obj: &Abs, name: &str) -> Abs {
    match obj {
        Abs::Dict(_) if name == "get" => Abs::func(Func::Partial(
            Arc::new(Func::Prim(Prim::DictGet)),
            Arc::from(vec![obj.clone()]),
        )),
        Abs::Dict(_) => Abs::Bottom,
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
            "name" => Abs::Str(r.param.as_ref().map(|p| p.name())),
            "requires_grad" => Abs::Bool(r.param.as_ref().map(|p| p.requires_grad())),
            _ => getattr_abs(&r.value(), name),
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
pub fn method_abs(m: Method, t: &Arc<TensorAbs>, args: &[Abs]) -> Rule {
    let this = Abs::Tensor(t.clone());
    match m {
        Method::Sum | Method::Mean | Method::Max | Method::Min | Method::Prod => {
            let p = m.reduction().expect("a reduction method");
            if args.len() > 2 {
                // TypeError at run time.
                return Ok(Abs::Bottom);
            }
            let axis = args.first().cloned().unwrap_or(Abs::None);
            let keep = args.get(1).cloned().unwrap_or(Abs::Bool(Some(false)));
            p.infer(&[this, axis, keep])
        }
        Method::Reshape => {
            let spec = match args {
                [one @ (Abs::Tuple(_) | Abs::List(_))] => one.clone(),
                many => Abs::tuple(many.to_vec()),
            };
            Prim::Reshape.infer(&[this, spec])
        }
        // permute() needs the axes: a TypeError at run time.
        Method::Permute if matches!(args, [] | [Abs::None]) => Ok(Abs::Bottom),
        Method::Transpose | Method::Permute => {
            let axes = match args {
                [] | [Abs::None] => Abs::None,
                [one @ (Abs::Tuple(_) | Abs::List(_))] => one.clone(),
                many => Abs::tuple(many.to_vec()),
            };
            Prim::Transpose.infer(&[this, axes])
        }
        Method::Astype => match args {
            // astype() needs a dtype: TypeError at run time.
            [] | [Abs::None] => Ok(Abs::Bottom),
            [d] => Ok(match crate::args::dtype_arg_abs(d, t.dtype) {
                Some(d) => tensor_abs(d, t.shape.clone()),
                None => Abs::Any,
            }),
            _ => Ok(Abs::Bottom),
        },
        Method::Item if !args.is_empty() => Ok(Abs::Bottom),
        Method::Item => Ok(match t.dtype {
            DType::Bool => Abs::Bool(None),
            d if d.is_int() => Abs::Int(None),
            _ => Abs::Float(None),
        }),
    }
}

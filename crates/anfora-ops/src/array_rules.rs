//! Inference rules of numpy's array functions (`ops.argmax`, `ops.one_hot`, `ops.squeeze`,
//! `ops.expand_dims`, `ops.broadcast_to`): dtypes and shapes, and the errors numpy would raise
//! as compile errors when the shapes and arguments are known.

use crate::Prim;
use crate::array_ops::{pad_mode, pad2d_mode, pad2d_widths};
use anfora_tensor::{DType, PadMode, SplitSpec, pad_widths, promote_types, split_bounds};

use crate::abs::{Abs, TensorAbs, shape_text};
use crate::rules::{RuleError, dtype_arg, normalize_axis, shape_arg, tensor_abs, to_value};

type Rule = Result<Abs, RuleError>;

fn err(msg: impl Into<String>) -> RuleError {
    RuleError(msg.into())
}

/// The tensor argument, or what the rule returns without one.
fn tensor_of(a: &Abs) -> Result<&TensorAbs, Abs> {
    match a {
        Abs::Tensor(t) => Ok(t),
        Abs::Any => Err(Abs::Any),
        // A TypeError at run time.
        _ => Err(Abs::Bottom),
    }
}

/// A known axis list (`None` for `None`), or `Err` when some axis is not known.
fn axes(a: &Abs) -> Result<Option<Vec<i64>>, ()> {
    match a {
        Abs::None => Ok(None),
        Abs::Tuple(items) | Abs::List(items) => items
            .iter()
            .map(Abs::as_i64)
            .collect::<Option<Vec<_>>>()
            .map(Some)
            .ok_or(()),
        other => other.as_i64().map(|i| Some(vec![i])).ok_or(()),
    }
}

fn arg_reduce(p: Prim, args: &[Abs]) -> Rule {
    let x = match tensor_of(&args[0]) {
        Ok(x) => x,
        Err(r) => return Ok(r),
    };
    let name = if p == Prim::ArgMax {
        "argmax"
    } else {
        "argmin"
    };
    let (Ok(axis), Some(keep)) = (axes(&args[1]), args[2].as_bool()) else {
        return Ok(Abs::Any);
    };
    let empty = || err(format!("attempt to get {name} of an empty sequence"));
    let shape = match axis.as_deref() {
        None => {
            if x.numel() == Some(0) {
                return Err(empty());
            }
            if keep {
                vec![Some(1); x.shape.len()]
            } else {
                vec![]
            }
        }
        Some(&[a]) => {
            let ax = normalize_axis(a, x.shape.len())?;
            if x.shape[ax] == Some(0) {
                return Err(empty());
            }
            let mut s = x.shape.clone();
            if keep {
                s[ax] = Some(1);
            } else {
                s.remove(ax);
            }
            s
        }
        // A tuple of axes: a TypeError at run time.
        Some(_) => return Ok(Abs::Bottom),
    };
    Ok(tensor_abs(DType::I64, shape))
}

fn one_hot(args: &[Abs]) -> Rule {
    let idx = match tensor_of(&args[0]) {
        Ok(x) => x,
        Err(r) => return Ok(r),
    };
    if !idx.dtype.is_int() {
        return Err(err(format!(
            "one_hot: indices must be an integer tensor, got {}",
            idx.dtype
        )));
    }
    let depth = match &args[1] {
        Abs::Int(Some(d)) if *d < 0 => {
            return Err(err(format!("one_hot: depth must be non-negative, got {d}")));
        }
        Abs::Int(Some(d)) => Some(*d as usize),
        Abs::Bool(Some(b)) => Some(usize::from(*b)),
        Abs::Int(None) | Abs::Bool(None) | Abs::Any => None,
        _ => return Ok(Abs::Bottom),
    };
    let Some(dtype) = dtype_arg(&args[2], DType::F32) else {
        return Ok(Abs::Any);
    };
    let mut shape = idx.shape.clone();
    shape.push(depth);
    Ok(tensor_abs(dtype, shape))
}

fn squeeze(args: &[Abs]) -> Rule {
    let x = match tensor_of(&args[0]) {
        Ok(x) => x,
        Err(r) => return Ok(r),
    };
    let Ok(list) = axes(&args[1]) else {
        return Ok(Abs::Any);
    };
    let drop: Vec<usize> = match list {
        None => {
            if x.shape.contains(&None) {
                // Which axes go depends on sizes known at run time.
                return Ok(Abs::Any);
            }
            (0..x.shape.len())
                .filter(|&i| x.shape[i] == Some(1))
                .collect()
        }
        Some(list) => {
            let mut v = Vec::new();
            for a in list {
                let a = normalize_axis(a, x.shape.len())?;
                if v.contains(&a) {
                    return Err(err("repeated axis"));
                }
                if x.shape[a].is_some_and(|d| d != 1) {
                    return Err(err(
                        "cannot select an axis to squeeze out which has size not equal to one",
                    ));
                }
                v.push(a);
            }
            v
        }
    };
    let shape = (0..x.shape.len())
        .filter(|i| !drop.contains(i))
        .map(|i| x.shape[i])
        .collect();
    Ok(tensor_abs(x.dtype, shape))
}

fn expand_dims(args: &[Abs]) -> Rule {
    let x = match tensor_of(&args[0]) {
        Ok(x) => x,
        Err(r) => return Ok(r),
    };
    let list = match axes(&args[1]) {
        Ok(Some(list)) => list,
        // `None`: a TypeError at run time.
        Ok(None) => return Ok(Abs::Bottom),
        Err(()) => return Ok(Abs::Any),
    };
    let ndim = x.shape.len() + list.len();
    let mut at = Vec::new();
    for a in list {
        let a = normalize_axis(a, ndim)?;
        if at.contains(&a) {
            return Err(err("repeated axis"));
        }
        at.push(a);
    }
    let mut dims = x.shape.iter();
    let shape = (0..ndim)
        .map(|i| {
            if at.contains(&i) {
                Some(1)
            } else {
                dims.next().copied().flatten()
            }
        })
        .collect();
    Ok(tensor_abs(x.dtype, shape))
}

fn broadcast_to(args: &[Abs]) -> Rule {
    let x = match tensor_of(&args[0]) {
        Ok(x) => x,
        Err(r) => return Ok(r),
    };
    let Some(shape) = shape_arg(&args[1]) else {
        return Ok(Abs::Any);
    };
    if x.shape.len() > shape.len() {
        return Err(err(
            "input operand has more dimensions than allowed by the axis remapping",
        ));
    }
    let fits = x
        .shape
        .iter()
        .rev()
        .zip(shape.iter().rev())
        .all(|(a, b)| match (a, b) {
            (Some(a), Some(b)) => a == b || *a == 1,
            _ => true,
        });
    if !fits {
        return Err(err(format!(
            "operands could not be broadcast together with remapped shapes \
             [original->remapped]: {}  and requested shape {}",
            shape_text(&x.shape, "?", ","),
            shape_text(&shape, "?", ",")
        )));
    }
    Ok(tensor_abs(x.dtype, shape))
}

/// The tensors of a tuple or list argument: `Err` with the rule's result when they are not
/// all known tensors.
fn tensors(a: &Abs) -> Result<Vec<TensorAbs>, Abs> {
    let items = match a {
        Abs::Tuple(items) | Abs::List(items) => items,
        Abs::Any => return Err(Abs::Any),
        _ => return Err(Abs::Bottom),
    };
    items
        .iter()
        .map(|t| match t {
            Abs::Tensor(t) => Ok((**t).clone()),
            Abs::Any => Err(Abs::Any),
            _ => Err(Abs::Bottom),
        })
        .collect()
}

/// `ops.concat` (`stack`: `ops.stack`) of tensors with these abstracts along `axis`.
fn join(ts: &[TensorAbs], axis: &Abs, stack: bool) -> Rule {
    let name = if stack { "stack" } else { "concatenate" };
    let Some(first) = ts.first() else {
        return Err(err(format!("need at least one array to {name}")));
    };
    let dtype = ts
        .iter()
        .fold(first.dtype, |d, t| promote_types(d, t.dtype));
    if !stack && matches!(axis, Abs::None) {
        // numpy's concatenate(axis=None): the tensors flattened, joined.
        let total = ts.iter().try_fold(0usize, |n, t| {
            t.shape
                .iter()
                .try_fold(1usize, |m, d| m.checked_mul((*d)?))
                .and_then(|m| n.checked_add(m))
        });
        return Ok(tensor_abs(dtype, vec![total]));
    }
    let Some(axis) = axis.as_i64() else {
        return Ok(Abs::Any);
    };
    let ndim = first.shape.len();
    if stack {
        let same = ts.iter().all(|t| {
            t.shape.len() == ndim
                && t.shape
                    .iter()
                    .zip(&first.shape)
                    .all(|(a, b)| a.is_none() || b.is_none() || a == b)
        });
        if !same {
            return Err(err("all input arrays must have the same shape"));
        }
        let ax = normalize_axis(axis, ndim + 1)?;
        let mut shape = first.shape.clone();
        shape.insert(ax, Some(ts.len()));
        return Ok(tensor_abs(dtype, shape));
    }
    if ndim == 0 {
        return Err(err("zero-dimensional arrays cannot be concatenated"));
    }
    let ax = normalize_axis(axis, ndim)?;
    let mut along = Some(0usize);
    for (i, t) in ts.iter().enumerate() {
        if t.shape.len() != ndim {
            return Err(err(format!(
                "all the input arrays must have same number of dimensions, but the array at \
                 index 0 has {ndim} dimension(s) and the array at index {i} has {} dimension(s)",
                t.shape.len()
            )));
        }
        for d in (0..ndim).filter(|&d| d != ax) {
            if let (Some(a), Some(b)) = (first.shape[d], t.shape[d])
                && a != b
            {
                return Err(err(format!(
                    "all the input array dimensions except for the concatenation axis must \
                     match exactly, but along dimension {d}, the array at index 0 has size {a} \
                     and the array at index {i} has size {b}"
                )));
            }
        }
        along = along.zip(t.shape[ax]).and_then(|(a, b)| a.checked_add(b));
    }
    let mut shape = first.shape.clone();
    shape[ax] = along;
    Ok(tensor_abs(dtype, shape))
}

fn split(args: &[Abs]) -> Rule {
    let x = match tensor_of(&args[0]) {
        Ok(x) => x,
        Err(r) => return Ok(r),
    };
    let spec = match &args[1] {
        Abs::Tuple(items) | Abs::List(items) => {
            match items.iter().map(Abs::as_i64).collect::<Option<Vec<_>>>() {
                Some(ix) => SplitSpec::Indices(ix),
                None => return Ok(Abs::Any),
            }
        }
        other => match other.as_i64() {
            Some(n) => SplitSpec::Sections(n),
            None => return Ok(Abs::Any),
        },
    };
    let Some(axis) = args[2].as_i64() else {
        return Ok(Abs::Any);
    };
    if x.shape.is_empty() {
        return Err(err("array split does not work on 0-d arrays"));
    }
    let ax = normalize_axis(axis, x.shape.len())?;
    let parts: Vec<Option<usize>> = match x.shape[ax] {
        Some(len) => match split_bounds(&spec, len) {
            Ok(bounds) => bounds
                .into_iter()
                .map(|(start, stop)| {
                    let s = crate::value::Slice {
                        start,
                        stop,
                        step: None,
                    };
                    crate::ops::slice_indices(&s, len as i64)
                        .ok()
                        .map(|(_, _, _, count)| count as usize)
                })
                .collect(),
            Err(e) if e.kind == anfora_tensor::ErrorKind::Value => return Err(err(e.message)),
            // Zero sections: a ZeroDivisionError at run time.
            Err(_) => return Ok(Abs::Bottom),
        },
        None => match spec {
            SplitSpec::Sections(n) if n > 0 => vec![None; n as usize],
            SplitSpec::Sections(_) => return Ok(Abs::Bottom),
            SplitSpec::Indices(ix) => vec![None; ix.len() + 1],
        },
    };
    Ok(Abs::tuple(
        parts
            .into_iter()
            .map(|n| {
                let mut s = x.shape.clone();
                s[ax] = n;
                tensor_abs(x.dtype, s)
            })
            .collect(),
    ))
}

/// The shape of `take`'s indices: a tensor's, an int's (`()`), or a flat tuple's.
fn index_shape(a: &Abs) -> Option<Vec<Option<usize>>> {
    match a {
        Abs::Tensor(t) if t.dtype.is_int() || t.dtype == DType::Bool => Some(t.shape.clone()),
        Abs::Int(_) | Abs::Bool(_) => Some(vec![]),
        Abs::Tuple(items) | Abs::List(items)
            if items
                .iter()
                .all(|i| matches!(i, Abs::Int(_) | Abs::Bool(_))) =>
        {
            Some(vec![Some(items.len())])
        }
        _ => None,
    }
}

fn take(args: &[Abs]) -> Rule {
    let x = match tensor_of(&args[0]) {
        Ok(x) => x,
        Err(r) => return Ok(r),
    };
    if let Abs::Tensor(t) = &args[1]
        && t.dtype.is_float()
    {
        return Err(err(format!(
            "Cannot cast array data from dtype('{}') to dtype('int64') according to the rule \
             'same_kind'",
            t.dtype
        )));
    }
    let Some(ishape) = index_shape(&args[1]) else {
        return Ok(Abs::Any);
    };
    let shape = match &args[2] {
        Abs::None => ishape,
        a => match a.as_i64() {
            Some(a) => {
                let ax = normalize_axis(a, x.shape.len())?;
                let mut s = x.shape[..ax].to_vec();
                s.extend(ishape);
                s.extend_from_slice(&x.shape[ax + 1..]);
                s
            }
            None => return Ok(Abs::Any),
        },
    };
    Ok(tensor_abs(x.dtype, shape))
}

/// `pad_width` as nested ints, `None` when not known.
fn pad_rows(a: &Abs) -> Option<Vec<Vec<i64>>> {
    match a {
        Abs::Tuple(items) | Abs::List(items) => {
            if let Some(row) = items.iter().map(Abs::as_i64).collect::<Option<Vec<_>>>() {
                return Some(vec![row]);
            }
            items
                .iter()
                .map(|r| match r {
                    Abs::Tuple(r) | Abs::List(r) => r.iter().map(Abs::as_i64).collect(),
                    other => other.as_i64().map(|i| vec![i]),
                })
                .collect()
        }
        other => other.as_i64().map(|i| vec![vec![i]]),
    }
}

/// numpy's refusal to extend an empty axis in the modes other than 'constant'.
fn extends_empty_axis(
    shape: &[Option<usize>],
    widths: &[[usize; 2]],
    mode: PadMode,
) -> Result<(), RuleError> {
    if mode == PadMode::Constant {
        return Ok(());
    }
    match (0..shape.len()).find(|&d| shape[d] == Some(0) && widths[d] != [0, 0]) {
        Some(axis) => Err(err(format!(
            "can't extend empty axis {axis} using modes other than 'constant' or 'empty'"
        ))),
        None => Ok(()),
    }
}

fn padded(x: &TensorAbs, widths: &[[usize; 2]]) -> Abs {
    let shape = x
        .shape
        .iter()
        .zip(widths)
        .map(|(d, w)| d.and_then(|d| d.checked_add(w[0])?.checked_add(w[1])))
        .collect();
    tensor_abs(x.dtype, shape)
}

/// `ops.pad(x, pad_width, mode, constant_values)`: the errors in the order the VM checks
/// (widths, mode, `constant_values`, an empty axis). The mode is a constant by now (the
/// engine refuses one known only at run time, E0304).
fn pad(args: &[Abs]) -> Rule {
    let x = match tensor_of(&args[0]) {
        Ok(x) => x,
        Err(r) => return Ok(r),
    };
    // Widths known only at run time keep the rank.
    let widths = match pad_rows(&args[1]) {
        Some(rows) => {
            Some(pad_widths(&rows, x.shape.len()).map_err(|e| err(format!("pad: {}", e.message)))?)
        }
        None => None,
    };
    let mode = match to_value(&args[2]) {
        Some(v) => Some(pad_mode(&v).map_err(|e| err(format!("pad: {}", e.1)))?),
        None => None,
    };
    match (mode, &args[3]) {
        (_, Abs::None | Abs::Any) => {}
        (Some(PadMode::Constant) | None, v) => {
            if !(v.is_number() || matches!(v, Abs::Tensor(t) if t.numel() == Some(1))) {
                // A TypeError at run time.
                return Ok(Abs::Bottom);
            }
        }
        (Some(mode), _) => {
            return Err(err(format!(
                "pad: unsupported keyword arguments for mode '{}': {{'constant_values'}}",
                mode.name()
            )));
        }
    }
    let Some(widths) = widths else {
        return Ok(tensor_abs(x.dtype, vec![None; x.shape.len()]));
    };
    if let Some(mode) = mode {
        extends_empty_axis(&x.shape, &widths, mode).map_err(|e| err(format!("pad: {}", e.0)))?;
    }
    Ok(padded(x, &widths))
}

/// `ops.reflection_pad2d`, `ops.replication_pad2d` and `ops.zero_pad2d`, checked by the VM's
/// own function (an unknown size passes the reflection check).
fn pad2d(p: Prim, args: &[Abs]) -> Rule {
    let x = match tensor_of(&args[0]) {
        Ok(x) => x,
        Err(r) => return Ok(r),
    };
    let mode = pad2d_mode(p).expect("a 2-D padding");
    let Some(padding) = to_value(&args[1]) else {
        if !matches!(x.shape.len(), 3 | 4) {
            // Refused at run time, whatever the padding.
            return Ok(Abs::Bottom);
        }
        let mut shape = x.shape.clone();
        let n = shape.len();
        shape[n - 2] = None;
        shape[n - 1] = None;
        return Ok(tensor_abs(x.dtype, shape));
    };
    let sizes: Vec<usize> = x.shape.iter().map(|d| d.unwrap_or(usize::MAX)).collect();
    let widths = match pad2d_widths(&sizes, &padding, mode) {
        Ok(w) => w,
        // The message names the shape: with a size known only at run time, the error is
        // raised then (it does not depend on that size, which passes the reflection check).
        Err((kind, msg)) if kind != "TypeError" && x.shape.iter().all(Option::is_some) => {
            return Err(err(msg));
        }
        Err(_) => return Ok(Abs::Bottom),
    };
    extends_empty_axis(&x.shape, &widths, mode)?;
    Ok(padded(x, &widths))
}

/// `ops.index_select(x, axis, index)`: `take` along `axis` of a 1-D int32 or int64 index.
fn index_select(args: &[Abs]) -> Rule {
    let x = match tensor_of(&args[0]) {
        Ok(x) => x,
        Err(r) => return Ok(r),
    };
    let index = match &args[2] {
        Abs::Tensor(t) => t,
        Abs::Any => return Ok(Abs::Any),
        // A TypeError at run time.
        _ => return Ok(Abs::Bottom),
    };
    if !matches!(index.dtype, DType::I32 | DType::I64) {
        return Ok(Abs::Bottom);
    }
    if index.shape.len() != 1 {
        return Err(err(format!(
            "ops.index_select() expects a 1-D index, got shape {}",
            crate::abs::shape_text(&index.shape, "?", ", ")
        )));
    }
    let axis = match &args[1] {
        Abs::Int(Some(a)) => *a,
        Abs::Bool(Some(b)) => i64::from(*b),
        Abs::Int(None) | Abs::Bool(None) | Abs::Any => {
            return Ok(tensor_abs(x.dtype, vec![None; x.shape.len()]));
        }
        _ => return Ok(Abs::Bottom),
    };
    let ax = normalize_axis(axis, x.shape.len())?;
    let mut shape = x.shape.clone();
    shape[ax] = index.shape[0];
    Ok(tensor_abs(x.dtype, shape))
}

pub(crate) fn infer(p: Prim, args: &[Abs]) -> Rule {
    match p {
        Prim::ArgMax | Prim::ArgMin => arg_reduce(p, args),
        Prim::OneHot => one_hot(args),
        Prim::Squeeze => squeeze(args),
        Prim::ExpandDims => expand_dims(args),
        Prim::BroadcastTo => broadcast_to(args),
        Prim::Concat | Prim::Stack => match tensors(&args[0]) {
            Ok(ts) => join(&ts, &args[1], p == Prim::Stack),
            Err(r) => Ok(r),
        },
        Prim::Split => split(args),
        Prim::Take => take(args),
        Prim::Pad => pad(args),
        Prim::ReflectionPad2D | Prim::ReplicationPad2D | Prim::ZeroPad2D => pad2d(p, args),
        Prim::IndexSelect => index_select(args),
        // Shaped like x, in d's dtype.
        Prim::TakeGrad | Prim::PadGrad | Prim::Pad2DGrad => match (&args[0], &args[1]) {
            (Abs::Tensor(d), Abs::Tensor(x)) => Ok(tensor_abs(d.dtype, x.shape.clone())),
            (Abs::Any, _) | (_, Abs::Any) => Ok(Abs::Any),
            _ => Ok(Abs::Bottom),
        },
        // One sensitivity per input, shaped like it.
        Prim::ConcatGrad | Prim::StackGrad => match tensors(&args[1]) {
            Ok(ts) => Ok(Abs::tuple(
                ts.into_iter()
                    .map(|t| tensor_abs(t.dtype, t.shape))
                    .collect(),
            )),
            Err(r) => Ok(r),
        },
        other => Err(err(format!("{} is not an array primitive", other.name()))),
    }
}

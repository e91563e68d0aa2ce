//! numpy's array functions: `one_hot`, `concat`, `stack`, `split`, `take` (`gather`),
//! `index_select`, and the adjoints of joining and gathering.

use anfora_tensor::{DType, SplitSpec, Tensor, promote_types, split_bounds, tuple_repr};

use crate::abs::{Abs, Rule, TensorAbs, err};
use crate::args::tensor_operand;
use crate::args::{
    dtype_arg, dtype_arg_abs, int_arg, need_tensor, normalize_axis, shaped_like_x, tensor_abs,
};
use std::io::Write;

use crate::def::{Backward, PrimDef, Py, first, primitives};
use crate::emit::unbroadcast;
use crate::emit::{Call, Emit};
use crate::ids::NodeId;
use crate::prim::Prim;
use crate::pynum::{PyErr, tensor, type_error, value_error};
use crate::value::{OpResult, Value};

primitives! {
    family array = 7;

    /// `ToDevice(x, device)`: `x` with its tensors on `device` (a name, "cuda:0"). The lower
    /// stage inserts it where a value made on one device is used by an operation placed on
    /// another (`with anfora.placement(...)` blocks); it is never differentiated.
    ToDevice = PrimDef::new("ToDevice", "(x, device)", |_, a| Ok(a[0].clone()),
        |_, a, _| to_device(&a[0], &a[1]),
        Backward::Refused("inserted by the lower stage, after differentiation"))
        .passing_values();
    /// `ops.one_hot(indices, depth, dtype=float32)`.
    OneHot = PrimDef::new("OneHot", "(indices, depth, dtype=None)", one_hot_abs, one_hot,
        Backward::Zero)
        .tensor_kernel().called(&[Py::Op("one_hot")]);
    /// `ops.concat(tensors, axis=0)`: numpy's `concatenate`.
    Concat = PrimDef::new("Concat", "(tensors, axis=0)", join_abs, join,
        first(|e, c| e.op(Prim::ConcatGrad, &[c.d, c.x[0], c.x[1]])))
        .tensor_kernel().called(&[Py::Op("concat")]);
    /// `ops.stack(tensors, axis=0)`: numpy's.
    Stack = PrimDef::new("Stack", "(tensors, axis=0)", join_abs, join,
        first(|e, c| e.op(Prim::StackGrad, &[c.d, c.x[0], c.x[1]])))
        .tensor_kernel().called(&[Py::Op("stack")]);
    /// `ops.split(x, indices_or_sections, axis=0)`: numpy's; a tuple of tensors.
    Split = PrimDef::new("Split", "(x, indices_or_sections, axis=0)", split_abs, split,
        first(split_back))
        .tensor_kernel().called(&[Py::Op("split")]).viewing();
    /// `ConcatGrad(d, tensors, axis)`: `d` cut back into one sensitivity per tensor.
    ConcatGrad = PrimDef::new("ConcatGrad", "(d, tensors, axis)", unjoin_abs, unjoin,
        first(|e, c| rejoin(e, c, Prim::Concat)))
        .tensor_kernel();
    /// `StackGrad(d, tensors, axis)`: `d` unstacked into one sensitivity per tensor.
    StackGrad = PrimDef::new("StackGrad", "(d, tensors, axis)", unjoin_abs, unjoin,
        first(|e, c| rejoin(e, c, Prim::Stack)))
        .tensor_kernel();
    /// `ops.take(x, indices, axis=None)` (also `ops.gather`): numpy's `take`.
    Take = PrimDef::new("Take", "(x, indices, axis=None)", take_abs, take,
        first(|e, c| gathered_back(e, c, [c.x[1], c.x[2]])))
        .tensor_kernel().called(&[Py::Op("take"), Py::Op("gather")]);
    /// `TakeGrad(d, x, indices, axis)`: zeros like `x` with `d` added where `take` read.
    TakeGrad = PrimDef::new("TakeGrad", "(d, x, indices, axis)", |_, a| Ok(shaped_like_x(a)),
        take_grad, first(|e, c| e.op(Prim::Take, &[c.d, c.x[2], c.x[3]])))
        .tensor_kernel();
    /// `ops.index_select(x, axis, index)`: MindSpore's, `ops.take(x, index, axis)` for a 1-D
    /// int32 or int64 `index`.
    IndexSelect = PrimDef::new("IndexSelect", "(x, axis, index)", index_select_abs, index_select,
        first(|e, c| gathered_back(e, c, [c.x[2], c.x[1]])))
        .tensor_kernel().called(&[Py::Op("index_select")]);
}

fn one_hot(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let idx = need_tensor(&a[0], "ops.one_hot")?;
    let depth = int_arg(&a[1])?;
    let dtype = dtype_arg(&a[2], Some(DType::F32))?.unwrap_or(DType::F32);
    tensor(Tensor::one_hot(idx, depth, dtype)).map(Value::Tensor)
}

fn split(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.split")?;
    let parts = tensor(x.split(&split_spec(&a[1])?, int_arg(&a[2])?))?;
    Ok(Value::tuple(parts.into_iter().map(Value::Tensor).collect()))
}

fn take(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.take")?;
    tensor(Tensor::take(x, &indices_arg(&a[1])?, axis_opt(&a[2])?)).map(Value::Tensor)
}

fn take_grad(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let d = need_tensor(&a[0], "TakeGrad")?;
    let x = need_tensor(&a[1], "TakeGrad")?;
    let indices = indices_arg(&a[2])?;
    tensor(Tensor::take_grad(d, x.shape(), &indices, axis_opt(&a[3])?)).map(Value::Tensor)
}

fn index_select(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.index_select")?;
    let axis = int_arg(&a[1])?;
    tensor(Tensor::take(x, select_index(&a[2])?, Some(axis))).map(Value::Tensor)
}

/// The parts' sensitivities (zeros for the unused ones) joined back.
fn split_back(e: &mut dyn Emit, c: &Call) -> NodeId {
    let dense = e.op(Prim::FillZeros, &[c.d, c.out]);
    let joined = e.op(Prim::Concat, &[dense, c.x[2]]);
    unbroadcast(e, joined, c.x[0])
}

/// Linear in d: the adjoint of cutting or unstacking joins the tuple sensitivity back.
fn rejoin(e: &mut dyn Emit, c: &Call, join: Prim) -> NodeId {
    let dense = e.op(Prim::FillZeros, &[c.d, c.x[1]]);
    e.op(join, &[dense, c.x[2]])
}

/// The sensitivity of a gather of `x` at `[indices, axis]`: `d` added where it read.
fn gathered_back(e: &mut dyn Emit, c: &Call, [indices, axis]: [NodeId; 2]) -> NodeId {
    let t = e.op(Prim::TakeGrad, &[c.d, c.x[0], indices, axis]);
    unbroadcast(e, t, c.x[0])
}

/// `concat`/`stack`; numpy's concatenate with axis=None joins the tensors flattened.
fn join(p: Prim, args: &[Value], _: &mut dyn Write) -> OpResult {
    let name = p.python_name();
    let ts = tensors_arg(&args[0], &name)?;
    let r = if p == Prim::Concat && matches!(args[1], Value::None) {
        Tensor::concat(&flattened(&ts)?, 0)
    } else if p == Prim::Concat {
        Tensor::concat(&ts, int_arg(&args[1])?)
    } else {
        Tensor::stack(&ts, int_arg(&args[1])?)
    };
    tensor(r).map(Value::Tensor)
}

fn join_abs(p: Prim, args: &[Abs]) -> Rule {
    match tensors(&args[0]) {
        Ok(ts) => join_shapes(&ts, &args[1], p == Prim::Stack),
        Err(r) => Ok(r),
    }
}

/// One sensitivity per input, shaped like it.
fn unjoin_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match tensors(&a[1]) {
        Ok(ts) => Abs::tuple(
            ts.into_iter()
                .map(|t| tensor_abs(t.dtype, t.shape))
                .collect(),
        ),
        Err(r) => r,
    })
}

/// A tuple or list of tensors.
fn tensors_arg(v: &Value, name: &str) -> Result<Vec<Tensor>, PyErr> {
    let items = match v {
        Value::Tuple(items) | Value::List(items) => items,
        other => {
            return Err(type_error(format!(
                "{name}() expects a tuple or list of tensors, got {}",
                other.type_name()
            )));
        }
    };
    items
        .iter()
        .map(|t| need_tensor(t, name).cloned())
        .collect()
}

/// `ops.split`'s second argument: a number of sections or a sequence of indices.
fn split_spec(v: &Value) -> Result<SplitSpec, PyErr> {
    Ok(match v {
        Value::Tuple(items) | Value::List(items) => {
            SplitSpec::Indices(items.iter().map(int_arg).collect::<Result<_, _>>()?)
        }
        other => SplitSpec::Sections(int_arg(other)?),
    })
}

/// The sensitivity `d` of a concatenation (`stacked`: of a stack) cut into one sensitivity
/// per input, each in its input's kind (`SumToShape`: zeros for integers).
/// Each tensor as a 1-d tensor of its elements.
fn flattened(ts: &[Tensor]) -> Result<Vec<Tensor>, PyErr> {
    ts.iter()
        .map(|t| tensor(t.reshape(&[t.numel() as i64])))
        .collect()
}

fn unjoin(p: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let (d, xs, axis) = (&a[0], &a[1], &a[2]);
    let stacked = p == Prim::StackGrad;
    let name = p.name();
    let items = match xs {
        Value::Tuple(items) | Value::List(items) => items.clone(),
        other => {
            return Err(type_error(format!(
                "{name}: expected a tuple of tensors, got {}",
                other.type_name()
            )));
        }
    };
    if !stacked && matches!(axis, Value::None) {
        // concatenate(axis=None) joined the tensors flattened: cut `d` at their sizes and
        // give each part its tensor's shape.
        let dt = need_tensor(d, name)?;
        let mut at = 0i64;
        let mut cuts = Vec::new();
        for t in items.iter().take(items.len().saturating_sub(1)) {
            at += need_tensor(t, name)?.numel() as i64;
            cuts.push(at);
        }
        let parts = tensor(dt.split(&SplitSpec::Indices(cuts), 0))?;
        let mut out = Vec::with_capacity(parts.len());
        for (part, x) in parts.into_iter().zip(items.iter()) {
            let shape: Vec<i64> = need_tensor(x, name)?
                .shape()
                .iter()
                .map(|&n| n as i64)
                .collect();
            out.push(Value::Tensor(tensor(part.reshape(&shape))?));
        }
        return Ok(Value::tuple(out));
    }
    let axis = int_arg(axis)?;
    let dt = need_tensor(d, name)?;
    let spec = if stacked {
        SplitSpec::Sections(items.len() as i64)
    } else {
        let ax = if axis < 0 {
            axis + dt.ndim() as i64
        } else {
            axis
        };
        let mut at = 0i64;
        let mut cuts = Vec::new();
        for t in items.iter().take(items.len().saturating_sub(1)) {
            let n = need_tensor(t, name)?
                .shape()
                .get(ax as usize)
                .copied()
                .unwrap_or(0);
            at += n as i64;
            cuts.push(at);
        }
        SplitSpec::Indices(cuts)
    };
    let parts = tensor(dt.split(&spec, axis))?;
    let mut out = Vec::with_capacity(parts.len());
    for (part, x) in parts.into_iter().zip(items.iter()) {
        let part = if stacked {
            tensor(part.squeeze(Some(&[axis])))?
        } else {
            part
        };
        out.push(Prim::SumToShape.eval(&[Value::Tensor(part), x.clone()])?);
    }
    Ok(Value::tuple(out))
}

/// `take`'s indices: an integer tensor, an int, or nested lists of ints.
fn indices_arg(v: &Value) -> Result<Tensor, PyErr> {
    match v {
        Value::Tensor(t) => Ok(t.clone()),
        Value::Tuple(_) | Value::List(_) | Value::Int(_) | Value::Bool(_) => {
            let t = Prim::MakeTensor
                .eval(&[v.clone(), Value::None])?
                .into_tensor()
                .map_err(|_| type_error("ops.take() expects integer indices"))?;
            // `[]` holds no number: numpy's take reads it as no indices, not as floats.
            if t.numel() == 0 && t.dtype().is_float() {
                return tensor(t.try_cast(DType::I64));
            }
            Ok(t)
        }
        other => Err(type_error(format!(
            "ops.take() expects integer indices, got {}",
            other.type_name()
        ))),
    }
}

fn axis_opt(v: &Value) -> Result<Option<i64>, PyErr> {
    Ok(match v {
        Value::None => None,
        other => Some(int_arg(other)?),
    })
}

/// `ops.index_select`'s index: a 1-D int32 or int64 tensor.
fn select_index(v: &Value) -> Result<&Tensor, PyErr> {
    let Value::Tensor(t) = v else {
        return Err(type_error(format!(
            "ops.index_select() expects index as a 1-D int32 or int64 tensor, got {}",
            v.type_name()
        )));
    };
    if !matches!(t.dtype(), DType::I32 | DType::I64) {
        return Err(type_error(format!(
            "ops.index_select() expects an int32 or int64 index, got {}",
            t.dtype()
        )));
    }
    if t.ndim() != 1 {
        return Err(value_error(format!(
            "ops.index_select() expects a 1-D index, got shape {}",
            tuple_repr(t.shape())
        )));
    }
    Ok(t)
}

// ---- abstract values ----------------------------------------------------------------------
fn one_hot_abs(_: Prim, args: &[Abs]) -> Rule {
    let idx = tensor_operand!(&args[0]);
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
    let Some(dtype) = dtype_arg_abs(&args[2], DType::F32) else {
        return Ok(Abs::Any);
    };
    let mut shape = idx.shape.clone();
    shape.push(depth);
    Ok(tensor_abs(dtype, shape))
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
fn join_shapes(ts: &[TensorAbs], axis: &Abs, stack: bool) -> Rule {
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

fn split_abs(_: Prim, args: &[Abs]) -> Rule {
    let x = tensor_operand!(&args[0]);
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
                    crate::python::slice_indices(&s, len as i64)
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

fn take_abs(_: Prim, args: &[Abs]) -> Rule {
    let x = tensor_operand!(&args[0]);
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

/// `ops.index_select(x, axis, index)`: `take` along `axis` of a 1-D int32 or int64 index.
fn index_select_abs(_: Prim, args: &[Abs]) -> Rule {
    let x = tensor_operand!(&args[0]);
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

/// `ToDevice(x, device)`: the tensors of `x` (through tuples and lists) moved to `device`.
fn to_device(x: &Value, device: &Value) -> OpResult {
    let Value::Str(name) = device else {
        return Err(type_error("ToDevice: the device must be a string"));
    };
    let d = anfora_tensor::Device::parse(name).map_err(crate::pynum::tensor_err)?;
    moved(x, d)
}

/// `x` with its tensors (through tuples and lists) on device `d`.
pub fn moved(x: &Value, d: anfora_tensor::Device) -> OpResult {
    Ok(match x {
        Value::Tensor(t) => Value::Tensor(tensor(t.to_device(d))?),
        Value::Tuple(items) => Value::Tuple(
            items
                .iter()
                .map(|i| moved(i, d))
                .collect::<Result<_, _>>()?,
        ),
        Value::List(items) => Value::List(
            items
                .iter()
                .map(|i| moved(i, d))
                .collect::<Result<_, _>>()?,
        ),
        v => v.clone(),
    })
}

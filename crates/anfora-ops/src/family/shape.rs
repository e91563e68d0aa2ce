//! A tensor's shape without its values changing: `reshape`, `transpose`/`permute`,
//! `squeeze`, `expand_dims` and `broadcast_to` (views where they can be), and the inverse
//! permutation of a transpose's gradient.

use crate::abs::{Abs, Rule, RuleError, TensorAbs, err, from_tensor_error, shape_text};
use crate::args::distinct_axes;
use crate::args::tensor_operand;
use crate::args::{
    axes_arg, axes_arg_abs, compact_shape, int_list, need_tensor, normalize_axis, on_tensor,
    reduced_axes, shape_arg, shape_arg_abs, tensor_abs,
};
use std::io::Write;

use crate::def::{Backward, PrimDef, Py, primitives};
use crate::emit::{shape_of, unbroadcast};
use crate::prim::Prim;
use crate::pynum::{tensor as t, type_error};
use crate::value::{OpResult, Value};

primitives! {
    family shape = 6;

    Reshape = PrimDef::new("Reshape", "(x, shape)", reshape_abs, reshape, TO_SHAPE)
        .tensor_kernel().called(&[Py::Op("reshape")]).viewing();
    Transpose = PrimDef::new("Transpose", "(x, axes=None)", transpose_abs, transpose, BACK)
        .tensor_kernel().called(&[Py::Op("transpose")]).viewing();
    /// `ops.permute(x, axes)`: `ops.transpose` with the axes required (PyTorch, MindSpore).
    Permute = PrimDef::new("Permute", "(x, axes)", permute_abs, permute, BACK)
        .tensor_kernel().called(&[Py::Op("permute")]).viewing();
    /// `TransposeGrad(d, axes)`: `d` transposed by the inverse permutation.
    TransposeGrad = PrimDef::new("TransposeGrad", "(d, axes)",
        |_, a| Ok(transpose_grad_abs(&a[0], &a[1])), |_, a, _| transpose_grad(&a[0], &a[1]),
        Backward::First(|e, c| e.op(Prim::Transpose, &[c.d, c.x[1]])))
        .tensor_kernel();
    /// `ops.squeeze(x, axis=None)`: numpy's.
    Squeeze = PrimDef::new("Squeeze", "(x, axis=None)", squeeze_abs, squeeze, TO_SHAPE)
        .tensor_kernel().called(&[Py::Op("squeeze")]).viewing();
    /// `ops.expand_dims(x, axis)` (also `unsqueeze`): numpy's.
    ExpandDims = PrimDef::new("ExpandDims", "(x, axis)", expand_dims_abs, expand_dims, TO_SHAPE)
        .tensor_kernel().called(&[Py::Op("expand_dims"), Py::Op("unsqueeze")]).viewing();
    /// `ops.broadcast_to(x, shape)`: numpy's.
    BroadcastTo = PrimDef::new("BroadcastTo", "(x, shape)", broadcast_to_abs, broadcast_to,
        UNBROADCAST)
        .tensor_kernel().called(&[Py::Op("broadcast_to")]).viewing();
}

/// The backward rule of the transposes: `d` transposed back.
const BACK: Backward = Backward::Rule(|e, c| {
    let mut g = c.none();
    g[0] = Some(e.op(Prim::TransposeGrad, &[c.d, c.x[1]]));
    Some(g)
});

/// The backward rule of `broadcast_to`: `d` summed back to the shape of `x`.
const UNBROADCAST: Backward = Backward::Rule(|e, c| {
    let mut g = c.none();
    g[0] = Some(unbroadcast(e, c.d, c.x[0]));
    Some(g)
});

/// The backward rule of the reshapes: `d` reshaped back to the shape of `x`.
const TO_SHAPE: Backward = Backward::Rule(|e, c| {
    let shape = shape_of(e, c.x[0]);
    let mut g = c.none();
    g[0] = Some(e.op(Prim::Reshape, &[c.d, shape]));
    Some(g)
});

fn reshape(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.reshape")?;
    t(x.reshape(&int_list(&a[1])?)).map(Value::Tensor)
}

fn transpose(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.transpose")?;
    let axes = match &a[1] {
        Value::None => None,
        v => Some(int_list(v)?),
    };
    t(x.transpose(axes.as_deref())).map(Value::Tensor)
}

fn permute(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.permute")?;
    if matches!(a[1], Value::None) {
        return Err(type_error("ops.permute() needs axes, not None"));
    }
    t(x.transpose(Some(&int_list(&a[1])?))).map(Value::Tensor)
}

fn squeeze(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.squeeze")?;
    t(x.squeeze(axes_arg(&a[1])?.as_deref())).map(Value::Tensor)
}

fn expand_dims(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.expand_dims")?;
    let axes =
        axes_arg(&a[1])?.ok_or_else(|| type_error("ops.expand_dims() needs an axis, not None"))?;
    t(x.expand_dims(&axes)).map(Value::Tensor)
}

fn broadcast_to(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.broadcast_to")?;
    t(x.broadcast_to(&shape_arg(&a[1])?)).map(Value::Tensor)
}

/// `TransposeGrad(d, axes)`.
fn transpose_grad(d: &Value, axes: &Value) -> OpResult {
    let dt = match d {
        Value::None => return Ok(Value::None),
        d => need_tensor(d, "transpose")?.clone(),
    };
    let inverse = match axes {
        Value::None => None,
        v => {
            let n = dt.ndim();
            let perm = reduced_axes(v, n)?;
            let mut inv = vec![0i64; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                if p < inv.len() {
                    inv[p] = i as i64;
                }
            }
            Some(inv)
        }
    };
    Ok(Value::Tensor(t(dt.transpose(inverse.as_deref()))?))
}

// ---- abstract values ----------------------------------------------------------------------

fn reshape_abs(_: Prim, a: &[Abs]) -> Rule {
    on_tensor(&a[0], |t| reshape_tensor(t, &a[1]))
}

fn reshape_tensor(t: &TensorAbs, spec: &Abs) -> Rule {
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

fn transpose_abs(_: Prim, a: &[Abs]) -> Rule {
    on_tensor(&a[0], |t| transpose_tensor(t, &a[1]))
}

/// `ops.permute`: the axes are required (None is a TypeError at run time).
fn permute_abs(p: Prim, a: &[Abs]) -> Rule {
    match a[1] {
        Abs::None => on_tensor(&a[0], |_| Ok(Abs::Bottom)),
        _ => transpose_abs(p, a),
    }
}

fn transpose_tensor(t: &TensorAbs, axes: &Abs) -> Rule {
    let ndim = t.shape.len();
    let perm: Vec<usize> = match axes_arg_abs(axes) {
        Some(None) => (0..ndim).rev().collect(),
        Some(Some(list)) => {
            if list.len() != ndim {
                return Err(err("axes don't match array"));
            }
            distinct_axes(list, ndim, "repeated axis in transpose")?
        }
        None => return Ok(tensor_abs(t.dtype, vec![None; ndim])),
    };
    Ok(tensor_abs(
        t.dtype,
        perm.iter().map(|&i| t.shape[i]).collect(),
    ))
}

fn squeeze_abs(_: Prim, args: &[Abs]) -> Rule {
    let x = tensor_operand!(&args[0]);
    let Some(list) = axes_arg_abs(&args[1]) else {
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

fn expand_dims_abs(_: Prim, args: &[Abs]) -> Rule {
    let x = tensor_operand!(&args[0]);
    let list = match axes_arg_abs(&args[1]).ok_or(()) {
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

fn broadcast_to_abs(_: Prim, args: &[Abs]) -> Rule {
    let x = tensor_operand!(&args[0]);
    let Some(shape) = shape_arg_abs(&args[1]) else {
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

fn transpose_grad_abs(d: &Abs, axes: &Abs) -> Abs {
    let Abs::Tensor(t) = d else {
        return d.clone();
    };
    let n = t.shape.len();
    let perm: Option<Vec<usize>> = match axes {
        Abs::None => Some((0..n).rev().collect()),
        Abs::Tuple(xs) | Abs::List(xs) => xs
            .iter()
            .map(|a| {
                a.as_i64()
                    .map(|a| if a < 0 { a + n as i64 } else { a } as usize)
            })
            .collect(),
        _ => None,
    };
    // The forward permutation took input axis perm[i] to output axis i; undo it.
    let shape = match perm {
        Some(p) if p.len() == n && p.iter().all(|&a| a < n) => {
            let mut s = vec![None; n];
            for (i, &a) in p.iter().enumerate() {
                s[a] = t.shape[i];
            }
            s
        }
        _ => vec![None; n],
    };
    tensor_abs(t.dtype, shape)
}

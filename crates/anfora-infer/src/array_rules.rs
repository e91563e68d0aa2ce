//! Inference rules of numpy's array functions (`ops.argmax`, `ops.one_hot`, `ops.squeeze`,
//! `ops.expand_dims`, `ops.broadcast_to`): dtypes and shapes, and the errors numpy would raise
//! as compile errors when the shapes and arguments are known.

use anfora_ir::Prim;
use anfora_tensor::DType;

use crate::abs::{Abs, TensorAbs, shape_text};
use crate::rules::{RuleError, dtype_arg, normalize_axis, shape_arg, tensor_abs};

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

pub(crate) fn infer(p: Prim, args: &[Abs]) -> Rule {
    match p {
        Prim::ArgMax | Prim::ArgMin => arg_reduce(p, args),
        Prim::OneHot => one_hot(args),
        Prim::Squeeze => squeeze(args),
        Prim::ExpandDims => expand_dims(args),
        Prim::BroadcastTo => broadcast_to(args),
        other => Err(err(format!("{} is not an array primitive", other.name()))),
    }
}

//! Inference rules of the primitives the grad stage emits (see `crate::grad_ops` for
//! their run-time meaning). `None` is the zero sensitivity.

use crate::Prim;
use anfora_tensor::DType;

use crate::abs::{Abs, TensorAbs};
use crate::rules::{RuleError, binary, getitem};

type Rule = Result<Abs, RuleError>;

fn tensor(dtype: DType, shape: Vec<Option<usize>>) -> Abs {
    Abs::tensor(TensorAbs::new(dtype, shape))
}

fn sum_to_shape(d: &Abs, x: &Abs) -> Abs {
    match (d, x) {
        (Abs::None, _) => Abs::None,
        (Abs::Any, _) | (_, Abs::Any) => Abs::Any,
        (Abs::Tensor(_) | Abs::Float(_) | Abs::Int(_) | Abs::Bool(_), Abs::Tensor(xt))
            if xt.dtype.is_float() =>
        {
            tensor(xt.dtype, xt.shape.clone())
        }
        (Abs::Tensor(_) | Abs::Float(_) | Abs::Int(_), Abs::Float(_)) => Abs::Float(None),
        (_, Abs::Tensor(xt)) => tensor(xt.dtype, xt.shape.clone()),
        (_, Abs::Int(_) | Abs::Bool(_)) => Abs::Int(Some(0)),
        _ => Abs::None,
    }
}

fn zeros_like(x: &Abs) -> Abs {
    match x {
        Abs::Tensor(t) => tensor(t.dtype, t.shape.clone()),
        Abs::Ref(r) => tensor(r.dtype, r.shape.iter().map(|&n| Some(n)).collect()),
        Abs::Float(_) => Abs::Float(Some(0.0)),
        Abs::Int(_) => Abs::Int(Some(0)),
        Abs::Bool(_) => Abs::Bool(Some(false)),
        Abs::Tuple(xs) => Abs::tuple(xs.iter().map(zeros_like).collect()),
        Abs::List(xs) => Abs::List(xs.iter().map(zeros_like).collect()),
        Abs::Any => Abs::Any,
        _ => Abs::None,
    }
}

/// As the runtime's `FillZeros`: item by item over the shorter of two sequences, in the kind
/// of container `x` is.
fn fill_zeros(d: &Abs, x: &Abs) -> Abs {
    let items = |a: &Abs| match a {
        Abs::Tuple(xs) | Abs::List(xs) => Some(xs.clone()),
        _ => None,
    };
    match (d, x) {
        (Abs::None, x) => zeros_like(x),
        (d, x) if items(d).is_some() && items(x).is_some() => {
            let (ds, xs) = (items(d).unwrap_or_default(), items(x).unwrap_or_default());
            let filled: Vec<Abs> = ds
                .iter()
                .zip(xs.iter())
                .map(|(d, x)| fill_zeros(d, x))
                .collect();
            match x {
                Abs::List(_) => Abs::List(filled.into()),
                _ => Abs::tuple(filled),
            }
        }
        (d, _) => d.clone(),
    }
}

fn sens_ones(y: &Abs) -> Abs {
    match y {
        Abs::Tensor(t) => tensor(t.dtype, t.shape.clone()),
        Abs::Float(_) | Abs::Int(_) | Abs::Bool(_) => Abs::Float(Some(1.0)),
        Abs::Tuple(xs) => Abs::tuple(xs.iter().map(sens_ones).collect()),
        Abs::List(xs) => Abs::List(xs.iter().map(sens_ones).collect()),
        Abs::Any => Abs::Any,
        _ => Abs::None,
    }
}

/// Whether a user-given sensitivity `d` fits the output `y` (dimensions and values only known
/// at run time pass here and are checked by the VM).
fn sens_check(d: &Abs, y: &Abs) -> Result<(), String> {
    let describe = |a: &Abs| match a {
        Abs::Tensor(t) => format!(
            "a {} tensor of shape {}",
            t.dtype.name(),
            crate::abs::shape_text(&t.shape, "?", ", ")
        ),
        a => a.to_string(),
    };
    match (d, y) {
        // Unknown yet (Bottom: a recursion's first round).
        (Abs::Any | Abs::Bottom, _) | (_, Abs::Any | Abs::Bottom) => Ok(()),
        (Abs::Tensor(dt), Abs::Tensor(yt)) => {
            let shapes_fit = dt.shape.len() == yt.shape.len()
                && (dt.shape.iter().zip(&yt.shape))
                    .all(|(a, b)| a.is_none() || b.is_none() || a == b);
            if dt.dtype != yt.dtype || !shapes_fit {
                return Err(format!(
                    "expected {} like the output, got {}",
                    describe(y),
                    describe(d)
                ));
            }
            Ok(())
        }
        (Abs::Float(_) | Abs::Int(_), Abs::Float(_) | Abs::Int(_) | Abs::Bool(_)) => Ok(()),
        (Abs::Tuple(ds), Abs::Tuple(ys)) | (Abs::List(ds), Abs::List(ys))
            if ds.len() == ys.len() =>
        {
            ds.iter()
                .zip(ys.iter())
                .try_for_each(|(d, y)| sens_check(d, y))
        }
        _ => Err(format!(
            "expected {} like the output, got {}",
            describe(y),
            describe(d)
        )),
    }
}

fn grad_add(a: &Abs, b: &Abs) -> Rule {
    Ok(match (a, b) {
        (Abs::None, x) | (x, Abs::None) => x.clone(),
        (Abs::Any, _) | (_, Abs::Any) => Abs::Any,
        (Abs::Tuple(xs), Abs::Tuple(ys)) if xs.len() == ys.len() => Abs::tuple(
            xs.iter()
                .zip(ys.iter())
                .map(|(x, y)| grad_add(x, y))
                .collect::<Result<_, _>>()?,
        ),
        (Abs::List(xs), Abs::List(ys)) if xs.len() == ys.len() => Abs::List(
            xs.iter()
                .zip(ys.iter())
                .map(|(x, y)| grad_add(x, y))
                .collect::<Result<_, _>>()?,
        ),
        (a, b) => binary(Prim::Add, a, b)?,
    })
}

fn index(i: &Abs, n: usize) -> Option<usize> {
    let i = i.as_i64()?;
    let j = if i < 0 { i + n as i64 } else { i };
    (0..n as i64).contains(&j).then_some(j as usize)
}

/// `IndexGrad(d, x, index)`: shaped like `x` (float tensors); the index is checked as
/// `x[index]` would be.
fn index_grad(d: &Abs, x: &Abs, index: &Abs) -> Rule {
    let Abs::Tensor(xt) = x else {
        return Ok(Abs::Any);
    };
    crate::rules::getitem(x, index)?;
    Ok(if matches!(d, Abs::None) || !xt.dtype.is_float() {
        Abs::None
    } else {
        tensor(xt.dtype, xt.shape.clone())
    })
}

fn grad_tuple_at(t: &Abs, i: &Abs, d: &Abs) -> Rule {
    let (items, list) = match t {
        Abs::Any => return Ok(Abs::Any),
        Abs::Tensor(_) => return index_grad(d, t, i),
        Abs::Tuple(xs) => (xs, false),
        Abs::List(xs) => (xs, true),
        Abs::Range(_) | Abs::Str(_) => return Ok(Abs::None),
        other => {
            return Err(RuleError(format!(
                "the gradient of indexing {other} is not supported yet"
            )));
        }
    };
    if matches!(d, Abs::None) {
        return Ok(Abs::None);
    }
    let Some(j) = index(i, items.len()) else {
        return Ok(Abs::Any);
    };
    let mut out = vec![Abs::None; items.len()];
    out[j] = d.clone();
    Ok(if list {
        Abs::List(out.into())
    } else {
        Abs::tuple(out)
    })
}

fn transpose_grad(d: &Abs, axes: &Abs) -> Abs {
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
    tensor(t.dtype, shape)
}

pub(crate) fn infer(p: Prim, args: &[Abs]) -> Rule {
    Ok(match p {
        Prim::StopGradient => args[0].clone(),
        Prim::GradAdd => grad_add(&args[0], &args[1])?,
        Prim::SumToShape => sum_to_shape(&args[0], &args[1]),
        Prim::BroadcastLike => match (&args[0], &args[1]) {
            (Abs::None, _) => Abs::None,
            (Abs::Tensor(d), Abs::Tensor(x)) => tensor(d.dtype, x.shape.clone()),
            (Abs::Float(_) | Abs::Int(_) | Abs::Bool(_), Abs::Tensor(x)) => {
                tensor(x.dtype, x.shape.clone())
            }
            (Abs::Tensor(_), Abs::Float(_)) => Abs::Float(None),
            (d, _) => d.clone(),
        },
        Prim::FillZeros => fill_zeros(&args[0], &args[1]),
        Prim::SensOnes => sens_ones(&args[0]),
        Prim::SensCheck => {
            sens_check(&args[0], &args[1]).map_err(RuleError)?;
            args[0].clone()
        }
        Prim::GradTupleAt => grad_tuple_at(&args[0], &args[1], &args[2])?,
        Prim::IndexGrad => index_grad(&args[0], &args[1], &args[2])?,
        // One gradient per argument, shaped like it.
        Prim::CustomGrad if args.len() >= 3 => Abs::tuple(
            args[3..]
                .iter()
                .map(|a| match (a, &args[1]) {
                    (_, Abs::None) => Abs::None,
                    (Abs::Tensor(t), _) => tensor(t.dtype, t.shape.clone()),
                    (Abs::Ref(r), _) => tensor(r.dtype, r.shape.iter().map(|&d| Some(d)).collect()),
                    _ => Abs::Any,
                })
                .collect(),
        ),
        Prim::CustomGrad => Abs::Any,
        Prim::GradItem => match &args[0] {
            Abs::None => Abs::None,
            d => getitem(d, &args[1])?,
        },
        Prim::GradHead => match (&args[0], args[1].as_i64()) {
            (Abs::Tuple(xs), Some(n)) => {
                Abs::tuple(xs[..xs.len().saturating_sub(n.max(0) as usize)].to_vec())
            }
            _ => Abs::Any,
        },
        Prim::GradPad => match (&args[0], args[1].as_i64()) {
            (Abs::None, _) => Abs::None,
            (Abs::Tuple(xs), Some(n)) => {
                let mut out = xs.to_vec();
                out.extend(std::iter::repeat_n(Abs::None, n.max(0) as usize));
                Abs::tuple(out)
            }
            _ => Abs::Any,
        },
        Prim::MatMulGrad => match (&args[0], &args[1], &args[2]) {
            (_, _, Abs::None) => Abs::tuple(vec![Abs::None, Abs::None]),
            (Abs::Tensor(a), Abs::Tensor(b), _) => Abs::tuple(vec![
                tensor(a.dtype, a.shape.clone()),
                tensor(b.dtype, b.shape.clone()),
            ]),
            _ => Abs::Any,
        },
        Prim::Gemm => match (&args[0], &args[1], args[3].as_bool(), args[4].as_bool()) {
            (Abs::Tensor(a), Abs::Tensor(b), Some(ta), Some(tb))
                if a.shape.len() == 2 && b.shape.len() == 2 =>
            {
                let m = a.shape[usize::from(ta)];
                let n = b.shape[usize::from(!tb)];
                tensor(a.dtype, vec![m, n])
            }
            _ => Abs::Any,
        },
        Prim::ReduceGrad => match (&args[1], &args[2]) {
            (Abs::None, _) => Abs::None,
            (_, Abs::Tensor(x)) if x.dtype.is_float() => tensor(x.dtype, x.shape.clone()),
            (_, Abs::Tensor(_)) => Abs::None,
            _ => Abs::Any,
        },
        Prim::TransposeGrad => transpose_grad(&args[0], &args[1]),
        _ => {
            return Err(RuleError(format!(
                "{}() needs a function known at compile time (a def, a lambda, or another grad)",
                p.python_name()
            )));
        }
    })
}

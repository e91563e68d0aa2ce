//! Inference rules of the neural-network primitives. Shapes, dtypes and hyper-parameters known
//! at compile time are checked with the tensor library's and the VM's own functions, so a
//! convolution that cannot run is a compile error with the message it would raise; a
//! hyper-parameter of the wrong type is left to raise its TypeError at run time.

use crate::Prim;
use crate::nn_ops::{NnArg, conv2d_spec, pool2d_spec};
use anfora_tensor::{
    DType, Pool2dSpec, Scalar, TensorError, conv2d_output_shape, nn_float_dtype,
    pool2d_output_shape,
};

use crate::abs::{Abs, TensorAbs, shape_text};
use crate::rules::{RuleError, shape_arg, tensor_abs};

type Rule = Result<Abs, RuleError>;

fn err(msg: impl Into<String>) -> RuleError {
    RuleError(msg.into())
}

fn from_tensor_error(e: TensorError) -> RuleError {
    RuleError(e.message)
}

/// A hyper-parameter as the VM sees it, `None` when its value is not known.
pub(crate) fn nn_arg(a: &Abs) -> Option<NnArg> {
    Some(match a {
        Abs::Int(Some(i)) => NnArg::Int(*i),
        Abs::Bool(Some(b)) => NnArg::Int(i64::from(*b)),
        Abs::Str(Some(s)) => NnArg::Str(s.to_string()),
        Abs::None => NnArg::None,
        Abs::Tuple(items) | Abs::List(items) => {
            let mut ints = Vec::with_capacity(items.len());
            for item in items.iter() {
                match item {
                    Abs::Int(Some(i)) => ints.push(*i),
                    Abs::Bool(Some(b)) => ints.push(i64::from(*b)),
                    Abs::Int(None) | Abs::Bool(None) | Abs::Any => return None,
                    _ => return Some(NnArg::Other("tuple")),
                }
            }
            NnArg::Ints(ints)
        }
        Abs::Float(_) => NnArg::Other("float"),
        Abs::Tensor(_) => NnArg::Other("Tensor"),
        _ => return None,
    })
}

/// The operands' common float dtype, or the compile error numpy's kernels would raise.
fn float_dtype(op: &str, ts: &[&TensorAbs]) -> Result<DType, RuleError> {
    let dtypes: Vec<DType> = ts.iter().map(|t| t.dtype).collect();
    nn_float_dtype(op, &dtypes).map_err(from_tensor_error)
}

/// What a checked hyper-parameter set gives inference: a spec, nothing known, or a TypeError
/// left for run time.
enum Checked<T> {
    Known(T),
    Unknown,
    RaisesAtRunTime,
}

fn conv_spec(op: &str, args: &[Abs]) -> Result<Checked<anfora_tensor::Conv2dSpec>, RuleError> {
    let parts: Option<Vec<NnArg>> = args.iter().map(nn_arg).collect();
    let Some(parts) = parts else {
        return Ok(Checked::Unknown);
    };
    match conv2d_spec(op, &parts[0], &parts[1], &parts[2], &parts[3]) {
        Ok(spec) => Ok(Checked::Known(spec)),
        Err(("TypeError", _)) => Ok(Checked::RaisesAtRunTime),
        Err((_, msg)) => Err(err(msg)),
    }
}

fn conv2d(args: &[Abs]) -> Rule {
    let (x, w) = match (&args[0], &args[1]) {
        (Abs::Tensor(x), Abs::Tensor(w)) => (x, w),
        (Abs::Any, _) | (_, Abs::Any) => return Ok(Abs::Any),
        _ => return Ok(Abs::Bottom),
    };
    let dtype = float_dtype("conv2d", &[x, w])?;
    if !matches!(x.shape.len(), 3 | 4) {
        return Err(err(format!(
            "conv2d: expected a 4-D input (N, C, H, W) or a 3-D one (C, H, W), got shape {}",
            shape_text(&x.shape, "?", ", ")
        )));
    }
    if w.shape.len() != 4 {
        return Err(err(format!(
            "conv2d: expected a 4-D weight (out_channels, in_channels / groups, kH, kW), got \
             shape {}",
            shape_text(&w.shape, "?", ", ")
        )));
    }
    let spec = match conv_spec("conv2d", &args[2..6])? {
        Checked::Known(spec) => Some(spec),
        Checked::Unknown => None,
        Checked::RaisesAtRunTime => return Ok(Abs::Bottom),
    };
    if let (Some(xs), Some(ws), Some(spec)) = (x.known_shape(), w.known_shape(), spec) {
        let shape = conv2d_output_shape(&xs, &ws, &spec).map_err(from_tensor_error)?;
        return Ok(tensor_abs(dtype, shape.into_iter().map(Some).collect()));
    }
    // Some size is unknown: the batch and the output channels are still known.
    let mut shape = vec![w.shape[0], None, None];
    if x.shape.len() == 4 {
        shape.insert(0, x.shape[0]);
    }
    Ok(tensor_abs(dtype, shape))
}

fn pool_spec(op: &str, args: &[Abs]) -> Result<Checked<Pool2dSpec>, RuleError> {
    let parts: Option<Vec<NnArg>> = args.iter().map(nn_arg).collect();
    let Some(parts) = parts else {
        return Ok(Checked::Unknown);
    };
    match pool2d_spec(op, &parts[0], &parts[1], &parts[2]) {
        Ok(spec) => Ok(Checked::Known(spec)),
        Err(("TypeError", _)) => Ok(Checked::RaisesAtRunTime),
        Err((_, msg)) => Err(err(msg)),
    }
}

/// `ops.max_pool2d`/`ops.avg_pool2d` (`op`) of `x` with the hyper-parameters `args`.
fn pool2d(op: &str, x: &Abs, args: &[Abs]) -> Rule {
    let x = match x {
        Abs::Tensor(x) => x,
        Abs::Any => return Ok(Abs::Any),
        _ => return Ok(Abs::Bottom),
    };
    let dtype = float_dtype(op, &[x])?;
    if !matches!(x.shape.len(), 3 | 4) {
        return Err(err(format!(
            "{op}: expected a 4-D input (N, C, H, W) or a 3-D one (C, H, W), got shape {}",
            shape_text(&x.shape, "?", ", ")
        )));
    }
    let spec = match pool_spec(op, args)? {
        Checked::Known(spec) => Some(spec),
        Checked::Unknown => None,
        Checked::RaisesAtRunTime => return Ok(Abs::Bottom),
    };
    if let (Some(xs), Some(spec)) = (x.known_shape(), spec) {
        let shape = pool2d_output_shape(op, &xs, &spec).map_err(from_tensor_error)?;
        return Ok(tensor_abs(dtype, shape.into_iter().map(Some).collect()));
    }
    let mut shape = x.shape[..x.shape.len() - 2].to_vec();
    shape.extend([None, None]);
    Ok(tensor_abs(dtype, shape))
}

/// `ops.softmax`/`ops.log_softmax` (`op`): a float tensor's shape, the axis checked.
fn softmax(op: &str, args: &[Abs]) -> Rule {
    let x = match &args[0] {
        Abs::Tensor(x) => x,
        Abs::Any => return Ok(Abs::Any),
        _ => return Ok(Abs::Bottom),
    };
    let dtype = float_dtype(op, &[x])?;
    match &args[1] {
        Abs::Int(Some(a)) => {
            crate::rules::normalize_axis(*a, x.shape.len())
                .map_err(|e| err(format!("{op}: {}", e.0)))?;
        }
        Abs::Int(None) | Abs::Bool(_) | Abs::Any => {}
        // Not an int: a TypeError at run time.
        _ => return Ok(Abs::Bottom),
    }
    Ok(tensor_abs(dtype, x.shape.clone()))
}

/// `ops.logsumexp`: the shape of a sum over the axes, in the float tensor's dtype.
fn logsumexp(args: &[Abs]) -> Rule {
    let x = match &args[0] {
        Abs::Tensor(x) => x,
        Abs::Any => return Ok(Abs::Any),
        _ => return Ok(Abs::Bottom),
    };
    let dtype = float_dtype("logsumexp", &[x])?;
    Ok(match crate::rules::reduce(Prim::ReduceSum, args)? {
        Abs::Tensor(t) => tensor_abs(dtype, t.shape.clone()),
        other => other,
    })
}

/// A backward kernel: a tensor of the sensitivity's dtype and the shape it is given.
fn backward(args: &[Abs]) -> Rule {
    match (&args[0], &args[1]) {
        (Abs::Tensor(d), Abs::Tensor(_)) => Ok(match shape_arg(&args[2]) {
            Some(shape) => tensor_abs(d.dtype, shape),
            None => Abs::Any,
        }),
        (Abs::Any, _) | (_, Abs::Any) => Ok(Abs::Any),
        _ => Ok(Abs::Bottom),
    }
}

pub(crate) fn infer(p: Prim, args: &[Abs]) -> Rule {
    match p {
        Prim::Conv2D => conv2d(args),
        Prim::Conv2DBackpropInput | Prim::Conv2DBackpropFilter => backward(args),
        Prim::Softmax => softmax("softmax", args),
        Prim::LogSoftmax => softmax("log_softmax", args),
        Prim::LogSumExp => logsumexp(args),
        Prim::MaxPool2D => pool2d("max_pool2d", &args[0], &args[1..4]),
        Prim::AvgPool2D => pool2d("avg_pool2d", &args[0], &args[1..4]),
        // Shaped like the input.
        Prim::MaxPool2DGrad => match (&args[0], &args[1]) {
            (Abs::Tensor(d), Abs::Tensor(x)) => Ok(tensor_abs(d.dtype, x.shape.clone())),
            (Abs::Any, _) | (_, Abs::Any) => Ok(Abs::Any),
            _ => Ok(Abs::Bottom),
        },
        // Shaped like the pooling's output.
        Prim::MaxPool2DGradGrad => match (&args[0], &args[1]) {
            (Abs::Tensor(_), x @ Abs::Tensor(_)) => pool2d("max_pool2d", x, &args[2..5]),
            (Abs::Any, _) | (_, Abs::Any) => Ok(Abs::Any),
            _ => Ok(Abs::Bottom),
        },
        Prim::AvgPool2DGrad => match &args[0] {
            Abs::Tensor(d) => Ok(match shape_arg(&args[1]) {
                Some(shape) => tensor_abs(d.dtype, shape),
                None => Abs::Any,
            }),
            Abs::Any => Ok(Abs::Any),
            _ => Ok(Abs::Bottom),
        },
        other => Err(err(format!(
            "{} is not a neural-network primitive",
            other.name()
        ))),
    }
}

/// Whether an nn primitive can raise at run time: not when its tensors are float tensors of
/// known shapes (inference checked them) and its other arguments are known (and checked).
pub(crate) fn may_raise(args: &[Abs]) -> bool {
    !args.iter().all(|a| match a {
        Abs::Tensor(t) => t.dtype.is_float() && t.known_shape().is_some(),
        other => crate::rules::to_value(other).is_some(),
    })
}

/// `Clip` (as the VM computes it: `maximum` then `minimum`) and `ClipGrad` (the sensitivity
/// times the comparisons that route it).
pub(crate) fn clip(p: Prim, args: &[Abs]) -> Rule {
    use crate::rules::binary;
    let (x, lo, hi) = if p == Prim::Clip {
        (&args[0], &args[1], &args[2])
    } else {
        (&args[1], &args[2], &args[3])
    };
    if matches!(x, Abs::Any) {
        return Ok(Abs::Any);
    }
    if !matches!(x, Abs::Tensor(_)) && !x.is_number() {
        // A TypeError at run time.
        return Ok(Abs::Bottom);
    }
    // Clip computes in its operands' dtype taken together, as the VM does (the tensors cast
    // to it first); ClipGrad compares the operands as they are.
    let (cx, clo, chi);
    let (x, lo, hi) = if p == Prim::Clip {
        let operands = [x, lo, hi];
        let dtypes: Vec<DType> = operands
            .iter()
            .filter_map(|a| match a {
                Abs::Tensor(t) => Some(t.dtype),
                _ => None,
            })
            .collect();
        let scalars: Vec<Scalar> = operands
            .iter()
            .filter_map(|a| match a {
                Abs::Bool(b) => Some(Scalar::Bool(b.unwrap_or(false))),
                Abs::Int(i) => Some(Scalar::Int(i.unwrap_or(0))),
                Abs::Float(f) => Some(Scalar::Float(f.unwrap_or(0.0))),
                _ => None,
            })
            .collect();
        let shapes: Vec<&[Option<usize>]> = operands
            .iter()
            .filter_map(|a| match a {
                Abs::Tensor(t) => Some(&t.shape[..]),
                a if a.is_number() => Some(&[][..]),
                _ => None,
            })
            .collect();
        crate::rules::check_broadcast_all(&shapes)?;
        let common = anfora_tensor::result_type(&dtypes, &scalars);
        let cast = |a: &Abs| match (a, common) {
            (Abs::Tensor(t), Some(d)) if t.dtype != d => tensor_abs(d, t.shape.clone()),
            _ => a.clone(),
        };
        (cx, clo, chi) = (cast(x), cast(lo), cast(hi));
        (&cx, &clo, &chi)
    } else {
        (x, lo, hi)
    };
    let raised = match lo {
        Abs::None => x.clone(),
        lo => binary(Prim::Maximum, x, lo)?,
    };
    let clipped = match hi {
        Abs::None => raised.clone(),
        hi => binary(Prim::Minimum, &raised, hi)?,
    };
    if p == Prim::Clip {
        return Ok(clipped);
    }
    let d = &args[0];
    let routed = |mask: Rule| -> Rule { binary(Prim::Mul, d, &mask?) };
    Ok(match (args[4].as_i64(), lo, hi) {
        (Some(1), Abs::None, _) | (Some(2), _, Abs::None) => Abs::None,
        (Some(0), Abs::None, Abs::None) => d.clone(),
        (Some(0 | 1), lo, Abs::None) => routed(binary(Prim::Ge, x, lo))?,
        (Some(0 | 1), _, hi) => routed(binary(Prim::Le, &raised, hi))?,
        (Some(2), _, hi) => routed(binary(Prim::Gt, &raised, hi))?,
        _ => Abs::Any,
    })
}

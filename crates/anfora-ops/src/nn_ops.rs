//! The neural-network primitives: argument checking with Python's exception kinds and the
//! calls of the tensor library's kernels. Inference reads the same arguments through
//! [`NnArg`] and [`conv2d_spec`], so a bad argument known at compile time is refused there with
//! the message it would raise here.

use crate::Prim;
use anfora_tensor::{Conv2dSpec, Padding2d, Pool2dSpec, Tensor};

use crate::ops::{
    OpResult, int_arg, need_tensor, shape_arg, tensor, truth, type_error, value_error,
};
use crate::pynum::PyErr;
use crate::value::Value;

/// A hyper-parameter of an nn primitive as it was passed: an int, a tuple of ints, a string,
/// or something else (its type name).
#[derive(Clone, Debug, PartialEq)]
pub enum NnArg {
    Int(i64),
    Ints(Vec<i64>),
    Str(String),
    None,
    Other(&'static str),
}

impl NnArg {
    pub fn of(v: &Value) -> NnArg {
        match v {
            Value::None => NnArg::None,
            Value::Str(s) => NnArg::Str(s.to_string()),
            Value::Tuple(items) | Value::List(items) => {
                match items
                    .iter()
                    .map(Value::as_index)
                    .collect::<Option<Vec<_>>>()
                {
                    Some(v) => NnArg::Ints(v),
                    None => NnArg::Other(v.type_name()),
                }
            }
            other => match other.as_index() {
                Some(i) => NnArg::Int(i),
                None => NnArg::Other(other.type_name()),
            },
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            NnArg::Int(_) => "int",
            NnArg::Ints(_) => "tuple",
            NnArg::Str(_) => "str",
            NnArg::None => "NoneType",
            NnArg::Other(t) => t,
        }
    }
}

fn pair_text(p: [i64; 2]) -> String {
    format!("({}, {})", p[0], p[1])
}

/// An int or a pair of ints (one per spatial axis).
fn pair(op: &str, what: &str, a: &NnArg) -> Result<[i64; 2], PyErr> {
    match a {
        NnArg::Int(i) => Ok([*i, *i]),
        NnArg::Ints(v) if v.len() == 2 => Ok([v[0], v[1]]),
        NnArg::Ints(v) => Err(value_error(format!(
            "{op}: {what} must be an int or a tuple of 2 ints, got a tuple of {}",
            v.len()
        ))),
        other => Err(type_error(format!(
            "{op}() argument '{what}' must be an int or a tuple of 2 ints, not {}",
            other.type_name()
        ))),
    }
}

/// A pair of positive ints.
fn positive_pair(op: &str, what: &str, a: &NnArg) -> Result<[usize; 2], PyErr> {
    let p = pair(op, what, a)?;
    if p.iter().any(|&v| v < 1) {
        return Err(value_error(format!(
            "{op}: {what} must be positive, got {}",
            pair_text(p)
        )));
    }
    Ok(p.map(|v| v as usize))
}

/// A pair of non-negative ints.
fn padding_pair(op: &str, a: &NnArg) -> Result<[usize; 2], PyErr> {
    let p = pair(op, "padding", a)?;
    if p.iter().any(|&v| v < 0) {
        return Err(value_error(format!(
            "{op}: padding must be non-negative, got {}",
            pair_text(p)
        )));
    }
    Ok(p.map(|v| v as usize))
}

/// The hyper-parameters of `ops.conv2d`: `stride` and `dilation` positive ints or pairs,
/// `padding` a non-negative int or pair or `'valid'`/`'same'`, `groups` a positive int.
pub fn conv2d_spec(
    op: &str,
    stride: &NnArg,
    padding: &NnArg,
    dilation: &NnArg,
    groups: &NnArg,
) -> Result<Conv2dSpec, PyErr> {
    let stride = positive_pair(op, "stride", stride)?;
    let padding = match padding {
        NnArg::Str(s) if s == "valid" => Padding2d::Valid,
        NnArg::Str(s) if s == "same" => Padding2d::Same,
        NnArg::Str(s) => {
            return Err(value_error(format!(
                "{op}: invalid padding string '{s}', should be one of {{'valid', 'same'}}"
            )));
        }
        other => {
            let [h, w] = padding_pair(op, other)?;
            Padding2d::Explicit {
                h: [h, h],
                w: [w, w],
            }
        }
    };
    let dilation = positive_pair(op, "dilation", dilation)?;
    let groups = match groups {
        NnArg::Int(g) if *g >= 1 => *g as usize,
        NnArg::Int(g) => {
            return Err(value_error(format!(
                "{op}: groups must be a positive integer, got {g}"
            )));
        }
        other => {
            return Err(type_error(format!(
                "{op}() argument 'groups' must be an int, not {}",
                other.type_name()
            )));
        }
    };
    Ok(Conv2dSpec {
        stride,
        padding,
        dilation,
        groups,
    })
}

/// The hyper-parameters of `ops.max_pool2d`/`ops.avg_pool2d`: `kernel_size` a positive int or
/// pair, `stride` one too or `None` (the kernel size), `padding` a non-negative int or pair.
pub fn pool2d_spec(
    op: &str,
    kernel: &NnArg,
    stride: &NnArg,
    padding: &NnArg,
) -> Result<Pool2dSpec, PyErr> {
    let kernel = positive_pair(op, "kernel_size", kernel)?;
    let stride = match stride {
        NnArg::None => kernel,
        other => positive_pair(op, "stride", other)?,
    };
    let padding = padding_pair(op, padding)?;
    Ok(Pool2dSpec {
        kernel,
        stride,
        padding,
    })
}

fn pool_spec_of(op: &str, args: &[Value]) -> Result<Pool2dSpec, PyErr> {
    pool2d_spec(
        op,
        &NnArg::of(&args[0]),
        &NnArg::of(&args[1]),
        &NnArg::of(&args[2]),
    )
}

/// The spec from the four trailing arguments `stride, padding, dilation, groups`.
fn spec_of(op: &str, args: &[Value]) -> Result<Conv2dSpec, PyErr> {
    conv2d_spec(
        op,
        &NnArg::of(&args[0]),
        &NnArg::of(&args[1]),
        &NnArg::of(&args[2]),
        &NnArg::of(&args[3]),
    )
}

/// `ops.clip(x, min, max)`: numpy's `clip`, `minimum(maximum(x, min), max)` with numpy's
/// broadcasting and promotion; a `None` bound is left out.
fn clip(x: &Value, lo: &Value, hi: &Value) -> OpResult {
    if !matches!(x, Value::Tensor(_)) && x.as_scalar().is_none() {
        return Err(type_error(format!(
            "ops.clip() expects a Tensor or a number, got {}",
            x.type_name()
        )));
    }
    // numpy broadcasts the operands together first, so a mismatch names every shape.
    let shapes: Vec<&[usize]> = [x, lo, hi]
        .into_iter()
        .filter(|v| !matches!(v, Value::None))
        .map(|v| match v {
            Value::Tensor(t) => t.shape(),
            _ => &[],
        })
        .collect();
    tensor(anfora_tensor::broadcast_shapes_n(&shapes))?;
    // ... and computes in their dtype taken together: the tensors are cast to it first, so
    // that the Python numbers (weak, NEP 50) promote against all of them at once.
    let operands = [x, lo, hi];
    let dtypes: Vec<_> = operands
        .iter()
        .filter_map(|v| match v {
            Value::Tensor(t) => Some(t.dtype()),
            _ => None,
        })
        .collect();
    let scalars: Vec<_> = operands
        .iter()
        .filter(|v| !matches!(v, Value::Tensor(_)))
        .filter_map(|v| v.as_scalar())
        .collect();
    let common = anfora_tensor::result_type(&dtypes, &scalars);
    let cast = |v: &Value| match (v, common) {
        (Value::Tensor(t), Some(d)) if t.dtype() != d => Value::Tensor(t.cast(d)),
        _ => v.clone(),
    };
    let mut v = cast(x);
    let mut sink = std::io::sink();
    if !matches!(lo, Value::None) {
        v = crate::ops::call_prim(Prim::Maximum, &[v, cast(lo)], &mut sink)?;
    }
    if !matches!(hi, Value::None) {
        v = crate::ops::call_prim(Prim::Minimum, &[v, cast(hi)], &mut sink)?;
    }
    Ok(v)
}

/// `ClipGrad(d, x, min, max, which)`: where the sensitivity `d` of `clip(x, min, max)` flows,
/// to `x` (which 0), `min` (1) or `max` (2). As for `maximum` and `minimum`, a tie goes to
/// the first operand: `x` at `min`, the clipped value at `max`. `None` for a `None` bound.
fn clip_grad(d: &Value, x: &Value, lo: &Value, hi: &Value, which: &Value) -> OpResult {
    let op = |p: Prim, a: &Value, b: &Value| {
        crate::ops::call_prim(p, &[a.clone(), b.clone()], &mut std::io::sink())
    };
    let which = int_arg(which)?;
    let has_lo = !matches!(lo, Value::None);
    let has_hi = !matches!(hi, Value::None);
    let raised = if has_lo {
        op(Prim::Maximum, x, lo)?
    } else {
        x.clone()
    };
    let mut g = d.clone();
    match which {
        0 => {
            if has_lo {
                g = op(Prim::Mul, &g, &op(Prim::Ge, x, lo)?)?;
            }
            if has_hi {
                g = op(Prim::Mul, &g, &op(Prim::Le, &raised, hi)?)?;
            }
        }
        1 if has_lo => {
            g = op(Prim::Mul, &g, &op(Prim::Lt, x, lo)?)?;
            if has_hi {
                g = op(Prim::Mul, &g, &op(Prim::Le, &raised, hi)?)?;
            }
        }
        2 if has_hi => g = op(Prim::Mul, &g, &op(Prim::Gt, &raised, hi)?)?,
        1 | 2 => return Ok(Value::None),
        other => return Err(value_error(format!("ClipGrad: no operand {other}"))),
    }
    Ok(g)
}

/// The nn primitives, arguments bound to their signatures.
pub fn call(p: Prim, args: &[Value]) -> OpResult {
    let op = p.python_name();
    let op = op.strip_prefix("ops.").unwrap_or(&op);
    let t = match p {
        Prim::Clip => return clip(&args[0], &args[1], &args[2]),
        Prim::ClipGrad => return clip_grad(&args[0], &args[1], &args[2], &args[3], &args[4]),
        Prim::Conv2D => {
            let x = need_tensor(&args[0], "ops.conv2d")?;
            let w = need_tensor(&args[1], "ops.conv2d")?;
            let spec = spec_of(op, &args[2..6])?;
            Tensor::conv2d(x, w, &spec)
        }
        Prim::Conv2DBackpropInput => {
            let d = need_tensor(&args[0], op)?;
            let w = need_tensor(&args[1], op)?;
            let shape = shape_arg(&args[2])?;
            let spec = spec_of(op, &args[3..7])?;
            Tensor::conv2d_backprop_input(d, w, &shape, &spec)
        }
        Prim::Conv2DBackpropFilter => {
            let d = need_tensor(&args[0], op)?;
            let x = need_tensor(&args[1], op)?;
            let shape = shape_arg(&args[2])?;
            let spec = spec_of(op, &args[3..7])?;
            Tensor::conv2d_backprop_filter(d, x, &shape, &spec)
        }
        Prim::MaxPool2D | Prim::AvgPool2D => {
            let x = need_tensor(&args[0], &format!("ops.{op}"))?;
            let spec = pool_spec_of(op, &args[1..4])?;
            if p == Prim::MaxPool2D {
                Tensor::max_pool2d(x, &spec)
            } else {
                Tensor::avg_pool2d(x, &spec)
            }
        }
        Prim::MaxPool2DGrad | Prim::MaxPool2DGradGrad => {
            let d = need_tensor(&args[0], op)?;
            let x = need_tensor(&args[1], op)?;
            let spec = pool_spec_of(op, &args[2..5])?;
            if p == Prim::MaxPool2DGrad {
                Tensor::max_pool2d_grad(d, x, &spec)
            } else {
                Tensor::max_pool2d_grad_grad(d, x, &spec)
            }
        }
        Prim::AvgPool2DGrad => {
            let d = need_tensor(&args[0], op)?;
            let shape = shape_arg(&args[1])?;
            let spec = pool_spec_of(op, &args[2..5])?;
            Tensor::avg_pool2d_grad(d, &shape, &spec)
        }
        Prim::Softmax | Prim::LogSoftmax => {
            let x = need_tensor(&args[0], &format!("ops.{op}"))?;
            let axis = int_arg(&args[1])?;
            if p == Prim::Softmax {
                Tensor::softmax(x, axis)
            } else {
                Tensor::log_softmax(x, axis)
            }
        }
        Prim::LogSumExp => {
            let x = need_tensor(&args[0], "ops.logsumexp")?;
            let axes = match &args[1] {
                Value::None => None,
                Value::Tuple(items) | Value::List(items) => {
                    Some(items.iter().map(int_arg).collect::<Result<Vec<_>, _>>()?)
                }
                v => Some(vec![int_arg(v)?]),
            };
            Tensor::logsumexp(x, axes.as_deref(), truth(&args[2])?)
        }
        other => {
            return Err(type_error(format!(
                "{} is not a neural-network primitive",
                other.name()
            )));
        }
    };
    tensor(t).map(Value::Tensor)
}

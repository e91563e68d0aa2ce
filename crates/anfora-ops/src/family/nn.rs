//! Neural-network operations: 2-D convolution and pooling with their gradient kernels, and the
//! softmax family (`softmax`, `log_softmax`, `logsumexp`).

use anfora_tensor::{
    Conv2dSpec, DType, Padding2d, Pool2dSpec, Tensor, conv2d_output_shape, nn_float_dtype,
    pool2d_output_shape,
};

use crate::abs::{Abs, Rule, RuleError, TensorAbs, err, from_tensor_error, shape_text};
use crate::args::{
    int_arg, need_tensor, normalize_axis, shape_arg, shape_arg_abs, shaped_like_x, tensor_abs,
};
use crate::constant::Const;
use std::io::Write;

use crate::def::{Backward, PrimDef, Py, first, primitives, unless_known_args};
use crate::emit::{Call, Emit, Grads, reduce_back, shape_of};
use crate::ids::NodeId;
use crate::prim::Prim;
use crate::pynum::{PyErr, tensor, type_error, value_error};
use crate::python::truth;
use crate::value::{OpResult, Value};

primitives! {
    family nn = 9;

    /// `ops.conv2d(x, weight, stride=1, padding=0, dilation=1, groups=1)`: 2-D convolution
    /// (cross-correlation) of an (N, C, H, W) or (C, H, W) float input with an
    /// (O, C/groups, KH, KW) weight.
    Conv2D = network(PrimDef::new("Conv2D",
        "(x, weight, stride=1, padding=0, dilation=1, groups=1)", |_, a| conv2d_abs(a), conv2d,
        Backward::Rule(conv2d_back)))
        .called(&[Py::Op("conv2d")]);
    /// `Conv2DBackpropInput(d, weight, input_shape, stride, padding, dilation, groups)`: the
    /// gradient of `Conv2D` with respect to its input (a transposed convolution of `d`).
    Conv2DBackpropInput = network(PrimDef::new("Conv2DBackpropInput",
        "(d, weight, input_shape, stride, padding, dilation, groups)", |_, a| conv_grad_abs(a),
        |p, a, _| conv_grad(p, a, Tensor::conv2d_backprop_input),
        Backward::Rule(|e, c| conv_grad_back(e, c, [Prim::Conv2DBackpropFilter, Prim::Conv2D]))));
    /// `Conv2DBackpropFilter(d, x, weight_shape, stride, padding, dilation, groups)`: the
    /// gradient of `Conv2D` with respect to its weight.
    Conv2DBackpropFilter = network(PrimDef::new("Conv2DBackpropFilter",
        "(d, x, weight_shape, stride, padding, dilation, groups)", |_, a| conv_grad_abs(a),
        |p, a, _| conv_grad(p, a, Tensor::conv2d_backprop_filter),
        Backward::Rule(|e, c| conv_grad_back(e, c, [Prim::Conv2DBackpropInput, Prim::Conv2D]))));
    /// `ops.max_pool2d(x, kernel_size, stride=None, padding=0)`: the largest element of each
    /// window (`stride` defaults to the kernel size; `-inf` padding).
    MaxPool2D = pooling("MaxPool2D", &[Py::Op("max_pool2d")],
        |e, c| e.op(Prim::MaxPool2DGrad, &[&[c.d, c.x[0]], &c.x[1..4]].concat()));
    /// `ops.avg_pool2d(x, kernel_size, stride=None, padding=0)`: the mean of each window, the
    /// zero padding counted.
    AvgPool2D = pooling("AvgPool2D", &[Py::Op("avg_pool2d")],
        |e, c| { let shape = shape_of(e, c.x[0]);
            e.op(Prim::AvgPool2DGrad, &[&[c.d, shape], &c.x[1..4]].concat())
        });
    /// `MaxPool2DGrad(d, x, kernel_size, stride, padding)`: each window's sensitivity at its
    /// first largest element of `x`. Linear in `d`; where the maxima are only changes where
    /// `x` ties, so `x` gets no gradient.
    MaxPool2DGrad = network(PrimDef::new("MaxPool2DGrad", "(d, x, kernel_size, stride, padding)",
        |_, a| Ok(shaped_like_x(a)), |p, a, _| pool_grad(p, a, Tensor::max_pool2d_grad),
        first(|e, c| e.op(Prim::MaxPool2DGradGrad, &[&[c.d, c.x[1]], &c.x[2..5]].concat()))));
    /// `MaxPool2DGradGrad(dd, x, kernel_size, stride, padding)`: `dd` (shaped like `x`) read at
    /// each window's first largest element (the adjoint of `MaxPool2DGrad` in `d`).
    MaxPool2DGradGrad = network(PrimDef::new("MaxPool2DGradGrad",
        "(d, x, kernel_size, stride, padding)", max_pool_grad_grad_abs,
        |p, a, _| pool_grad(p, a, Tensor::max_pool2d_grad_grad),
        first(|e, c| e.op(Prim::MaxPool2DGrad, &[&[c.d, c.x[1]], &c.x[2..5]].concat()))));
    /// `AvgPool2DGrad(d, input_shape, kernel_size, stride, padding)`: each window's sensitivity
    /// shared by its positions.
    AvgPool2DGrad = network(PrimDef::new("AvgPool2DGrad",
        "(d, input_shape, kernel_size, stride, padding)", avg_pool_grad_abs, avg_pool_grad,
        first(|e, c| e.op(Prim::AvgPool2D, &[&[c.d], &c.x[2..5]].concat()))));
    /// `ops.softmax(x, axis=-1)`. With s = softmax(x): dx = s * (d - sum(d * s)), the sum over
    /// the axis, kept.
    Softmax = network(PrimDef::new("Softmax", "(x, axis=-1)", |_, a| softmax_abs("softmax", a),
        |_, a, _| softmax(a, "ops.softmax", Tensor::softmax), Backward::Rule(softmax_back)))
        .called(&[Py::Op("softmax")]);
    /// `ops.log_softmax(x, axis=-1)`. With l = log_softmax(x): dx = d - exp(l) * sum(d), the
    /// sum over the axis, kept.
    LogSoftmax = network(PrimDef::new("LogSoftmax", "(x, axis=-1)",
        |_, a| softmax_abs("log_softmax", a),
        |_, a, _| softmax(a, "ops.log_softmax", Tensor::log_softmax),
        Backward::Rule(log_softmax_back)))
        .called(&[Py::Op("log_softmax")]);
    /// `ops.logsumexp(x, axis=None, keepdims=False)`: dx = d * exp(x - out), broadcast over
    /// the reduced axes.
    LogSumExp = network(PrimDef::new("LogSumExp", "(x, axis=None, keepdims=False)",
        |_, a| logsumexp_abs(a), logsumexp, Backward::Rule(|e, c| reduce_back(e, c, "logsumexp"))))
        .called(&[Py::Op("logsumexp")]);
}

/// A neural-network operation: it raises only for arguments inference could not check.
const fn network(def: PrimDef) -> PrimDef {
    def.tensor_kernel().raising(unless_known_args)
}

/// A 2-D pooling, whose sensitivity `back` computes.
const fn pooling(
    name: &'static str,
    python: &'static [Py],
    back: fn(&mut dyn Emit, &Call) -> NodeId,
) -> PrimDef {
    let signature = "(x, kernel_size, stride=None, padding=0)";
    network(PrimDef::new(name, signature, pool_abs, pool, first(back))).called(python)
}

fn conv2d(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.conv2d")?;
    let w = need_tensor(&a[1], "ops.conv2d")?;
    let spec = spec_of("conv2d", &a[2..6])?;
    tensor(Tensor::conv2d(x, w, &spec)).map(Value::Tensor)
}

type ConvGradFn = fn(&Tensor, &Tensor, &[usize], &Conv2dSpec) -> anfora_tensor::Result<Tensor>;

/// A gradient kernel of `conv2d`: `(d, other, shape, stride, padding, dilation, groups)`.
fn conv_grad(p: Prim, a: &[Value], f: ConvGradFn) -> OpResult {
    let d = need_tensor(&a[0], p.name())?;
    let other = need_tensor(&a[1], p.name())?;
    let spec = spec_of(p.name(), &a[3..7])?;
    tensor(f(d, other, &shape_arg(&a[2])?, &spec)).map(Value::Tensor)
}

/// Convolution is bilinear in (x, weight); each backward kernel is bilinear in its two
/// tensors too, and their adjoints are the other two kernels.
fn conv2d_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let (x, d) = (c.x, c.d);
    let spec = &x[2..6];
    Some(c.each(e, 0..2, |e, i| {
        let shape = shape_of(e, x[i]);
        let (kernel, other) = if i == 0 {
            (Prim::Conv2DBackpropInput, x[1])
        } else {
            (Prim::Conv2DBackpropFilter, x[0])
        };
        e.op(kernel, &[&[d, other, shape], spec].concat())
    }))
}

/// The adjoints of a gradient kernel `out = k(d0, o)`: `<D, k(d0, o)>` is `<conv(.), d0>`
/// and `<o, other(., D)>`, `other` the remaining gradient kernel. For the input gradient
/// (o = w): conv(D, w) and dW(d0, D); for the filter gradient (o = x): conv(x, D) and
/// dx(d0, D).
fn conv_grad_back(e: &mut dyn Emit, c: &Call, [other, conv]: [Prim; 2]) -> Option<Grads> {
    let (x, d) = (c.x, c.d);
    let spec = &x[3..7];
    Some(c.each(e, 0..2, |e, i| {
        if i == 0 {
            let pair = if other == Prim::Conv2DBackpropFilter {
                [d, x[1]]
            } else {
                [x[1], d]
            };
            return e.op(conv, &[&pair[..], spec].concat());
        }
        let shape = shape_of(e, x[1]);
        e.op(other, &[&[x[0], d, shape], spec].concat())
    }))
}

fn pool(p: Prim, args: &[Value], _: &mut dyn Write) -> OpResult {
    let op = if p == Prim::MaxPool2D {
        "max_pool2d"
    } else {
        "avg_pool2d"
    };
    let x = need_tensor(&args[0], &format!("ops.{op}"))?;
    let spec = pool_spec_of(op, &args[1..4])?;
    let f = if p == Prim::MaxPool2D {
        Tensor::max_pool2d
    } else {
        Tensor::avg_pool2d
    };
    tensor(f(x, &spec)).map(Value::Tensor)
}

fn avg_pool_grad(p: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let d = need_tensor(&a[0], p.name())?;
    let shape = shape_arg(&a[1])?;
    let spec = pool_spec_of(p.name(), &a[2..5])?;
    tensor(Tensor::avg_pool2d_grad(d, &shape, &spec)).map(Value::Tensor)
}

fn logsumexp(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.logsumexp")?;
    let axes = match &a[1] {
        Value::None => None,
        Value::Tuple(items) | Value::List(items) => {
            Some(items.iter().map(int_arg).collect::<Result<Vec<_>, _>>()?)
        }
        v => Some(vec![int_arg(v)?]),
    };
    tensor(Tensor::logsumexp(x, axes.as_deref(), truth(&a[2])?)).map(Value::Tensor)
}

fn softmax_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let keep = e.konst(Const::Bool(true));
    let ds = e.op(Prim::Mul, &[c.d, c.out]);
    let total = e.op(Prim::ReduceSum, &[ds, c.x[1], keep]);
    let centered = e.op(Prim::Sub, &[c.d, total]);
    let mut g = c.none();
    g[0] = Some(e.op(Prim::Mul, &[c.out, centered]));
    Some(g)
}

fn log_softmax_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let keep = e.konst(Const::Bool(true));
    let total = e.op(Prim::ReduceSum, &[c.d, c.x[1], keep]);
    let s = e.op(Prim::Exp, &[c.out]);
    let t = e.op(Prim::Mul, &[s, total]);
    let mut g = c.none();
    g[0] = Some(e.op(Prim::Sub, &[c.d, t]));
    Some(g)
}

type PoolGradFn = fn(&Tensor, &Tensor, &Pool2dSpec) -> anfora_tensor::Result<Tensor>;

fn pool_grad(p: Prim, args: &[Value], f: PoolGradFn) -> OpResult {
    let d = need_tensor(&args[0], p.name())?;
    let x = need_tensor(&args[1], p.name())?;
    let spec = pool_spec_of(p.name(), &args[2..5])?;
    tensor(f(d, x, &spec)).map(Value::Tensor)
}

type SoftmaxFn = fn(&Tensor, i64) -> anfora_tensor::Result<Tensor>;

fn softmax(args: &[Value], name: &str, f: SoftmaxFn) -> OpResult {
    let x = need_tensor(&args[0], name)?;
    tensor(f(x, int_arg(&args[1])?)).map(Value::Tensor)
}

/// A hyper-parameter of an nn primitive as it was passed: an int, a tuple of ints, a string,
/// or something else (its type name).
#[derive(Clone, Debug, PartialEq)]
enum NnArg {
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
fn conv2d_spec(op: &str, args: &[NnArg]) -> Result<Conv2dSpec, PyErr> {
    let [stride, padding, dilation, groups] = [&args[0], &args[1], &args[2], &args[3]];
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
fn pool2d_spec(op: &str, args: &[NnArg]) -> Result<Pool2dSpec, PyErr> {
    let [kernel, stride, padding] = [&args[0], &args[1], &args[2]];
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

/// The hyper-parameters of a pooling from its three trailing arguments `kernel_size, stride,
/// padding`.
fn pool_spec_of(op: &str, args: &[Value]) -> Result<Pool2dSpec, PyErr> {
    pool2d_spec(op, &args.iter().map(NnArg::of).collect::<Vec<_>>())
}

/// The spec from the four trailing arguments `stride, padding, dilation, groups`.
fn spec_of(op: &str, args: &[Value]) -> Result<Conv2dSpec, PyErr> {
    conv2d_spec(op, &args.iter().map(NnArg::of).collect::<Vec<_>>())
}

// ---- abstract values ----------------------------------------------------------------------

fn pool_abs(p: Prim, a: &[Abs]) -> Rule {
    let op = if p == Prim::MaxPool2D {
        "max_pool2d"
    } else {
        "avg_pool2d"
    };
    pool2d_abs_named(op, &a[0], &a[1..4])
}

/// Shaped like the pooling's output.
fn max_pool_grad_grad_abs(_: Prim, a: &[Abs]) -> Rule {
    match (&a[0], &a[1]) {
        (Abs::Tensor(_), x @ Abs::Tensor(_)) => pool2d_abs_named("max_pool2d", x, &a[2..5]),
        (Abs::Any, _) | (_, Abs::Any) => Ok(Abs::Any),
        _ => Ok(Abs::Bottom),
    }
}

fn avg_pool_grad_abs(_: Prim, a: &[Abs]) -> Rule {
    match &a[0] {
        Abs::Tensor(d) => Ok(match shape_arg_abs(&a[1]) {
            Some(shape) => tensor_abs(d.dtype, shape),
            None => Abs::Any,
        }),
        Abs::Any => Ok(Abs::Any),
        _ => Ok(Abs::Bottom),
    }
}
fn nn_arg(a: &Abs) -> Option<NnArg> {
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

/// A hyper-parameter set checked at compile time by `spec`, the check of run time.
fn checked<T>(
    op: &str,
    args: &[Abs],
    spec: fn(&str, &[NnArg]) -> Result<T, PyErr>,
) -> Result<Checked<T>, RuleError> {
    let Some(parts) = args.iter().map(nn_arg).collect::<Option<Vec<NnArg>>>() else {
        return Ok(Checked::Unknown);
    };
    match spec(op, &parts) {
        Ok(spec) => Ok(Checked::Known(spec)),
        Err(("TypeError", _)) => Ok(Checked::RaisesAtRunTime),
        Err((_, msg)) => Err(err(msg)),
    }
}

fn conv2d_abs(args: &[Abs]) -> Rule {
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
    let spec = match checked("conv2d", &args[2..6], conv2d_spec)? {
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

/// `ops.max_pool2d`/`ops.avg_pool2d` (`op`) of `x` with the hyper-parameters `args`.
fn pool2d_abs_named(op: &str, x: &Abs, args: &[Abs]) -> Rule {
    let x = match x {
        Abs::Tensor(x) => x,
        Abs::Any => return Ok(Abs::Any),
        _ => return Ok(Abs::Bottom),
    };
    // A quantized activation's maximum stays uint8 (exact); anything else pools in float.
    let dtype = match x.dtype {
        DType::U8 if op == "max_pool2d" => DType::U8,
        _ => float_dtype(op, &[x])?,
    };
    if !matches!(x.shape.len(), 3 | 4) {
        return Err(err(format!(
            "{op}: expected a 4-D input (N, C, H, W) or a 3-D one (C, H, W), got shape {}",
            shape_text(&x.shape, "?", ", ")
        )));
    }
    let spec = match checked(op, args, pool2d_spec)? {
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
fn softmax_abs(op: &str, args: &[Abs]) -> Rule {
    let x = match &args[0] {
        Abs::Tensor(x) => x,
        Abs::Any => return Ok(Abs::Any),
        _ => return Ok(Abs::Bottom),
    };
    let dtype = float_dtype(op, &[x])?;
    match &args[1] {
        Abs::Int(Some(a)) => {
            normalize_axis(*a, x.shape.len()).map_err(|e| err(format!("{op}: {}", e.0)))?;
        }
        Abs::Int(None) | Abs::Bool(_) | Abs::Any => {}
        // Not an int: a TypeError at run time.
        _ => return Ok(Abs::Bottom),
    }
    Ok(tensor_abs(dtype, x.shape.clone()))
}

/// `ops.logsumexp`: the shape of a sum over the axes, in the float tensor's dtype.
fn logsumexp_abs(args: &[Abs]) -> Rule {
    let x = match &args[0] {
        Abs::Tensor(x) => x,
        Abs::Any => return Ok(Abs::Any),
        _ => return Ok(Abs::Bottom),
    };
    let dtype = float_dtype("logsumexp", &[x])?;
    Ok(match Prim::ReduceSum.infer(args)? {
        Abs::Tensor(t) => tensor_abs(dtype, t.shape.clone()),
        other => other,
    })
}

/// A backward kernel: a tensor of the sensitivity's dtype and the shape it is given.
fn conv_grad_abs(args: &[Abs]) -> Rule {
    match (&args[0], &args[1]) {
        (Abs::Tensor(d), Abs::Tensor(_)) => Ok(match shape_arg_abs(&args[2]) {
            Some(shape) => tensor_abs(d.dtype, shape),
            None => Abs::Any,
        }),
        (Abs::Any, _) | (_, Abs::Any) => Ok(Abs::Any),
        _ => Ok(Abs::Bottom),
    }
}

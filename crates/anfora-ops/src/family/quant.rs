//! Quantized models' operations (issue 28): what the offline converter emits,
//! `QuantizeLinear` / `DequantizeLinear` between float32 and `u8` with a scale and zero point,
//! the `u8 × i8` product accumulated in `i32` with its bias, requantization and ReLU fused
//! (`QLinearMatMul`, `QLinearConv`), weight-only quantization's product (`MatMulWeightOnly`),
//! and quant-aware training's fake quantization with its straight-through gradient. Their
//! kernels are `anfora-tensor`'s (`Tensor::quantize_u8`, `quant_matmul`, ...); both engines run
//! the same integer arithmetic, so they give the same integers.

use std::io::Write;

use anfora_tensor::{DType, QuantOutput, QuantWeights, Tensor, U8Quant};

use crate::abs::{Abs, Rule, err};
use crate::args::{need_tensor, tensor_abs};
use crate::def::{Backward, PrimDef, Py, primitives};
use crate::prim::Prim;
use crate::pynum::{PyErr, tensor, type_error};
use crate::python::truth;
use crate::value::{OpResult, Value};

const NO_GRADIENT: &str =
    "quantized values have no gradient (quant-aware training uses fake quantization)";

primitives! {
    family quant = 16;

    /// `ops.quantize(x, scale, zero_point)`: float32 `x` as `uint8`,
    /// `clamp(round_half_even(x / scale) + zero_point, 0, 255)`.
    Quantize = PrimDef::new("QuantizeLinear", "(x, scale, zero_point)",
        |_, a| convert_abs(a, DType::F32, DType::U8), quantize, Backward::Refused(NO_GRADIENT))
        .tensor_kernel().called(&[Py::Op("quantize")]);
    /// `ops.dequantize(q, scale, zero_point)`: `uint8` `q` as float32, `(q - zero_point) * scale`.
    Dequantize = PrimDef::new("DequantizeLinear", "(q, scale, zero_point)",
        |_, a| convert_abs(a, DType::U8, DType::F32), dequantize, Backward::Refused(NO_GRADIENT))
        .tensor_kernel().called(&[Py::Op("dequantize")]);
    /// `ops.quant_matmul(a, a_scale, a_zero, w, w_scales, bias, out_scale, out_zero, relu)`:
    /// the `uint8` m×k `a` times the `int8` k×n `w` (column `j` scaled by `w_scales[j]`), plus
    /// the `int32` `bias`, summed in `int32`; `uint8` in the output's quantization (clamped at
    /// its zero point when `relu`), or float32 when `out_scale` is None.
    QuantMatMul = PrimDef::new("QLinearMatMul",
        "(a, a_scale, a_zero, w, w_scales, bias, out_scale, out_zero, relu)", quant_matmul_abs,
        quant_matmul, Backward::Refused(NO_GRADIENT))
        .tensor_kernel().called(&[Py::Op("quant_matmul")]);
    /// `ops.quant_conv2d(x, x_scale, x_zero, w, kernel_size, w_scales, bias, out_scale,
    /// out_zero, relu, stride, padding, dilation)`: the `uint8` (N, C, H, W) `x` convolved with
    /// the `int8` (C·KH·KW)×O weight matrix `w` (one group), the padding
    /// `(top, bottom, left, right)` filled with `x_zero`; the rest as `quant_matmul`.
    QuantConv2D = PrimDef::new("QLinearConv",
        "(x, x_scale, x_zero, w, kernel_size, w_scales, bias, out_scale, out_zero, relu, \
          stride, padding, dilation)", quant_conv_abs, quant_conv, Backward::Refused(NO_GRADIENT))
        .tensor_kernel().called(&[Py::Op("quant_conv2d")]);
    /// `ops.fake_quant(x, min, max)`: quant-aware training's fake quantization of float32 `x`,
    /// `dequantize(quantize(x))` in the `uint8` quantization of range `[min, max]` (widened to
    /// hold 0), with the straight-through gradient: `d` where `x` is inside the range, zero
    /// where it was clipped; `min` and `max` (tracked, not learned) get none.
    FakeQuant = PrimDef::new("FakeQuantPerLayer", "(x, min, max)",
        |_, a| convert_abs(a, DType::F32, DType::F32), fake_quant,
        Backward::First(|e, c| e.op(Prim::FakeQuantGrad, &[c.d, c.x[0], c.x[1], c.x[2]])))
        .tensor_kernel().called(&[Py::Op("fake_quant")]);
    /// `FakeQuantGrad(d, x, min, max)`: `FakeQuant`'s straight-through gradient (linear in `d`).
    FakeQuantGrad = PrimDef::new("FakeQuantGrad", "(d, x, min, max)",
        |_, a| convert_abs(a, DType::F32, DType::F32), fake_quant_grad,
        Backward::First(|e, c| e.op(Prim::FakeQuantGrad, &[c.d, c.x[1], c.x[2], c.x[3]])))
        .tensor_kernel();
    /// `ops.weight_only_matmul(x, w, w_scales)`: float32 m×k `x` times the k×n weights `w`
    /// (`int8`, or `uint8` 4-bit pairs, k×⌈n/2⌉), column `j` scaled by `w_scales[j]`; the
    /// weights stay narrow in memory.
    WeightOnlyMatMul = PrimDef::new("MatMulWeightOnly", "(x, w, w_scales)", weight_only_abs,
        weight_only, Backward::Refused(NO_GRADIENT))
        .tensor_kernel().called(&[Py::Op("weight_only_matmul")]);
}

/// A tensor of dtype `from` becomes one of dtype `to`, shaped alike.
fn convert_abs(a: &[Abs], from: DType, to: DType) -> Rule {
    match &a[0] {
        Abs::Tensor(t) if t.dtype == from => Ok(tensor_abs(to, t.shape.clone())),
        Abs::Tensor(t) => Err(err(format!("takes a {from} tensor, not {}", t.dtype))),
        Abs::Any => Ok(Abs::Any),
        _ => Ok(Abs::Bottom),
    }
}

/// The m×n result of an m×k by k×n product, of dtype `dtype`.
fn product_abs(x: &Abs, w: &Abs, dtype: DType) -> Rule {
    match (x, w) {
        (Abs::Tensor(x), Abs::Tensor(w)) if x.shape.len() == 2 && w.shape.len() == 2 => {
            Ok(tensor_abs(dtype, vec![x.shape[0], w.shape[1]]))
        }
        (Abs::Tensor(_), Abs::Tensor(_)) => Err(err("a quantized product takes 2-D operands")),
        _ => Ok(Abs::Any),
    }
}

fn quant_matmul_abs(_: Prim, a: &[Abs]) -> Rule {
    let out = if matches!(a[6], Abs::None) {
        DType::F32
    } else {
        DType::U8
    };
    product_abs(&a[0], &a[3], out)
}

fn quant_conv_abs(_: Prim, a: &[Abs]) -> Rule {
    let out = if matches!(a[7], Abs::None) {
        DType::F32
    } else {
        DType::U8
    };
    let (Abs::Tensor(x), Abs::Tensor(w)) = (&a[0], &a[3]) else {
        return Ok(Abs::Any);
    };
    let consts: Option<Vec<Value>> = [&a[4], &a[10], &a[11], &a[12]]
        .iter()
        .map(|a| crate::abs::to_value(a))
        .collect();
    match (x.known_shape(), w.known_shape(), consts) {
        (Some(xs), Some(ws), Some(c)) => {
            let (kernel, spec) = conv_args(&c[0], &c[1], &c[2], &c[3]).map_err(|e| err(e.1))?;
            let o = ws.get(1).copied().unwrap_or(0);
            let ch = xs.len().checked_sub(3).map_or(0, |i| xs[i]);
            let shape =
                anfora_tensor::conv2d_output_shape(&xs, &[o, ch, kernel[0], kernel[1]], &spec)
                    .map_err(crate::abs::from_tensor_error)?;
            Ok(tensor_abs(out, shape.into_iter().map(Some).collect()))
        }
        _ => Ok(tensor_abs(out, vec![None; x.shape.len()])),
    }
}

/// m×n float32 from the m×k input and the n scales (the weights may be 4-bit pairs).
fn weight_only_abs(_: Prim, a: &[Abs]) -> Rule {
    match (&a[0], &a[2]) {
        (Abs::Tensor(x), Abs::Tensor(s)) if x.shape.len() == 2 && s.shape.len() == 1 => {
            Ok(tensor_abs(DType::F32, vec![x.shape[0], s.shape[0]]))
        }
        (Abs::Tensor(_), Abs::Tensor(_)) => Err(err(
            "a weight-only product takes a 2-D input and 1-D scales",
        )),
        _ => Ok(Abs::Any),
    }
}

/// A scale: a Python float or int.
fn scale_arg(v: &Value) -> Result<f32, PyErr> {
    match v {
        Value::Float(f) => Ok(*f as f32),
        Value::Int(i) => Ok(*i as f32),
        other => Err(type_error(format!(
            "a scale is a float, not '{}'",
            other.type_name()
        ))),
    }
}

/// A `uint8` zero point.
fn zero_arg(v: &Value) -> Result<u8, PyErr> {
    match v {
        Value::Int(i) => u8::try_from(*i)
            .map_err(|_| crate::pynum::value_error(format!("a uint8 zero point, not {i}"))),
        other => Err(type_error(format!(
            "a zero point is an int, not '{}'",
            other.type_name()
        ))),
    }
}

fn quantization(scale: &Value, zero: &Value) -> Result<U8Quant, PyErr> {
    Ok(U8Quant {
        scale: scale_arg(scale)?,
        zero: zero_arg(zero)?,
    })
}

fn quantize(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.quantize")?;
    let q = quantization(&a[1], &a[2])?;
    tensor(x.quantize_u8(q)).map(Value::Tensor)
}

fn dequantize(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.dequantize")?;
    let q = quantization(&a[1], &a[2])?;
    tensor(x.dequantize_u8(q)).map(Value::Tensor)
}

/// A layer's weights, scales and bias from the arguments at `at`.
fn layer_args<'a>(a: &'a [Value], at: [usize; 3], func: &str) -> Result<QuantWeights<'a>, PyErr> {
    Ok(QuantWeights {
        w: need_tensor(&a[at[0]], func)?,
        scales: need_tensor(&a[at[1]], func)?,
        bias: match &a[at[2]] {
            Value::None => None,
            b => Some(need_tensor(b, func)?),
        },
    })
}

/// The output from `out_scale, out_zero, relu` (float32 when `out_scale` is None).
fn output_args(a: &[Value]) -> Result<QuantOutput, PyErr> {
    Ok(match &a[0] {
        Value::None => QuantOutput::F32,
        s => QuantOutput::U8 {
            out: quantization(s, &a[1])?,
            relu: truth(&a[2])?,
        },
    })
}

fn quant_matmul(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let func = "ops.quant_matmul";
    let x = need_tensor(&a[0], func)?;
    let aq = quantization(&a[1], &a[2])?;
    let (layer, output) = (layer_args(a, [3, 4, 5], func)?, output_args(&a[6..9])?);
    tensor(Tensor::quant_matmul(x, aq, layer, output)).map(Value::Tensor)
}

/// A pair of non-negative ints.
fn pair(v: &Value, what: &str) -> Result<[usize; 2], PyErr> {
    let items = match v {
        Value::Tuple(t) | Value::List(t) => t.to_vec(),
        _ => vec![],
    };
    match items.as_slice() {
        [Value::Int(a), Value::Int(b)] if *a >= 0 && *b >= 0 => Ok([*a as usize, *b as usize]),
        _ => Err(type_error(format!("{what} is a pair of non-negative ints"))),
    }
}

/// The kernel size and the convolution's spec from `kernel_size, stride, padding, dilation`
/// (`padding` four ints: top, bottom, left, right).
fn conv_args(
    kernel: &Value,
    stride: &Value,
    padding: &Value,
    dilation: &Value,
) -> Result<([usize; 2], anfora_tensor::Conv2dSpec), PyErr> {
    let pads = match padding {
        Value::Tuple(t) | Value::List(t) if t.len() == 4 => (t.iter())
            .map(|v| pair(&Value::Tuple([v.clone(), Value::Int(0)].into()), "padding"))
            .collect::<Result<Vec<_>, _>>()?,
        _ => {
            return Err(type_error(
                "padding is four non-negative ints: top, bottom, left, right",
            ));
        }
    };
    let spec = anfora_tensor::Conv2dSpec {
        stride: pair(stride, "stride")?,
        padding: anfora_tensor::Padding2d::Explicit {
            h: [pads[0][0], pads[1][0]],
            w: [pads[2][0], pads[3][0]],
        },
        dilation: pair(dilation, "dilation")?,
        groups: 1,
    };
    Ok((pair(kernel, "kernel_size")?, spec))
}

fn quant_conv(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let func = "ops.quant_conv2d";
    let x = need_tensor(&a[0], func)?;
    let xq = quantization(&a[1], &a[2])?;
    let (layer, output) = (layer_args(a, [3, 5, 6], func)?, output_args(&a[7..10])?);
    let (kernel, spec) = conv_args(&a[4], &a[10], &a[11], &a[12])?;
    tensor(Tensor::quant_conv2d(x, xq, layer, kernel, &spec, output)).map(Value::Tensor)
}

/// A range bound: a Python number or a one-element float tensor.
fn bound_arg(v: &Value) -> Result<f32, PyErr> {
    match v {
        Value::Float(f) => Ok(*f as f32),
        Value::Int(i) => Ok(*i as f32),
        Value::Tensor(t) if t.numel() == 1 => Ok(t.to_f64_vec()[0] as f32),
        other => Err(type_error(format!(
            "a fake quantization range is a number or a one-element tensor, not '{}'",
            other.type_name()
        ))),
    }
}

fn fake_quant(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let x = need_tensor(&a[0], "ops.fake_quant")?;
    tensor(x.fake_quant(bound_arg(&a[1])?, bound_arg(&a[2])?)).map(Value::Tensor)
}

fn fake_quant_grad(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let (d, x) = (
        need_tensor(&a[0], "FakeQuantGrad")?,
        need_tensor(&a[1], "FakeQuantGrad")?,
    );
    let (lo, hi) = (bound_arg(&a[2])?, bound_arg(&a[3])?);
    tensor(Tensor::fake_quant_grad(d, x, lo, hi)).map(Value::Tensor)
}

fn weight_only(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let func = "ops.weight_only_matmul";
    let (x, w, s) = (
        need_tensor(&a[0], func)?,
        need_tensor(&a[1], func)?,
        need_tensor(&a[2], func)?,
    );
    tensor(Tensor::weight_only_matmul(x, w, s)).map(Value::Tensor)
}

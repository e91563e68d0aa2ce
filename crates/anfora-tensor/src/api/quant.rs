//! Quantized models' operations on tensors: `u8` quantization of float32 activations and
//! back, the `u8 × i8` product with its requantization (or a float32 result), and weight-only
//! quantization's float32 × `i8` product. The kernels are in [`crate::quant`]; weights are
//! packed for them once per weight tensor (see [`crate::quant::packed`]).

use crate::quant::{self, MAX_DEPTH};
use crate::{DType, ErrorKind, Result, Tensor, TensorError};

/// The quantization of a `u8` tensor: `x ≈ (q − zero) · scale`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct U8Quant {
    pub scale: f32,
    pub zero: u8,
}

impl U8Quant {
    /// The quantization of range `[lo, hi]`, widened to hold 0 (so that 0 is exact: padding
    /// and ReLU's zeros stay zeros): `scale = (hi − lo) / 255`, `zero = round(−lo / scale)`.
    pub fn of_range(lo: f32, hi: f32) -> U8Quant {
        let (lo, hi) = (lo.min(0.0), hi.max(0.0));
        if hi - lo <= f32::MIN_POSITIVE || !(hi - lo).is_finite() {
            return U8Quant {
                scale: 1.0,
                zero: 0,
            };
        }
        let scale = (hi - lo) / 255.0;
        let zero = (-lo / scale).round_ties_even().clamp(0.0, 255.0) as u8;
        U8Quant { scale, zero }
    }

    /// The float values the bytes stand for, from byte 0 to byte 255.
    pub fn bounds(self) -> (f32, f32) {
        let z = f32::from(self.zero);
        ((0.0 - z) * self.scale, (255.0 - z) * self.scale)
    }
}

/// A quantized layer's weights: the `i8` k×n matrix whose column `j` stands for
/// `w[:, j] · scales[j]`, and its bias, `i32` in units of the input's scale times `scales[j]`.
#[derive(Clone, Copy, Debug)]
pub struct QuantWeights<'a> {
    pub w: &'a Tensor,
    pub scales: &'a Tensor,
    pub bias: Option<&'a Tensor>,
}

/// What a quantized product returns: `u8` values of a quantization, clamped at its zero point
/// when `relu` (ReLU fused), or float32 (the last layer's dequantized result).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QuantOutput {
    U8 { out: U8Quant, relu: bool },
    F32,
}

fn type_error(message: String) -> TensorError {
    TensorError::new(ErrorKind::Type, message)
}

fn value_error(message: String) -> TensorError {
    TensorError::new(ErrorKind::Value, message)
}

/// A valid scale: finite and positive.
fn check_scale(scale: f32, what: &str) -> Result<()> {
    if scale.is_finite() && scale > 0.0 {
        Ok(())
    } else {
        Err(value_error(format!(
            "{what} must be finite and positive, not {scale}"
        )))
    }
}

/// `(m, k)` of a matrix operand of dtype `dtype`.
fn matrix(t: &Tensor, dtype: DType, what: &str) -> Result<(usize, usize)> {
    match t.shape() {
        [m, k] if t.dtype() == dtype => Ok((*m, *k)),
        _ => Err(type_error(format!(
            "{what} must be a 2-D {dtype} tensor, not {} of shape {:?}",
            t.dtype(),
            t.shape()
        ))),
    }
}

/// A 1-D tensor of `n` elements of `dtype`.
fn vector<'a, T>(
    t: &'a Tensor,
    n: usize,
    what: &str,
    slice: impl Fn(&'a Tensor) -> Option<&'a [T]>,
) -> Result<&'a [T]> {
    match slice(t) {
        Some(v) if t.shape() == [n] => Ok(v),
        _ => Err(type_error(format!(
            "{what} must hold {n} values of one per output column, not {} of shape {:?}",
            t.dtype(),
            t.shape()
        ))),
    }
}

/// What the sums of a quantized layer become: `(sum + offset[j]) · scale[j]` per output
/// channel `j`, where the offset holds the bias and the input's zero point
/// (`bias[j] − zero · Σ_p w[p, j]`), as float32 or requantized to the output's bytes.
pub(crate) struct Epilogue {
    offset: Vec<i32>,
    scale: Vec<f32>,
    output: QuantOutput,
}

impl Epilogue {
    /// The epilogue of `layer` for an input quantized by `aq`, its weights' column sums
    /// `column_sums`; validates the scales and the bias.
    pub(crate) fn new(
        aq: U8Quant,
        layer: QuantWeights<'_>,
        column_sums: &[i32],
        output: QuantOutput,
    ) -> Result<Epilogue> {
        check_scale(aq.scale, "the input's scale")?;
        let n = column_sums.len();
        let scales = vector(layer.scales, n, "the weight scales", Tensor::as_f32_slice)?;
        if let Some(s) = scales.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
            return Err(value_error(format!(
                "a weight scale must be finite and positive, not {s}"
            )));
        }
        let bias = (layer.bias)
            .map(|b| vector(b, n, "the bias", Tensor::as_i32_slice))
            .transpose()?;
        let offset = (column_sums.iter().enumerate())
            .map(|(j, &cs)| {
                let b = bias.map_or(0, |b| b[j]);
                b.wrapping_sub(i32::from(aq.zero).wrapping_mul(cs))
            })
            .collect();
        let out_scale = match output {
            QuantOutput::F32 => 1.0,
            QuantOutput::U8 { out, .. } => {
                check_scale(out.scale, "the output's scale")?;
                out.scale
            }
        };
        let scale = scales.iter().map(|s| aq.scale * s / out_scale).collect();
        Ok(Epilogue {
            offset,
            scale,
            output,
        })
    }

    /// A result of `shape` filled by `fill` through the sink of this epilogue.
    pub(crate) fn run(
        &self,
        shape: &[usize],
        fill: impl FnOnce(quant::Sink<'_>),
    ) -> Result<Tensor> {
        let len = shape.iter().product();
        let (offset, scale) = (&self.offset[..], &self.scale[..]);
        match self.output {
            QuantOutput::F32 => {
                let mut out = crate::alloc::try_vec_of::<f32>(shape, DType::F32)?;
                out.resize(len, 0.0);
                fill(quant::Sink::Floats {
                    offset,
                    scale,
                    out: &mut out,
                });
                Tensor::from_f32(out, shape)
            }
            QuantOutput::U8 { out: q, relu } => {
                let mut out = crate::alloc::try_vec_of::<u8>(shape, DType::U8)?;
                out.resize(len, 0);
                fill(quant::Sink::Bytes {
                    offset,
                    scale,
                    zero: f32::from(q.zero),
                    lo: f32::from(if relu { q.zero } else { 0 }),
                    out: &mut out,
                });
                Tensor::from_u8(out, shape)
            }
        }
    }
}

impl Tensor {
    /// `clamp(round_half_even(x / scale) + zero, 0, 255)` as `u8` (onnxruntime's
    /// `QuantizeLinear`), for a float32 tensor.
    pub fn quantize_u8(&self, q: U8Quant) -> Result<Tensor> {
        check_scale(q.scale, "a quantization scale")?;
        let x = match self.as_f32_slice() {
            Some(x) => x,
            None => {
                return Err(type_error(format!(
                    "quantize takes float32, not {}",
                    self.dtype()
                )));
            }
        };
        let mut out = crate::alloc::try_vec_of::<u8>(self.shape(), DType::U8)?;
        out.resize(x.len(), 0);
        quant::quantize_u8(x, q.scale, q.zero, &mut out);
        Tensor::from_u8(out, self.shape())
    }

    /// Quant-aware training's fake quantization: `dequantize(quantize(x))` in the quantization
    /// of range `[lo, hi]` ([`U8Quant::of_range`]), for a float32 tensor.
    pub fn fake_quant(&self, lo: f32, hi: f32) -> Result<Tensor> {
        let q = U8Quant::of_range(lo, hi);
        self.quantize_u8(q)?.dequantize_u8(q)
    }

    /// The straight-through gradient of [`Tensor::fake_quant`]: `d` where `x` is inside the
    /// range the bytes cover (rounding passes the gradient on), zero where it was clipped.
    pub fn fake_quant_grad(d: &Tensor, x: &Tensor, lo: f32, hi: f32) -> Result<Tensor> {
        let (a, b) = U8Quant::of_range(lo, hi).bounds();
        let (Some(dv), Some(xv)) = (d.as_f32_slice(), x.as_f32_slice()) else {
            return Err(type_error(format!(
                "fake_quant takes float32, not {}",
                x.dtype()
            )));
        };
        if d.shape() != x.shape() {
            return Err(value_error(format!(
                "a sensitivity of shape {:?} for an input of shape {:?}",
                d.shape(),
                x.shape()
            )));
        }
        let out = (dv.iter().zip(xv))
            .map(|(&g, &v)| if v >= a && v <= b { g } else { 0.0 })
            .collect();
        Tensor::from_f32(out, x.shape())
    }

    /// `(q − zero) · scale` as float32, for a `u8` tensor.
    pub fn dequantize_u8(&self, q: U8Quant) -> Result<Tensor> {
        check_scale(q.scale, "a quantization scale")?;
        let Some(v) = self.as_u8_slice() else {
            return Err(type_error(format!(
                "dequantize takes uint8, not {}",
                self.dtype()
            )));
        };
        let mut out = crate::alloc::try_vec_of::<f32>(self.shape(), DType::F32)?;
        out.resize(v.len(), 0.0);
        quant::dequantize_u8(v, q.scale, q.zero, &mut out);
        Tensor::from_f32(out, self.shape())
    }

    /// The quantized product `a @ w` of a `u8` m×k matrix `a` (quantized by `aq`) and the
    /// weights of `layer`, plus its bias, accumulated in `i32` and returned as `output` says.
    pub fn quant_matmul(
        a: &Tensor,
        aq: U8Quant,
        layer: QuantWeights<'_>,
        output: QuantOutput,
    ) -> Result<Tensor> {
        check_scale(aq.scale, "the input's scale")?;
        let (m, k) = matrix(a, DType::U8, "a quantized product's input")?;
        let (wk, n) = matrix(layer.w, DType::I8, "a quantized product's weight")?;
        if wk != k {
            return Err(value_error(format!(
                "matmul: a {m}×{k} input and a {wk}×{n} weight do not match"
            )));
        }
        if k > MAX_DEPTH {
            return Err(value_error(format!(
                "a quantized product sums at most {MAX_DEPTH} terms, not {k}"
            )));
        }
        let packed = quant::packed(layer.w)?;
        let epilogue = Epilogue::new(aq, layer, packed.column_sums(), output)?;
        let data = a.as_u8_slice().expect("a u8 matrix");
        epilogue.run(&[m, n], |sink| {
            quant::matmul_u8i8_into(data, k, m, &packed, sink)
        })
    }

    /// The quantized 2-D convolution of a `u8` (N, C, H, W) image `x` (quantized by `xq`) with
    /// `layer`'s `i8` (C·KH·KW)×O weight matrix (kernel `kernel` = (KH, KW)); bias, scales and
    /// output as [`Tensor::quant_matmul`]'s; one group.
    pub fn quant_conv2d(
        x: &Tensor,
        xq: U8Quant,
        layer: QuantWeights<'_>,
        kernel: [usize; 2],
        spec: &crate::Conv2dSpec,
        output: QuantOutput,
    ) -> Result<Tensor> {
        crate::nn::quant_conv2d(x, xq, layer, kernel, spec, output)
    }

    /// Weight-only quantization's product: float32 `x` (m×k) times the k×n weights `w` whose
    /// column `j` stands for `w[:, j] · w_scales[j]`: an `i8` k×n tensor, or a `u8`
    /// k×⌈n/2⌉ tensor of 4-bit pairs (column `2t` in the low nibble of byte `t`, values
    /// `-8..=7`), `n` being the number of scales. The weights stay narrow in memory.
    pub fn weight_only_matmul(x: &Tensor, w: &Tensor, w_scales: &Tensor) -> Result<Tensor> {
        let (m, k) = matrix(x, DType::F32, "a weight-only product's input")?;
        let wk = match w.shape() {
            [wk, _] if matches!(w.dtype(), DType::I8 | DType::U8) => *wk,
            _ => {
                return Err(type_error(format!(
                    "a weight-only product's weight must be a 2-D int8 or uint8 (4-bit pairs) \
                     tensor, not {} of shape {:?}",
                    w.dtype(),
                    w.shape()
                )));
            }
        };
        let n = w_scales.numel();
        if wk != k {
            return Err(value_error(format!(
                "matmul: a {m}×{k} input and a {wk}×{n} weight do not match"
            )));
        }
        vector(w_scales, n, "the weight scales", Tensor::as_f32_slice)?;
        let packed = quant::weight_only(w, w_scales)?;
        let mut out = crate::alloc::try_vec_of::<f32>(&[m, n], DType::F32)?;
        out.resize(m * n, 0.0);
        let data = x.as_f32_slice().expect("a float32 matrix");
        quant::matmul_f32_i8(data, k, m, &packed, &mut out);
        Tensor::from_f32(out, &[m, n])
    }
}

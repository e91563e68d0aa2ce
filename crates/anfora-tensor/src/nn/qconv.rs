//! The 8-bit convolution of quantized models: `u8` images (N, C, H, W) with a zero point, the
//! padding filled with that zero point (so it stands for 0.0), laid out as columns once
//! (`im2col`), then the `u8 × i8` product of the weights, requantized per output channel.

use super::Conv2dSpec;
use super::geometry::{Conv, conv_geometry};
use crate::api::quant::{QuantOutput, U8Quant};
use crate::{DType, ErrorKind, Result, Tensor, TensorError};

/// `x` (u8, quantized by `xq`) convolved with the weights `w`, an `i8` (C·KH·KW)×O matrix
/// (the (O, C, KH, KW) weights flattened per output channel and transposed), `kernel` =
/// (KH, KW); the rest as [`Tensor::quant_matmul`].
pub(crate) fn quant_conv2d(
    x: &Tensor,
    xq: U8Quant,
    w: &Tensor,
    kernel: [usize; 2],
    w_scales: &Tensor,
    bias: Option<&Tensor>,
    spec: &Conv2dSpec,
    output: QuantOutput,
) -> Result<Tensor> {
    let op = "quant_conv2d";
    if x.dtype() != DType::U8 || w.dtype() != DType::I8 || w.ndim() != 2 {
        return Err(TensorError::new(
            ErrorKind::Type,
            format!(
                "{op} takes a uint8 image and a 2-D int8 weight matrix, not {} and {}",
                x.dtype(),
                w.dtype()
            ),
        ));
    }
    if spec.groups != 1 {
        return Err(TensorError::new(
            ErrorKind::Value,
            format!("{op}: groups must be 1"),
        ));
    }
    let c = x
        .shape()
        .get(x.ndim().wrapping_sub(3))
        .copied()
        .unwrap_or(0);
    let (k, o) = (w.shape()[0], w.shape()[1]);
    if k != c * kernel[0] * kernel[1] {
        return Err(TensorError::new(
            ErrorKind::Value,
            format!(
                "{op}: {k} weight rows for {c} channels of a {}×{} kernel",
                kernel[0], kernel[1]
            ),
        ));
    }
    let g = conv_geometry(op, x.shape(), &[o, c, kernel[0], kernel[1]], spec)?;
    let cols = im2col_u8(x.as_u8_slice().expect("a u8 image"), &g, xq.zero)?;
    let rows = g.n * g.ohw();
    let cols = Tensor::from_u8(cols, &[rows, k])?;
    let y = Tensor::quant_matmul(&cols, xq, w, w_scales, bias, output)?;
    // (N·OH·OW, O) to (N, O, OH, OW): each image's (OH·OW)×O matrix transposed.
    let (ohw, shape) = (g.ohw(), g.output_shape());
    match output {
        QuantOutput::F32 => {
            Tensor::from_f32(per_image_transpose(y.as_f32_slice(), g.n, ohw, o)?, &shape)
        }
        QuantOutput::U8 { .. } => {
            Tensor::from_u8(per_image_transpose(y.as_u8_slice(), g.n, ohw, o)?, &shape)
        }
    }
}

/// Each of `n` row-major `rows×cols` matrices in `m` transposed.
fn per_image_transpose<T: pulp::bytemuck::Pod + Default>(
    m: Option<&[T]>,
    n: usize,
    rows: usize,
    cols: usize,
) -> Result<Vec<T>> {
    let m = m.expect("the product's dtype");
    let mut out = vec![T::default(); m.len()];
    if rows * cols > 0 {
        for (src, dst) in m
            .chunks(rows * cols)
            .zip(out.chunks_mut(rows * cols))
            .take(n)
        {
            crate::transpose::transpose(src, cols, rows, cols, dst, rows);
        }
    }
    Ok(out)
}

/// The columns of `x`: row `(n·OH + oy)·OW + ox` holds the window of output `(oy, ox)` of
/// image `n`, channel by channel, kernel row by row; positions in the padding are `zero`.
/// Filled one column (one channel and kernel tap) at a time, over the outputs whose input
/// position is inside the image, so the inner loop has no bounds tests.
fn im2col_u8(x: &[u8], g: &Conv, zero: u8) -> Result<Vec<u8>> {
    let k = g.c * g.kh * g.kw;
    let rows = g.n * g.ohw();
    let mut out = crate::alloc::try_vec_of::<u8>(&[rows, k], DType::U8)?;
    out.resize(rows * k, zero);
    // The outputs `o` along one axis whose input `o·s + t·d − p` is in `0..len`.
    let valid = |len: usize, s: usize, t: usize, d: usize, p: usize| {
        let first = (p.saturating_sub(t * d)).div_ceil(s);
        let end = (len + p).checked_sub(t * d).map_or(0, |e| e.div_ceil(s));
        first..end
    };
    for n in 0..g.n {
        for c in 0..g.c {
            let image = &x[(n * g.c + c) * g.hw()..][..g.hw()];
            for i in 0..g.kh {
                let ys = valid(g.h, g.sh, i, g.dh, g.pt);
                for j in 0..g.kw {
                    let xs = valid(g.w, g.sw, j, g.dw, g.pl);
                    let col = (c * g.kh + i) * g.kw + j;
                    let (x0, x1) = (xs.start, xs.end.min(g.ow));
                    if x0 >= x1 {
                        continue;
                    }
                    for oy in ys.start..ys.end.min(g.oh) {
                        let src = &image[(oy * g.sh + i * g.dh - g.pt) * g.w..][..g.w];
                        let base = (n * g.oh + oy) * g.ow;
                        let dst = out[(base + x0) * k + col..(base + x1) * k].chunks_mut(k);
                        let from = &src[x0 * g.sw + j * g.dw - g.pl..];
                        if g.sw == 1 {
                            for (d, s) in dst.zip(from) {
                                d[0] = *s;
                            }
                        } else {
                            for (d, s) in dst.zip(from.iter().step_by(g.sw)) {
                                d[0] = *s;
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

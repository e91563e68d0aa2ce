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
    // (N·OH·OW, O) to (N, O, OH, OW).
    let y = y.reshape(&[g.n as i64, g.ohw() as i64, o as i64])?;
    let y = y.transpose(Some(&[0, 2, 1]))?.contiguous_host()?;
    let shape: Vec<i64> = g.output_shape().iter().map(|&d| d as i64).collect();
    y.reshape(&shape)
}

/// The columns of `x`: row `(n·OH + oy)·OW + ox` holds the window of output `(oy, ox)` of
/// image `n`, channel by channel, kernel row by row; positions in the padding are `zero`.
fn im2col_u8(x: &[u8], g: &Conv, zero: u8) -> Result<Vec<u8>> {
    let k = g.c * g.kh * g.kw;
    let rows = g.n * g.ohw();
    let mut out = crate::alloc::try_vec_of::<u8>(&[rows, k], DType::U8)?;
    out.resize(rows * k, zero);
    for n in 0..g.n {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                let row = &mut out[((n * g.oh + oy) * g.ow + ox) * k..][..k];
                let mut at = 0;
                for c in 0..g.c {
                    let image = &x[(n * g.c + c) * g.hw()..][..g.hw()];
                    for i in 0..g.kh {
                        let iy = (oy * g.sh + i * g.dh)
                            .checked_sub(g.pt)
                            .filter(|&y| y < g.h);
                        for j in 0..g.kw {
                            let ix = (ox * g.sw + j * g.dw)
                                .checked_sub(g.pl)
                                .filter(|&v| v < g.w);
                            if let (Some(iy), Some(ix)) = (iy, ix) {
                                row[at] = image[iy * g.w + ix];
                            }
                            at += 1;
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

//! The 8-bit convolution of quantized models: `u8` images (N, C, H, W) with a zero point, the
//! padding filled with that zero point (so it stands for 0.0). Where the CPU has AVX-512 VNNI
//! and the kernel is not dilated, the direct kernel of [`crate::quant::conv_weights`] computes
//! it without a column matrix; otherwise the image is laid out as columns once (`im2col`),
//! multiplied by the `u8 × i8` product and transposed back. Both requantize per output channel
//! and give the same bytes.

use super::Conv2dSpec;
use super::geometry::{Conv, conv_geometry};
use crate::api::quant::{Epilogue, QuantOutput, QuantWeights, U8Quant};
use crate::quant;
use crate::{DType, ErrorKind, Result, Tensor, TensorError};

/// `x` (u8, quantized by `xq`) convolved with the weights `w`, an `i8` (C·KH·KW)×O matrix
/// (the (O, C, KH, KW) weights flattened per output channel and transposed), `kernel` =
/// (KH, KW); the rest as [`Tensor::quant_matmul`].
pub(crate) fn quant_conv2d(
    x: &Tensor,
    xq: U8Quant,
    layer: QuantWeights<'_>,
    kernel: [usize; 2],
    spec: &Conv2dSpec,
    output: QuantOutput,
) -> Result<Tensor> {
    let w = layer.w;
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
    let image = x.as_u8_slice().expect("a u8 image");
    if g.dh == 1 && g.dw == 1 {
        let direct = quant::DirectGeometry {
            c: g.c,
            h: g.h,
            w: g.w,
            pt: g.pt,
            pl: g.pl,
            oh: g.oh,
            ow: g.ow,
            sh: g.sh,
            sw: g.sw,
        };
        let packed = quant::conv_weights(w, kernel)?;
        if quant::direct_available(&direct, &packed) {
            let epilogue = Epilogue::new(xq, layer, packed.column_sums(), output)?;
            return epilogue.run(&g.output_shape(), |sink| {
                quant::conv_u8i8_direct(image, xq.zero, &direct, &packed, sink)
            });
        }
    }
    let cols = im2col_u8(image, &g, xq.zero)?;
    let rows = g.n * g.ohw();
    let cols = Tensor::from_u8(cols, &[rows, k])?;
    let y = Tensor::quant_matmul(&cols, xq, layer, output)?;
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
/// Where each column of an output position reads within an image is the same for every
/// image, so it is computed once (a table of `OH·OW·K` offsets, `None` in the padding) and
/// each image's rows are filled from it in order.
fn im2col_u8(x: &[u8], g: &Conv, zero: u8) -> Result<Vec<u8>> {
    let k = g.c * g.kh * g.kw;
    let rows = g.n * g.ohw();
    let mut out = crate::alloc::try_vec_of::<u8>(&[rows, k], DType::U8)?;
    out.resize(rows * k, zero);
    let image_len = g.c * g.hw();
    if image_len >= u32::MAX as usize {
        return Err(TensorError::new(
            ErrorKind::Value,
            "quant_conv2d: an image of 2^32 bytes or more",
        ));
    }
    // The byte after the image stands for the padding: the zero point.
    let pad = image_len as u32;
    let mut taps: Vec<u32> = Vec::with_capacity(g.ohw() * k);
    for oy in 0..g.oh {
        for ox in 0..g.ow {
            for c in 0..g.c {
                for i in 0..g.kh {
                    let iy = (oy * g.sh + i * g.dh)
                        .checked_sub(g.pt)
                        .filter(|&y| y < g.h);
                    for j in 0..g.kw {
                        let ix = (ox * g.sw + j * g.dw)
                            .checked_sub(g.pl)
                            .filter(|&v| v < g.w);
                        taps.push(match (iy, ix) {
                            (Some(iy), Some(ix)) => (c * g.hw() + iy * g.w + ix) as u32,
                            _ => pad,
                        });
                    }
                }
            }
        }
    }
    if image_len == 0 || k == 0 || g.ohw() == 0 {
        return Ok(out);
    }
    let mut padded = vec![zero; image_len + 1];
    for (image, rows) in x
        .chunks_exact(image_len)
        .zip(out.chunks_exact_mut(g.ohw() * k))
    {
        padded[..image_len].copy_from_slice(image);
        for (o, &t) in rows.iter_mut().zip(&taps) {
            *o = padded[t as usize];
        }
    }
    Ok(out)
}

/// Max pooling of a `u8` (N, C, H, W) image: the largest byte of each window (the padding
/// never wins, as `-inf` padding never does).
pub(crate) fn max_pool_u8(
    x: &[u8],
    shape: &[usize],
    spec: &super::Pool2dSpec,
    out_shape: &[usize],
) -> Vec<u8> {
    let (h, w) = (shape[shape.len() - 2], shape[shape.len() - 1]);
    let (oh, ow) = (
        out_shape[out_shape.len() - 2],
        out_shape[out_shape.len() - 1],
    );
    let planes = x.len() / (h * w).max(1);
    let mut out = vec![0u8; planes * oh * ow];
    let [kh, kw] = spec.kernel;
    let [sh, sw] = spec.stride;
    let [ph, pw] = spec.padding;
    if spec.kernel == [2, 2]
        && spec.stride == [2, 2]
        && spec.padding == [0, 0]
        && h % 2 == 0
        && w % 2 == 0
    {
        return max_pool_2x2(x, w, out);
    }
    // Each output column's window, the same in every row and plane.
    let xs: Vec<(usize, usize)> = (0..ow)
        .map(|ox| {
            (
                (ox * sw).saturating_sub(pw),
                (ox * sw + kw).saturating_sub(pw).min(w),
            )
        })
        .collect();
    for (plane, o) in x
        .chunks_exact((h * w).max(1))
        .zip(out.chunks_exact_mut((oh * ow).max(1)))
    {
        for (oy, o_row) in o.chunks_exact_mut(ow.max(1)).enumerate().take(oh) {
            let (y0, y1) = (
                (oy * sh).saturating_sub(ph),
                (oy * sh + kh).saturating_sub(ph).min(h),
            );
            for row in plane.chunks_exact(w).take(y1).skip(y0) {
                for (m, &(x0, x1)) in o_row.iter_mut().zip(&xs) {
                    *m = row[x0..x1].iter().fold(*m, |a, &b| a.max(b));
                }
            }
        }
    }
    out
}

/// The 2×2, stride-2 pooling of even-sized planes (every image row pairs with the next): 64
/// bytes at a time with AVX-512 where rows are 2 to 32 bytes long, then the larger of each two
/// rows and of each two neighbours, in flat loops the compiler vectorizes.
fn max_pool_2x2(x: &[u8], w: usize, mut out: Vec<u8>) -> Vec<u8> {
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if pool_x86::available() && matches!(w, 2 | 4 | 8 | 16 | 32) {
        // SAFETY: the CPU has the instructions; `out` holds a quarter of `x`.
        done = unsafe { pool_x86::max_pool_2x2(x, w, &mut out) };
    }
    let (x, out_rest) = (&x[done..], &mut out[done / 4..]);
    let mut rows = vec![0u8; x.len() / 2];
    for (r, pair) in rows.chunks_exact_mut(w).zip(x.chunks_exact(2 * w)) {
        let (top, bottom) = pair.split_at(w);
        for ((m, &a), &b) in r.iter_mut().zip(top).zip(bottom) {
            *m = a.max(b);
        }
    }
    for (o, two) in out_rest.iter_mut().zip(rows.chunks_exact(2)) {
        *o = two[0].max(two[1]);
    }
    out
}

#[cfg(target_arch = "x86_64")]
mod pool_x86 {
    use std::arch::x86_64::*;

    /// Whether the machine has AVX-512 BW and VL.
    pub(super) fn available() -> bool {
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *ON.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vl")
        })
    }

    /// The 2×2 pooling of rows of `w` bytes (2, 4, 8, 16 or 32: a 64-byte block holds whole
    /// row pairs), 64 input bytes to 16 output bytes at a time; returns the input bytes done
    /// (whole blocks; the rest are whole row pairs).
    ///
    /// # Safety
    /// AVX-512 BW and VL; `out` holds `x.len() / 4` bytes.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn max_pool_2x2(x: &[u8], w: usize, out: &mut [u8]) -> usize {
        let blocks = x.len() / 64;
        // The bottom rows: the block read `w` bytes on, its last `w` bytes (past the block)
        // not needed.
        let below = u64::MAX >> w;
        for b in 0..blocks {
            // SAFETY: block `b` and its 16 results are inside `x` and `out`.
            unsafe {
                let at = x.as_ptr().add(b * 64);
                let top = _mm512_loadu_si512(at.cast());
                let bottom = _mm512_maskz_loadu_epi8(below, at.add(w).cast());
                // Valid in the top rows: the larger of the two rows, then of each byte pair.
                let v = _mm512_max_epu8(top, bottom);
                let v = _mm512_max_epu8(v, _mm512_srli_epi16::<8>(v));
                // Each row pair's `w` bytes, the top row's `w / 2` first.
                let p = _mm512_cvtepi16_epi8(v);
                let q = match w {
                    2 => _mm256_cvtepi16_epi8(p),
                    4 => _mm256_cvtepi32_epi16(p),
                    8 => _mm256_cvtepi64_epi32(p),
                    16 => _mm256_castsi256_si128(_mm256_permute4x64_epi64::<0b1000>(p)),
                    _ => _mm256_castsi256_si128(p),
                };
                _mm_storeu_si128(out.as_mut_ptr().add(b * 16).cast(), q);
            }
        }
        blocks * 64
    }
}

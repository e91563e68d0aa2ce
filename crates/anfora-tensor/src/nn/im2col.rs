//! The patch layout of a convolution: `im2col` lays the input windows of one (sample, group)
//! out as the columns of a matrix, `col2im` adds such columns back into an image.

use super::Float;
use super::geometry::Conv;

/// The output positions `o' < o` whose input index `o'·s + off` lies in `[0, len)`: a range.
fn valid_range(o: usize, s: usize, off: isize, len: usize) -> (usize, usize) {
    let s = s as isize;
    let lo = if off >= 0 { 0 } else { (-off + s - 1) / s };
    let room = len as isize - off;
    let hi = if room <= 0 { 0 } else { (room + s - 1) / s };
    let hi = (hi as usize).min(o);
    ((lo as usize).min(hi), hi)
}

/// The columns of one group of one sample: laid out in `cols` by `im2col`, or the input
/// itself for a pointwise kernel.
pub(super) fn columns<'a, T: Float>(xg: &'a [T], g: &Conv, cols: &'a mut [T]) -> &'a [T] {
    if g.pointwise() {
        xg
    } else {
        im2col(xg, g, cols);
        cols
    }
}

/// How [`im2col`] copies the runs of consecutive elements that a stride-1 convolution's windows
/// make (4 to 30 elements in LeNet: a `memmove` call each with the plain loop).
trait RunOps<T> {
    /// `dst = src` (same lengths).
    fn copy(dst: &mut [T], src: &[T]);
}

struct PlainRuns;

impl<T: Float> RunOps<T> for PlainRuns {
    #[inline(always)]
    fn copy(dst: &mut [T], src: &[T]) {
        dst.copy_from_slice(src);
    }
}

/// Masked AVX-512 moves ([`crate::avx512::Runs`]). Only the `*_avx512` functions below use
/// it, and they run after the machine's AVX-512F was checked.
#[cfg(target_arch = "x86_64")]
struct VectorRuns;

#[cfg(target_arch = "x86_64")]
impl RunOps<f32> for VectorRuns {
    #[inline(always)]
    fn copy(dst: &mut [f32], src: &[f32]) {
        // SAFETY: see the type's doc.
        unsafe { crate::avx512::Runs::copy(dst, src) }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn im2col_avx512(x: &[f32], g: &Conv, cols: &mut [f32]) {
    im2col_with::<f32, VectorRuns>(x, g, cols);
}

/// One tap of [`im2col_tiny_avx512`]: for each output lane, the plane element it reads, and
/// the lanes that read inside the plane.
#[cfg(target_arch = "x86_64")]
type TinyTap = ([i32; 16], u16);

#[cfg(target_arch = "x86_64")]
thread_local! {
    /// The taps of the last geometry [`im2col_tiny_avx512`] ran (it runs once per sample with
    /// the same one).
    static TINY_TAPS: std::cell::RefCell<(Option<Conv>, Vec<TinyTap>)> =
        const { std::cell::RefCell::new((None, Vec::new())) };
}

#[cfg(target_arch = "x86_64")]
fn tiny_taps(g: &Conv) -> Vec<TinyTap> {
    let mut taps = Vec::with_capacity(g.kh * g.kw);
    for ki in 0..g.kh {
        let yoff = (ki * g.dh) as isize - g.pt as isize;
        for kj in 0..g.kw {
            let xoff = (kj * g.dw) as isize - g.pl as isize;
            let (mut index, mut mask) = ([0i32; 16], 0u16);
            for oy in 0..g.oh {
                for ox in 0..g.ow {
                    let (iy, ix) = ((oy * g.sh) as isize + yoff, (ox * g.sw) as isize + xoff);
                    if (0..g.h as isize).contains(&iy) && (0..g.w as isize).contains(&ix) {
                        let lane = oy * g.ow + ox;
                        index[lane] = (iy * g.w as isize + ix) as i32;
                        mask |= 1 << lane;
                    }
                }
            }
            taps.push((index, mask));
        }
    }
    taps
}

/// [`im2col`] where a whole input plane and a whole output map fit in one 16-lane vector (the
/// digits LeNet's second convolution, 4×4 to 4×4): each tap's row is the plane permuted, the
/// lanes that read padding zeroed: one permute and one store per (channel, tap), with the
/// taps' index vectors computed once per geometry. Any strides; bit for bit the general path.
#[cfg(target_arch = "x86_64")]
fn im2col_tiny(x: &[f32], g: &Conv, cols: &mut [f32]) {
    TINY_TAPS.with_borrow_mut(|(geometry, taps)| {
        if *geometry != Some(*g) {
            *taps = tiny_taps(g);
            *geometry = Some(*g);
        }
        // SAFETY: the caller checked the machine has AVX-512F.
        unsafe { permute_planes(x, g, cols, taps) }
    });
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn permute_planes(x: &[f32], g: &Conv, cols: &mut [f32], taps: &[TinyTap]) {
    use std::arch::x86_64::{
        _mm512_loadu_si512, _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps,
        _mm512_maskz_permutexvar_ps,
    };
    let lanes = |n: usize| ((1u32 << n) - 1) as u16;
    let (plane_lanes, map_lanes) = (lanes(g.hw()), lanes(g.ohw()));
    let mut rows = cols.chunks_exact_mut(g.ohw());
    for plane in x.chunks_exact(g.hw()).take(g.cg) {
        // SAFETY: the plane holds `hw` <= 16 elements, the masked lanes.
        let v = unsafe { _mm512_maskz_loadu_ps(plane_lanes, plane.as_ptr()) };
        for (index, mask) in taps {
            let dst = rows.next().expect("one row per (c, ki, kj)");
            // SAFETY: `index` is one 512-bit vector; the row holds `ohw` <= 16 elements, the
            // masked lanes.
            unsafe {
                let index = _mm512_loadu_si512(index.as_ptr().cast());
                let row = _mm512_maskz_permutexvar_ps(*mask, index, v);
                _mm512_mask_storeu_ps(dst.as_mut_ptr(), map_lanes, row);
            }
        }
    }
}

/// [`im2col`] of a stride-1 convolution at most 16 outputs wide (the digits LeNet's 8×8 and
/// 4×4 maps, where a run per output row cost more than the copy): each output row of a tap is
/// one masked load, whose lanes outside the image read nothing and give zeros, and one store;
/// the tap's mask is computed once. The same values as the general path, bit for bit.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn im2col_narrow_avx512(x: &[f32], g: &Conv, cols: &mut [f32]) {
    use std::arch::x86_64::{__mmask16, _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps};
    let lanes = |from: usize, to: usize| -> __mmask16 {
        (((1u32 << to) - 1) & !((1u32 << from) - 1)) as __mmask16
    };
    let store = lanes(0, g.ow);
    let mut rows = cols.chunks_exact_mut(g.ohw());
    for plane in x.chunks_exact(g.hw()).take(g.cg) {
        for ki in 0..g.kh {
            let yoff = (ki * g.dh) as isize - g.pt as isize;
            let (oy0, oy1) = valid_range(g.oh, g.sh, yoff, g.h);
            for kj in 0..g.kw {
                let xoff = (kj * g.dw) as isize - g.pl as isize;
                let (ox0, ox1) = valid_range(g.ow, g.sw, xoff, g.w);
                let load = lanes(ox0, ox1);
                let dst = rows.next().expect("one row per (c, ki, kj)");
                for (oy, drow) in dst.chunks_exact_mut(g.ow).enumerate() {
                    let inside = (oy0..oy1).contains(&oy);
                    let mask = if inside { load } else { 0 };
                    let iy = (oy * g.sh) as isize + yoff;
                    // Lane `ox` reads `plane[iy·W + ox + xoff]`, inside the plane for the lanes
                    // of `mask`; masked-off lanes are neither read nor able to fault.
                    let src = plane.as_ptr().wrapping_offset(iy * g.w as isize + xoff);
                    // SAFETY: as above; the store writes the row's `ow` elements.
                    unsafe {
                        let v = _mm512_maskz_loadu_ps(mask, src);
                        _mm512_mask_storeu_ps(drow.as_mut_ptr(), store, v);
                    }
                }
            }
        }
    }
}

/// Lays the patches of one group of one sample (`x`: C_g × H × W) out as the columns of
/// `cols` (C_g·KH·KW × OH·OW), zeros where a window reads padding.
fn im2col<T: Float>(x: &[T], g: &Conv, cols: &mut [T]) {
    #[cfg(target_arch = "x86_64")]
    if let (true, Some(x), Some(cols)) = (
        g.hw() <= 16 && g.ohw() <= 16 && crate::avx512::available(),
        T::as_f32(x),
        T::as_f32_mut(cols),
    ) {
        im2col_tiny(x, g, cols);
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if let (true, Some(x), Some(cols)) = (
        g.sw == 1 && crate::avx512::available(),
        T::as_f32(x),
        T::as_f32_mut(cols),
    ) {
        // SAFETY: the machine has AVX-512F.
        unsafe {
            if g.ow <= 16 {
                im2col_narrow_avx512(x, g, cols)
            } else {
                im2col_avx512(x, g, cols)
            }
        };
        return;
    }
    im2col_with::<T, PlainRuns>(x, g, cols);
}

/// One tap `(ki, kj)` of the kernel: the offsets (in input rows and columns, padding
/// subtracted) it reads at from each output position, and the output rows `oy0..oy1` and
/// columns `ox0..ox1` where that read is inside the image.
struct Tap {
    yoff: isize,
    xoff: isize,
    rows: (usize, usize),
    cols: (usize, usize),
}

/// Calls `f` on every tap of `g`'s kernel, row-major: the order of the rows of one channel in
/// the column matrix.
#[inline(always)]
fn for_each_tap(g: &Conv, mut f: impl FnMut(Tap)) {
    for ki in 0..g.kh {
        let yoff = (ki * g.dh) as isize - g.pt as isize;
        let rows = valid_range(g.oh, g.sh, yoff, g.h);
        for kj in 0..g.kw {
            let xoff = (kj * g.dw) as isize - g.pl as isize;
            let cols = valid_range(g.ow, g.sw, xoff, g.w);
            f(Tap {
                yoff,
                xoff,
                rows,
                cols,
            });
        }
    }
}

#[inline(always)]
fn im2col_with<T: Float, R: RunOps<T>>(x: &[T], g: &Conv, cols: &mut [T]) {
    let zero = T::zero();
    let mut rows = cols.chunks_exact_mut(g.ohw());
    for plane in x.chunks_exact(g.hw()).take(g.cg) {
        for_each_tap(g, |tap| {
            let dst = rows.next().expect("one row per (c, ki, kj)");
            let ((oy0, oy1), (ox0, ox1)) = (tap.rows, tap.cols);
            for (oy, drow) in dst.chunks_exact_mut(g.ow).enumerate() {
                if oy < oy0 || oy >= oy1 || ox0 == ox1 {
                    drow.fill(zero);
                    continue;
                }
                let iy = (oy * g.sh) as isize + tap.yoff;
                let src = &plane[iy as usize * g.w..(iy as usize + 1) * g.w];
                drow[..ox0].fill(zero);
                drow[ox1..].fill(zero);
                let ix0 = ((ox0 * g.sw) as isize + tap.xoff) as usize;
                let run = &mut drow[ox0..ox1];
                if g.sw == 1 {
                    R::copy(run, &src[ix0..ix0 + run.len()]);
                } else {
                    for (j, v) in run.iter_mut().enumerate() {
                        *v = src[ix0 + j * g.sw];
                    }
                }
            }
        });
    }
}

/// The adjoint of [`im2col`]: adds every column entry back into the input position it was
/// read from (`dx`: C_g × H × W); padding positions are dropped.
pub(super) fn col2im<T: Float>(cols: &[T], g: &Conv, dx: &mut [T]) {
    let mut rows = cols.chunks_exact(g.ohw());
    for plane in dx.chunks_exact_mut(g.hw()).take(g.cg) {
        for_each_tap(g, |tap| {
            let src = rows.next().expect("one row per (c, ki, kj)");
            let ((oy0, oy1), (ox0, ox1)) = (tap.rows, tap.cols);
            if ox0 == ox1 {
                return;
            }
            let ix0 = ((ox0 * g.sw) as isize + tap.xoff) as usize;
            for oy in oy0..oy1 {
                let iy = ((oy * g.sh) as isize + tap.yoff) as usize;
                let drow = &mut plane[iy * g.w..(iy + 1) * g.w];
                let srow = &src[oy * g.ow + ox0..oy * g.ow + ox1];
                if g.sw == 1 {
                    for (d, &v) in drow[ix0..ix0 + srow.len()].iter_mut().zip(srow) {
                        *d += v;
                    }
                } else {
                    for (j, &v) in srow.iter().enumerate() {
                        drow[ix0 + j * g.sw] += v;
                    }
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::geometry::{Conv2dSpec, Padding2d, conv_geometry};

    /// The vector paths (a plane in one vector, rows at most 16 wide, longer runs) lay out
    /// exactly the columns of the plain loop, padding, strides and dilation included.
    #[test]
    fn every_path_lays_out_the_plain_columns() {
        let mut cases = 0;
        for (h, w) in [(4, 4), (8, 8), (3, 5), (2, 7), (16, 1), (5, 20), (1, 16)] {
            for (k, stride, dilation, padding) in [
                (3, 1, 1, Padding2d::Same),
                (3, 1, 1, Padding2d::Valid),
                (
                    2,
                    2,
                    1,
                    Padding2d::Explicit {
                        h: [1, 0],
                        w: [0, 1],
                    },
                ),
                (
                    3,
                    1,
                    2,
                    Padding2d::Explicit {
                        h: [2, 2],
                        w: [2, 2],
                    },
                ),
                (
                    1,
                    1,
                    1,
                    Padding2d::Explicit {
                        h: [1, 1],
                        w: [1, 1],
                    },
                ),
            ] {
                let spec = Conv2dSpec {
                    stride: [stride; 2],
                    padding,
                    dilation: [dilation; 2],
                    groups: 1,
                };
                let Ok(g) = conv_geometry("conv2d", &[1, 3, h, w], &[2, 3, k, k], &spec) else {
                    continue;
                };
                let x: Vec<f32> = (0..3 * h * w).map(|i| i as f32 * 0.5 - 7.0).collect();
                let n = g.cg * g.kh * g.kw * g.ohw();
                let (mut want, mut got) = (vec![f32::NAN; n], vec![f32::NAN; n]);
                im2col_with::<f32, PlainRuns>(&x, &g, &mut want);
                im2col(&x, &g, &mut got);
                let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "{h}x{w} k{k} s{stride} d{dilation} {padding:?}"
                );
                cases += 1;
            }
        }
        assert!(cases > 20, "{cases}");
    }
}

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

/// Lays the patches of one group of one sample (`x`: C_g × H × W) out as the columns of
/// `cols` (C_g·KH·KW × OH·OW), zeros where a window reads padding.
fn im2col<T: Float>(x: &[T], g: &Conv, cols: &mut [T]) {
    #[cfg(target_arch = "x86_64")]
    if let (true, Some(x), Some(cols)) = (
        g.sw == 1 && crate::avx512::available(),
        T::as_f32(x),
        T::as_f32_mut(cols),
    ) {
        // SAFETY: the machine has AVX-512F.
        unsafe { im2col_avx512(x, g, cols) };
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

//! 2-D max and average pooling, their gradients, and max pooling's second derivative.

use std::mem::MaybeUninit;

use crate::parallel::{for_each_part, for_each_part_pair};

use super::{
    Float, PARALLEL_WORK, check_positive, check_shape, float_kernel, image_dims, nn_float_dtype,
    value_error,
};
use crate::alloc::{self, try_filled};
use crate::loops::tile_row_pairs;
use crate::{Result, Tensor};

/// Input elements per group of planes in the max-pooling kernels ([`Pool::max_rows`]).
const GROUP_WORK: usize = 1 << 13;

/// The hyper-parameters of a 2-D pooling (`ops.max_pool2d`, `ops.avg_pool2d`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool2dSpec {
    pub kernel: [usize; 2],
    pub stride: [usize; 2],
    /// Implicit padding on both sides of each axis: `-inf` for max pooling, zeros (counted in
    /// the average) for average pooling.
    pub padding: [usize; 2],
}

/// A pooling's sizes, checked: `x` is (planes, H, W) with `planes = N·C` (or `C`).
#[derive(Clone, Copy, Debug)]
struct Pool {
    planes: usize,
    h: usize,
    w: usize,
    kh: usize,
    kw: usize,
    sh: usize,
    sw: usize,
    ph: usize,
    pw: usize,
    oh: usize,
    ow: usize,
}

fn pool_geometry(op: &str, x: &[usize], spec: &Pool2dSpec) -> Result<(Pool, Vec<usize>)> {
    let (batch, c, h, w) = image_dims(op, x)?;
    // The planes' shape: (N, C) or (C,).
    let lead: Vec<usize> = batch.into_iter().chain([c]).collect();
    let Pool2dSpec {
        kernel: [kh, kw],
        stride: [sh, sw],
        padding: [ph, pw],
    } = *spec;
    check_positive(op, "kernel_size", [kh, kw])?;
    check_positive(op, "stride", [sh, sw])?;
    if ph > kh / 2 || pw > kw / 2 {
        return Err(value_error(
            op,
            format!("padding ({ph}, {pw}) must be at most half of the kernel size ({kh}, {kw})"),
        ));
    }
    // The padding is at most half the kernel, so the padded size cannot overflow unless the
    // kernel itself is absurd; compare without overflowing anyway.
    let out = |len: usize, p: usize, k: usize, s: usize| {
        let padded = len.checked_add(p.checked_mul(2)?)?;
        (k <= padded).then(|| (padded - k) / s + 1)
    };
    let (Some(oh), Some(ow)) = (out(h, ph, kh, sh), out(w, pw, kw, sw)) else {
        return Err(value_error(
            op,
            format!(
                "the padded input ({}, {}) is smaller than the kernel ({kh}, {kw})",
                h.saturating_add(2 * ph),
                w.saturating_add(2 * pw)
            ),
        ));
    };
    let mut shape = lead.clone();
    shape.extend([oh, ow]);
    Ok((
        Pool {
            planes: lead.iter().product(),
            h,
            w,
            kh,
            kw,
            sh,
            sw,
            ph,
            pw,
            oh,
            ow,
        },
        shape,
    ))
}

impl Pool {
    /// The input rows (or columns) window `o` covers: `[lo, hi)`, clipped to the input.
    fn window(o: usize, s: usize, p: usize, k: usize, len: usize) -> (usize, usize) {
        let start = (o * s) as isize - p as isize;
        let lo = start.max(0) as usize;
        let hi = ((start + k as isize).max(0) as usize).min(len);
        (lo, hi.max(lo))
    }

    /// Calls `f(plane, out index in the plane, input rows, input columns)` for every window.
    fn windows(&self, mut f: impl FnMut(usize, (usize, usize), (usize, usize))) {
        for oy in 0..self.oh {
            let rows = Pool::window(oy, self.sh, self.ph, self.kh, self.h);
            for ox in 0..self.ow {
                let cols = Pool::window(ox, self.sw, self.pw, self.kw, self.w);
                f(oy * self.ow + ox, rows, cols);
            }
        }
    }

    /// The flat index (in the plane) of the first largest element of a window; a NaN counts
    /// as larger than everything (the first NaN wins). Windows always hold an element: the
    /// padding is at most half the kernel.
    ///
    /// Branch-free (selects, not jumps): on real activations which element of a window wins is
    /// unpredictable, and mispredicted branches made pooling cost about 2 ns per element.
    #[inline(always)]
    fn argmax<T: Float>(
        &self,
        plane: &[T],
        (y0, y1): (usize, usize),
        (x0, x1): (usize, usize),
    ) -> usize {
        let mut best = y0 * self.w + x0;
        let mut bv = plane[best];
        for y in y0..y1 {
            let row = &plane[y * self.w..y * self.w + x1];
            for (x, &v) in row.iter().enumerate().skip(x0) {
                let take = replaces(v, bv);
                best = std::hint::select_unpredictable(take, y * self.w + x, best);
                bv = std::hint::select_unpredictable(take, v, bv);
            }
        }
        best
    }

    /// [`Pool::argmax`] of every window of output row `oy`, into `best` (one flat index per
    /// output column). Without padding the windows of a row are visited together, element by
    /// element in each window's row-major order: the comparisons of different windows do not
    /// wait on each other, which the one-window-at-a-time loop of `argmax` makes them do.
    #[inline(always)]
    fn row_argmax<T: Float>(&self, plane: &[T], oy: usize, best: &mut [usize], bv: &mut [T]) {
        if self.ph != 0 || self.pw != 0 {
            let rows = Pool::window(oy, self.sh, self.ph, self.kh, self.h);
            for (ox, b) in best.iter_mut().enumerate() {
                let cols = Pool::window(ox, self.sw, self.pw, self.kw, self.w);
                *b = self.argmax(plane, rows, cols);
            }
            return;
        }
        let (y0, ow, sw, w) = (oy * self.sh, self.ow, self.sw, self.w);
        let (best, bv) = (&mut best[..ow], &mut bv[..ow]);
        if (self.kh, self.kw, self.sh, self.sw) == (2, 2, 2, 2) {
            // The usual 2×2 pooling: each window's four elements from two rows, in order.
            let (r0, r1) = (&plane[y0 * w..][..2 * ow], &plane[(y0 + 1) * w..][..2 * ow]);
            for (ox, ((b, p0), p1)) in best
                .iter_mut()
                .zip(r0.chunks_exact(2))
                .zip(r1.chunks_exact(2))
                .enumerate()
            {
                let at = y0 * w + 2 * ox;
                let (mut v, mut i) = (p0[0], at);
                for (x, j) in [(p0[1], at + 1), (p1[0], at + w), (p1[1], at + w + 1)] {
                    let take = replaces(x, v);
                    v = std::hint::select_unpredictable(take, x, v);
                    i = std::hint::select_unpredictable(take, j, i);
                }
                *b = i;
            }
            return;
        }
        for dy in 0..self.kh {
            let at = (y0 + dy) * w;
            for dx in 0..self.kw {
                let first = dy == 0 && dx == 0;
                let row = &plane[at + dx..];
                for ox in 0..ow {
                    let v = row[ox * sw];
                    let b = bv[ox];
                    let take = first | replaces(v, b);
                    bv[ox] = std::hint::select_unpredictable(take, v, b);
                    best[ox] = std::hint::select_unpredictable(take, at + dx + ox * sw, best[ox]);
                }
            }
        }
    }

    /// Calls `f(out, plane, oy, best)` for every output row `oy` of every plane of `x` with the
    /// row's window maxima ([`Pool::row_argmax`], flat indices in the plane); `out` is the
    /// plane's part of `out` (`per_out` elements a plane). Planes go in groups of at least
    /// [`GROUP_WORK`] input elements, one vectorized dispatch and one scratch row per group,
    /// the groups over threads for large inputs: small planes (LeNet's second pooling has 1024
    /// planes of 8×8) then cost no per-plane overhead.
    fn max_rows<T: Float, O: Send>(
        &self,
        x: &[T],
        out: &mut [O],
        per_out: usize,
        f: impl Fn(&mut [O], usize, usize, &[usize]) + Sync,
    ) {
        let hw = self.h * self.w;
        if out.is_empty() || per_out == 0 || hw == 0 {
            return;
        }
        let group = GROUP_WORK.div_ceil(hw).max(1);
        let run = |first: usize, out: &mut [O]| {
            // Rows of up to 64 windows (nearly all) keep their scratch on the stack.
            let (mut small_best, mut small_bv) = ([0; 64], [T::zero(); 64]);
            let (mut large_best, mut large_bv) = (Vec::new(), Vec::new());
            let (best, bv) = if self.ow <= 64 {
                (&mut small_best[..self.ow], &mut small_bv[..self.ow])
            } else {
                large_best.resize(self.ow, 0);
                large_bv.resize(self.ow, T::zero());
                (&mut large_best[..], &mut large_bv[..])
            };
            // Compiled for the machine's vector instruction set: the 2×2 comparisons vectorize.
            crate::loops::dispatch_fn(
                #[inline(always)]
                || {
                    for (i, o) in out.chunks_mut(per_out).enumerate() {
                        let plane = first + i;
                        let xp = &x[plane * hw..(plane + 1) * hw];
                        for oy in 0..self.oh {
                            self.row_argmax(xp, oy, best, bv);
                            f(o, plane, oy, best);
                        }
                    }
                },
            )
        };
        if self.parallel() {
            for_each_part(out, per_out * group, |k, o| run(k * group, o));
        } else {
            run(0, out);
        }
    }

    fn parallel(&self) -> bool {
        self.planes * self.oh * self.ow * self.kh * self.kw >= PARALLEL_WORK
            && rayon::current_num_threads() > 1
    }

    /// Whether the windows are 2×2 blocks of stride 2 without padding that tile every plane
    /// (even height and width): each pair of input rows, across all planes, then makes one
    /// output row, and each input element is in exactly one window.
    fn tiles_2x2(&self) -> bool {
        (self.kh, self.kw, self.sh, self.sw, self.ph, self.pw) == (2, 2, 2, 2, 0, 0)
            && (self.oh * 2, self.ow * 2) == (self.h, self.w)
    }

    /// Calls `f(q, input rows, output rows)` on consecutive runs of row pairs: `q` is the
    /// run's first pair of input rows (2·W elements of `x` each), `output rows` its rows of
    /// `out` (`per_row` elements a pair), over all planes ([`Pool::tiles_2x2`] geometry), in
    /// parallel for large inputs.
    fn tile_rows<T: Float, O: Send>(
        &self,
        x: &[T],
        out: &mut [O],
        per_row: usize,
        f: impl Fn(usize, &[T], &mut [O]) + Sync,
    ) {
        let pairs = self.planes * self.oh;
        if pairs == 0 || per_row == 0 {
            return;
        }
        if self.parallel() {
            let per_task = pairs.div_ceil(rayon::current_num_threads() * 4);
            let (out_len, in_len) = (per_row * per_task, 2 * self.w * per_task);
            for_each_part_pair(out, out_len, x, in_len, |k, o, x| f(k * per_task, x, o));
        } else {
            f(0, x, out);
        }
    }
}

/// The first maximum of `a` then `b` ([`replaces`]) and whether it is `b`.
#[inline(always)]
fn first_max<T: Float>(a: T, b: T) -> (T, bool) {
    let take = replaces(b, a);
    (std::hint::select_unpredictable(take, b, a), take)
}

/// Max pooling over 2×2 tiles ([`Pool::tiles_2x2`]): a window's first maximum is the first
/// maximum of its rows' first maxima (ties keep the earlier element at every step), so the
/// four comparisons of the general loop become three, branch-free, with no positions. Writes
/// every element of `out`.
fn max_2x2_forward<T: Float>(x: &[T], g: &Pool, out: &mut [MaybeUninit<T>]) {
    let (w, ow) = (g.w, g.ow);
    g.tile_rows(x, out, ow, |_, x, out| {
        #[cfg(target_arch = "x86_64")]
        if let (true, Some(x), Some(out)) = (
            crate::avx512::available(),
            T::as_f32(x),
            T::as_f32_uninit(out),
        ) {
            // SAFETY: the machine has AVX-512F.
            unsafe { crate::avx512::forward(x, out, ow) };
            return;
        }
        for (rows, o) in x.chunks_exact(2 * w).zip(out.chunks_exact_mut(ow)) {
            let (r0, r1) = rows.split_at(w);
            for ((o, p0), p1) in o.iter_mut().zip(r0.chunks_exact(2)).zip(r1.chunks_exact(2)) {
                let top = first_max(p0[0], p0[1]).0;
                let bottom = first_max(p1[0], p1[1]).0;
                o.write(first_max(top, bottom).0);
            }
        }
    });
}

/// The gradient of [`max_2x2_forward`]: each window's sensitivity goes to its first maximum
/// and the window's three other elements are zero; every element of `dx` is written. The
/// sensitivity is added to zero, as the general loop does (`-0.0` becomes `0.0`).
fn max_2x2_backward<T: Float>(d: &[T], x: &[T], g: &Pool, dx: &mut [MaybeUninit<T>]) {
    let (w, ow) = (g.w, g.ow);
    g.tile_rows(x, dx, 2 * w, |q, x, dx| {
        let d = &d[q * ow..][..x.len() / (2 * w) * ow];
        #[cfg(target_arch = "x86_64")]
        if let (true, Some(x), Some(d), Some(dx)) = (
            crate::avx512::available(),
            T::as_f32(x),
            T::as_f32(d),
            T::as_f32_uninit(dx),
        ) {
            // SAFETY: the machine has AVX-512F.
            unsafe { crate::avx512::backward(x, d, dx, ow) };
            return;
        }
        let zero = T::zero();
        for ((x0, x1), (dx0, dx1), dr) in tile_row_pairs(x, dx, d, (w, ow)) {
            for (ox, &s) in dr.iter().enumerate() {
                let (top, right0) = first_max(x0[2 * ox], x0[2 * ox + 1]);
                let (bottom, right1) = first_max(x1[2 * ox], x1[2 * ox + 1]);
                let low = first_max(top, bottom).1;
                let s = zero + s;
                let pick = |c: bool| std::hint::select_unpredictable(c, s, zero);
                dx0[2 * ox].write(pick(!low & !right0));
                dx0[2 * ox + 1].write(pick(!low & right0));
                dx1[2 * ox].write(pick(low & !right1));
                dx1[2 * ox + 1].write(pick(low & right1));
            }
        }
    });
}

/// Whether `v`, met after `best` in a window, becomes the window's maximum: once the best is a
/// NaN nothing replaces it, a NaN replaces any number, and otherwise only a larger number does
/// (the first of equal maxima wins). The callers select with `select_unpredictable`: which
/// element wins is data-dependent, and a branch would mispredict.
#[inline(always)]
fn replaces<T: Float>(v: T, best: T) -> bool {
    #[allow(clippy::eq_op)]
    let (v_nan, best_nan) = (v != v, best != best);
    !best_nan & (v_nan | (v > best))
}

/// Runs `f(plane index, out plane, in plane)` over matching planes of `out` (`per_out` a plane)
/// and `inp` (`per_in` a plane), in parallel when `parallel`.
fn over_planes<T: Float, U: Float>(
    out: &mut [T],
    per_out: usize,
    inp: &[U],
    per_in: usize,
    parallel: bool,
    f: impl Fn(&mut [T], &[U]) + Sync + Send,
) {
    if out.is_empty() || per_out == 0 {
        return;
    }
    if parallel {
        for_each_part_pair(out, per_out, inp, per_in, |_, o, i| f(o, i));
    } else {
        for (o, i) in out.chunks_mut(per_out).zip(inp.chunks(per_in.max(1))) {
            f(o, i);
        }
    }
}

/// A buffer of `shape` that `fill` writes whole, without zeroing it first.
fn written_whole<T: Float>(
    shape: &[usize],
    fill: impl FnOnce(&mut [MaybeUninit<T>]),
) -> Result<Vec<T>> {
    let (mut v, n) = alloc::try_vec_capped::<T>(shape, alloc::cap())?;
    fill(&mut v.spare_capacity_mut()[..n]);
    // SAFETY: `fill` wrote the first `n` elements (the callers' kernels write every element).
    unsafe { v.set_len(n) };
    Ok(v)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PoolKind {
    Max,
    Avg,
}

fn pool_forward<T: Float>(x: &[T], g: &Pool, kind: PoolKind, shape: &[usize]) -> Result<Vec<T>> {
    if kind == PoolKind::Max && g.tiles_2x2() {
        return written_whole(shape, |out| max_2x2_forward(x, g, out));
    }
    let mut out = try_filled(shape, T::zero())?;
    let (hw, ohw) = (g.h * g.w, g.oh * g.ow);
    // count_include_pad: every window divides by the kernel's size.
    let area = T::from_f64((g.kh * g.kw) as f64);
    match kind {
        PoolKind::Max => g.max_rows(x, &mut out, ohw, |o, plane, oy, best| {
            let xp = &x[plane * hw..];
            for (o, &b) in o[oy * g.ow..(oy + 1) * g.ow].iter_mut().zip(best) {
                *o = xp[b];
            }
        }),
        PoolKind::Avg => over_planes(&mut out, ohw, x, hw, g.parallel(), |o, plane| {
            g.windows(|i, rows, cols| {
                let mut acc = T::zero();
                for y in rows.0..rows.1 {
                    for &v in &plane[y * g.w + cols.0..y * g.w + cols.1] {
                        acc += v;
                    }
                }
                o[i] = acc / area;
            })
        }),
    }
    Ok(out)
}

/// The gradient of a pooling with respect to its input: each window's sensitivity goes to its
/// first maximum (max), or is shared by every position of the window, padding included (avg).
fn pool_backward<T: Float>(
    d: &[T],
    x: Option<&[T]>,
    g: &Pool,
    kind: PoolKind,
    shape: &[usize],
) -> Result<Vec<T>> {
    if let (PoolKind::Max, Some(x), true) = (kind, x, g.tiles_2x2()) {
        return written_whole(shape, |dx| max_2x2_backward(d, x, g, dx));
    }
    let mut dx = try_filled(shape, T::zero())?;
    let (hw, ohw) = (g.h * g.w, g.oh * g.ow);
    let area = T::from_f64((g.kh * g.kw) as f64);
    // Pairs each input-gradient plane with its sensitivity plane (and input plane).
    let work = |dxp: &mut [T], dp: &[T]| {
        g.windows(|i, rows, cols| {
            let share = dp[i] / area;
            for y in rows.0..rows.1 {
                for v in &mut dxp[y * g.w + cols.0..y * g.w + cols.1] {
                    *v += share;
                }
            }
        })
    };
    if dx.is_empty() {
        return Ok(dx);
    }
    match (kind, x) {
        (PoolKind::Max, Some(x)) => g.max_rows(x, &mut dx, hw, |dxp, plane, oy, best| {
            let dp = &d[plane * ohw + oy * g.ow..plane * ohw + (oy + 1) * g.ow];
            for (&b, &d) in best.iter().zip(dp) {
                dxp[b] += d;
            }
        }),
        _ => over_planes(&mut dx, hw, d, ohw, g.parallel(), work),
    }
    Ok(dx)
}

/// The gradient of max pooling's gradient with respect to its sensitivity: `dd` (shaped like
/// the input) read at each window's first maximum.
fn max_pool_grad_grad<T: Float>(dd: &[T], x: &[T], g: &Pool, shape: &[usize]) -> Result<Vec<T>> {
    let mut out = try_filled(shape, T::zero())?;
    let (hw, ohw) = (g.h * g.w, g.oh * g.ow);
    g.max_rows(x, &mut out, ohw, |op, plane, oy, best| {
        let ddp = &dd[plane * hw..];
        for (o, &b) in op[oy * g.ow..(oy + 1) * g.ow].iter_mut().zip(best) {
            *o = ddp[b];
        }
    });
    Ok(out)
}

/// The result shape of `ops.max_pool2d`/`ops.avg_pool2d` (`op`) for an input of shape `x`, or
/// its ValueError.
pub fn pool2d_output_shape(op: &str, x: &[usize], spec: &Pool2dSpec) -> Result<Vec<usize>> {
    Ok(pool_geometry(op, x, spec)?.1)
}

pub(crate) fn pool2d(kind: PoolKind, x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
    let op = match kind {
        PoolKind::Max => "max_pool2d",
        PoolKind::Avg => "avg_pool2d",
    };
    nn_float_dtype(op, &[x.dtype()])?;
    let (g, shape) = pool_geometry(op, x.shape(), spec)?;
    alloc::check_size(&shape, x.dtype())?;
    Ok(float_kernel!(shape; x => pool_forward(x, &g, kind, &shape)))
}

/// The geometry of max pooling `x` for `op`, one of its derivatives, checking the operands:
/// one float dtype, and the sensitivity `s` shaped like the input (`of_input`) or the output.
fn derivative_geometry(
    op: &str,
    s: &Tensor,
    x: &Tensor,
    spec: &Pool2dSpec,
    of_input: bool,
) -> Result<(Pool, Vec<usize>)> {
    nn_float_dtype(op, &[s.dtype(), x.dtype()])?;
    let (g, out) = pool_geometry(op, x.shape(), spec)?;
    let expected = if of_input { x.shape() } else { &out };
    check_shape(op, "the sensitivity", s.shape(), expected)?;
    Ok((g, out))
}

pub(crate) fn max_pool2d_grad(d: &Tensor, x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
    let (g, _) = derivative_geometry("max_pool2d_grad", d, x, spec, false)?;
    let shape = x.shape().to_vec();
    Ok(float_kernel!(shape; d, x => pool_backward(d, Some(x), &g, PoolKind::Max, &shape)))
}

pub(crate) fn max_pool2d_grad_grad(dd: &Tensor, x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
    let (g, out) = derivative_geometry("max_pool2d_grad_grad", dd, x, spec, true)?;
    Ok(float_kernel!(out; dd, x => max_pool_grad_grad(dd, x, &g, &out)))
}

pub(crate) fn avg_pool2d_grad(
    d: &Tensor,
    input_shape: &[usize],
    spec: &Pool2dSpec,
) -> Result<Tensor> {
    let op = "avg_pool2d_grad";
    let (g, out) = pool_geometry(op, input_shape, spec)?;
    check_shape(op, "the sensitivity", d.shape(), &out)?;
    alloc::check_size(input_shape, d.dtype())?;
    nn_float_dtype(op, &[d.dtype()])?;
    let shape = input_shape.to_vec();
    Ok(float_kernel!(shape; d => pool_backward(d, None, &g, PoolKind::Avg, input_shape)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values with many ties, signed zeros and NaNs (two payloads), from a fixed generator.
    fn data(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                match (s >> 33) % 11 {
                    0 => f32::NAN,
                    1 => f32::from_bits(0xffc0_0007),
                    2 => -0.0,
                    3 => 0.0,
                    k => k as f32 - 7.0,
                }
            })
            .collect()
    }

    /// The bits of float32 values, or of float64 values.
    fn bits<T: Float>(v: &[T]) -> Vec<u64> {
        v.iter()
            .map(|x| match (T::as_f32(std::slice::from_ref(x)), x.to_f64()) {
                (Some(f), _) => u64::from(f[0].to_bits()),
                (None, f) => f.to_bits(),
            })
            .collect()
    }

    /// The 2×2 tile kernels (AVX-512 for float32 where the machine has it, the scalar loops
    /// for float64) against the general window loops, bit for bit, forward and backward, on
    /// one thread and on several.
    fn tiles_match<T: Float>(cast: impl Fn(f32) -> T) {
        let spec = Pool2dSpec {
            kernel: [2, 2],
            stride: [2, 2],
            padding: [0, 0],
        };
        for (k, shape) in [
            [1, 1, 2, 2],
            [2, 3, 4, 6],
            [3, 2, 8, 2],
            [1, 2, 4, 40],
            [64, 16, 8, 8],
            [128, 6, 24, 24],
        ]
        .into_iter()
        .enumerate()
        {
            let (g, out_shape) = pool_geometry("max_pool2d", &shape, &spec).unwrap();
            assert!(g.tiles_2x2());
            let x: Vec<T> = data(shape.iter().product(), k as u64)
                .into_iter()
                .map(&cast)
                .collect();
            let n_out: usize = out_shape.iter().product();
            let (hw, ohw) = (g.h * g.w, g.oh * g.ow);

            let mut tiled = vec![MaybeUninit::new(cast(7.0)); n_out];
            max_2x2_forward(&x, &g, &mut tiled);
            // SAFETY: initialized above (and the kernel writes every element).
            let tiled: Vec<T> = tiled
                .into_iter()
                .map(|v| unsafe { v.assume_init() })
                .collect();
            let mut general = vec![T::zero(); n_out];
            g.max_rows(&x, &mut general, ohw, |o, plane, oy, best| {
                for (o, &b) in o[oy * g.ow..(oy + 1) * g.ow].iter_mut().zip(best) {
                    *o = x[plane * hw + b];
                }
            });
            assert_eq!(bits(&tiled), bits(&general), "forward {shape:?}");

            let mut d: Vec<T> = data(n_out, 100 + k as u64).into_iter().map(&cast).collect();
            d[0] = cast(-0.0);
            let mut tiled = vec![MaybeUninit::new(cast(7.0)); x.len()];
            max_2x2_backward(&d, &x, &g, &mut tiled);
            // SAFETY: as above.
            let tiled: Vec<T> = tiled
                .into_iter()
                .map(|v| unsafe { v.assume_init() })
                .collect();
            let mut general = vec![T::zero(); x.len()];
            g.max_rows(&x, &mut general, hw, |dxp, plane, oy, best| {
                let dp = &d[plane * ohw + oy * g.ow..plane * ohw + (oy + 1) * g.ow];
                for (&b, &s) in best.iter().zip(dp) {
                    dxp[b] += s;
                }
            });
            assert_eq!(bits(&tiled), bits(&general), "backward {shape:?}");
            assert_eq!(
                g.parallel(),
                shape[0] == 128 && rayon::current_num_threads() > 1,
                "the largest shape runs threaded"
            );
        }
    }

    #[test]
    fn tiles_match_the_general_windows() {
        tiles_match(|v: f32| v);
        tiles_match(f64::from);
        // Not tiles: odd sizes, padding, other windows.
        for (shape, kernel, stride, padding) in [
            ([1, 1, 5, 4], [2, 2], [2, 2], [0, 0]),
            ([1, 1, 4, 4], [2, 2], [2, 2], [1, 1]),
            ([1, 1, 6, 6], [3, 3], [2, 2], [0, 0]),
            ([1, 1, 4, 4], [2, 2], [1, 1], [0, 0]),
        ] {
            let spec = Pool2dSpec {
                kernel,
                stride,
                padding,
            };
            assert!(
                !pool_geometry("max_pool2d", &shape, &spec)
                    .unwrap()
                    .0
                    .tiles_2x2()
            );
        }
    }
}

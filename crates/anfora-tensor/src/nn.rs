//! Neural-network kernels on float tensors: 2-D convolution and its two backward products.
//!
//! Convolution lowers each (sample, group) to one matrix product: the input patches are laid
//! out as the columns of a matrix (`im2col`: row `(c, ki, kj)`, column `(oy, ox)`), so the
//! output is `W_g (O_g × C_g·KH·KW) · cols (C_g·KH·KW × OH·OW)`, computed by the crate's gemm.
//! The gradient of the input is `W_gᵀ · d` scattered back into the image (`col2im`, which adds
//! where windows overlap), the gradient of the weight `Σ_n d · colsᵀ`. Large batches are split
//! over threads, each with its own column buffer (and, for the weight, its own partial sum),
//! allocated once per call.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::alloc::{self, try_filled};
#[cfg(target_arch = "x86_64")]
use crate::direct_conv;
use crate::matmul::{Dst, GemmElem, Layout};
use crate::shape_repr::tuple_repr;
use crate::{DType, ErrorKind, Result, Storage, Tensor, TensorError};

/// Products at least this large (multiply-adds) are worth spreading over threads.
const PARALLEL_WORK: usize = 1 << 18;

/// Input elements per group of planes in the max-pooling kernels ([`Pool::max_rows`]).
const GROUP_WORK: usize = 1 << 13;

/// The element types the nn kernels run on.
pub(crate) trait Float:
    GemmElem
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::AddAssign
{
    /// `s` as float32 values, when `Self` is `f32` (for kernels written for that type only).
    fn as_f32(_: &[Self]) -> Option<&[f32]> {
        None
    }
    fn as_f32_mut(_: &mut [Self]) -> Option<&mut [f32]> {
        None
    }
    fn as_f32_uninit(_: &mut [MaybeUninit<Self>]) -> Option<&mut [MaybeUninit<f32>]> {
        None
    }
}
impl Float for f32 {
    fn as_f32(s: &[f32]) -> Option<&[f32]> {
        Some(s)
    }
    fn as_f32_mut(s: &mut [f32]) -> Option<&mut [f32]> {
        Some(s)
    }
    fn as_f32_uninit(s: &mut [MaybeUninit<f32>]) -> Option<&mut [MaybeUninit<f32>]> {
        Some(s)
    }
}
impl Float for f64 {}

/// The zero padding of a 2-D convolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding2d {
    /// No padding.
    Valid,
    /// The output has the input's size (stride 1 only): `dilation·(k-1)` zeros per axis, half
    /// before (rounded down) and the rest after, as PyTorch pads.
    Same,
    /// Zeros before and after along the height (`h`) and width (`w`).
    Explicit { h: [usize; 2], w: [usize; 2] },
}

/// The hyper-parameters of a 2-D convolution (`ops.conv2d`'s keyword arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2dSpec {
    pub stride: [usize; 2],
    pub padding: Padding2d,
    pub dilation: [usize; 2],
    pub groups: usize,
}

impl Default for Conv2dSpec {
    fn default() -> Self {
        Conv2dSpec {
            stride: [1, 1],
            padding: Padding2d::Explicit {
                h: [0, 0],
                w: [0, 0],
            },
            dilation: [1, 1],
            groups: 1,
        }
    }
}

/// A convolution's sizes, checked: `x` is (N, C, H, W) (N = 1 for an unbatched input), the
/// weight (O, C/groups, KH, KW), the output (N, O, OH, OW).
#[derive(Clone, Copy, Debug)]
struct Conv {
    batched: bool,
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    o: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
    sh: usize,
    sw: usize,
    dh: usize,
    dw: usize,
    /// Zeros before the first row and column.
    pt: usize,
    pl: usize,
    groups: usize,
    /// Channels per group of the input and of the output.
    cg: usize,
    og: usize,
}

fn value_error(op: &str, msg: impl std::fmt::Display) -> TensorError {
    TensorError::new(ErrorKind::Value, format!("{op}: {msg}"))
}

/// The common float dtype of the operands of an nn kernel: a TypeError for other dtypes or
/// operands of two dtypes (PyTorch's rule: no implicit promotion).
pub fn nn_float_dtype(op: &str, dtypes: &[DType]) -> Result<DType> {
    let first = dtypes[0];
    if let Some(bad) = dtypes.iter().find(|d| !d.is_float()) {
        return Err(TensorError::new(
            ErrorKind::Type,
            format!("{op}: expected float32 or float64 tensors, got {bad}"),
        ));
    }
    if let Some(other) = dtypes.iter().find(|&&d| d != first) {
        return Err(TensorError::new(
            ErrorKind::Type,
            format!("{op}: the tensors must have one dtype, got {first} and {other}"),
        ));
    }
    Ok(first)
}

/// `(before, after)` zeros along one axis for `same` padding.
fn same_padding(k: usize, d: usize) -> [usize; 2] {
    let total = d * (k - 1);
    [total / 2, total - total / 2]
}

/// The output length along one axis, or `None` when the dilated kernel does not fit.
fn out_len(len: usize, pad: [usize; 2], k: usize, s: usize, d: usize) -> Option<usize> {
    let padded = len + pad[0] + pad[1];
    let eff = d * (k - 1) + 1;
    (eff <= padded).then(|| (padded - eff) / s + 1)
}

/// Whether the padded length and the dilated kernel of one axis fit in `isize` (every index
/// the kernels compute is at most the padded length).
fn fits(len: usize, pad: [usize; 2], k: usize, d: usize) -> bool {
    let max = isize::MAX as usize;
    len.checked_add(pad[0])
        .and_then(|p| p.checked_add(pad[1]))
        .is_some_and(|p| p <= max)
        && d.checked_mul(k - 1).is_some_and(|e| e < max)
}

fn conv_geometry(op: &str, x: &[usize], w: &[usize], spec: &Conv2dSpec) -> Result<Conv> {
    let (batched, n, c, h, wd) = match *x {
        [n, c, h, w] => (true, n, c, h, w),
        [c, h, w] => (false, 1, c, h, w),
        _ => {
            return Err(value_error(
                op,
                format!(
                    "expected a 4-D input (N, C, H, W) or a 3-D one (C, H, W), got shape {}",
                    tuple_repr(x)
                ),
            ));
        }
    };
    let &[o, wc, kh, kw] = w else {
        return Err(value_error(
            op,
            format!(
                "expected a 4-D weight (out_channels, in_channels / groups, kH, kW), got shape {}",
                tuple_repr(w)
            ),
        ));
    };
    let Conv2dSpec {
        stride: [sh, sw],
        padding,
        dilation: [dh, dw],
        groups,
    } = *spec;
    if groups == 0 {
        return Err(value_error(op, "groups must be a positive integer"));
    }
    if sh == 0 || sw == 0 {
        return Err(value_error(
            op,
            format!("stride must be positive, got ({sh}, {sw})"),
        ));
    }
    if dh == 0 || dw == 0 {
        return Err(value_error(
            op,
            format!("dilation must be positive, got ({dh}, {dw})"),
        ));
    }
    if kh == 0 || kw == 0 {
        return Err(value_error(
            op,
            format!("the kernel size must be positive, got ({kh}, {kw})"),
        ));
    }
    if o % groups != 0 {
        return Err(value_error(
            op,
            format!("out_channels ({o}) must be divisible by groups ({groups})"),
        ));
    }
    if wc.checked_mul(groups) != Some(c) {
        return Err(value_error(
            op,
            format!(
                "input has {c} channels but weight expects {} (groups={groups})",
                wc.saturating_mul(groups)
            ),
        ));
    }
    let (ph, pw) = match padding {
        Padding2d::Valid => ([0, 0], [0, 0]),
        Padding2d::Same => {
            if sh != 1 || sw != 1 {
                return Err(value_error(
                    op,
                    "padding='same' is not supported for strided convolutions",
                ));
            }
            (same_padding(kh, dh), same_padding(kw, dw))
        }
        Padding2d::Explicit { h, w } => (h, w),
    };
    if !fits(h, ph, kh, dh) || !fits(wd, pw, kw, dw) {
        return Err(value_error(op, "the padding or the dilation is too large"));
    }
    let (Some(oh), Some(ow)) = (out_len(h, ph, kh, sh, dh), out_len(wd, pw, kw, sw, dw)) else {
        return Err(value_error(
            op,
            format!(
                "the padded input ({}, {}) is smaller than the dilated kernel ({}, {})",
                h + ph[0] + ph[1],
                wd + pw[0] + pw[1],
                dh * (kh - 1) + 1,
                dw * (kw - 1) + 1
            ),
        ));
    };
    Ok(Conv {
        batched,
        n,
        c,
        h,
        w: wd,
        o,
        kh,
        kw,
        oh,
        ow,
        sh,
        sw,
        dh,
        dw,
        pt: ph[0],
        pl: pw[0],
        groups,
        cg: wc,
        og: o / groups,
    })
}

impl Conv {
    /// Rows of the column matrix: `C_g·KH·KW`.
    fn k(&self) -> usize {
        self.cg * self.kh * self.kw
    }
    fn ohw(&self) -> usize {
        self.oh * self.ow
    }
    fn hw(&self) -> usize {
        self.h * self.w
    }
    fn output_shape(&self) -> Vec<usize> {
        let mut s = vec![self.o, self.oh, self.ow];
        if self.batched {
            s.insert(0, self.n);
        }
        s
    }
    fn input_shape(&self) -> Vec<usize> {
        let mut s = vec![self.c, self.h, self.w];
        if self.batched {
            s.insert(0, self.n);
        }
        s
    }
    fn weight_shape(&self) -> Vec<usize> {
        vec![self.o, self.cg, self.kh, self.kw]
    }
    /// Multiply-adds of the whole convolution (saturating).
    fn work(&self) -> usize {
        self.n
            .saturating_mul(self.o)
            .saturating_mul(self.k())
            .saturating_mul(self.ohw())
    }
    /// A 1×1 kernel with unit strides and no padding reads the input itself as its columns.
    fn pointwise(&self) -> bool {
        self.kh == 1
            && self.kw == 1
            && self.sh == 1
            && self.sw == 1
            && self.pt == 0
            && self.pl == 0
            && self.oh == self.h
            && self.ow == self.w
    }
    /// How many parallel tasks the batch is split into, and how many samples each takes.
    fn tasks(&self) -> (usize, usize) {
        let threads = rayon::current_num_threads().max(1);
        let tasks = if self.work() >= PARALLEL_WORK && threads > 1 {
            self.n.min(threads)
        } else {
            1
        };
        let tasks = tasks.max(1);
        (tasks, self.n.div_ceil(tasks).max(1))
    }
    /// Whether each group's product runs on the thread pool itself: only when the batch is
    /// one task and a product is large enough.
    fn gemm_threads(&self, tasks: usize) -> bool {
        tasks == 1 && self.og * self.k() * self.ohw() >= PARALLEL_WORK
    }
}

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
fn columns<'a, T: Float>(xg: &'a [T], g: &Conv, cols: &'a mut [T]) -> &'a [T] {
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

#[inline(always)]
fn im2col_with<T: Float, R: RunOps<T>>(x: &[T], g: &Conv, cols: &mut [T]) {
    let (ohw, hw) = (g.ohw(), g.hw());
    let zero = T::zero();
    let mut rows = cols.chunks_exact_mut(ohw);
    for plane in x.chunks_exact(hw).take(g.cg) {
        for ki in 0..g.kh {
            let yoff = (ki * g.dh) as isize - g.pt as isize;
            let (oy0, oy1) = valid_range(g.oh, g.sh, yoff, g.h);
            for kj in 0..g.kw {
                let xoff = (kj * g.dw) as isize - g.pl as isize;
                let (ox0, ox1) = valid_range(g.ow, g.sw, xoff, g.w);
                let dst = rows.next().expect("one row per (c, ki, kj)");
                for (oy, drow) in dst.chunks_exact_mut(g.ow).enumerate() {
                    if oy < oy0 || oy >= oy1 || ox0 == ox1 {
                        drow.fill(zero);
                        continue;
                    }
                    let iy = (oy * g.sh) as isize + yoff;
                    let src = &plane[iy as usize * g.w..(iy as usize + 1) * g.w];
                    drow[..ox0].fill(zero);
                    drow[ox1..].fill(zero);
                    let ix0 = ((ox0 * g.sw) as isize + xoff) as usize;
                    let run = &mut drow[ox0..ox1];
                    if g.sw == 1 {
                        R::copy(run, &src[ix0..ix0 + run.len()]);
                    } else {
                        for (j, v) in run.iter_mut().enumerate() {
                            *v = src[ix0 + j * g.sw];
                        }
                    }
                }
            }
        }
    }
}

/// The adjoint of [`im2col`]: adds every column entry back into the input position it was
/// read from (`dx`: C_g × H × W); padding positions are dropped.
fn col2im<T: Float>(cols: &[T], g: &Conv, dx: &mut [T]) {
    let (ohw, hw) = (g.ohw(), g.hw());
    let mut rows = cols.chunks_exact(ohw);
    for plane in dx.chunks_exact_mut(hw).take(g.cg) {
        for ki in 0..g.kh {
            let yoff = (ki * g.dh) as isize - g.pt as isize;
            let (oy0, oy1) = valid_range(g.oh, g.sh, yoff, g.h);
            for kj in 0..g.kw {
                let xoff = (kj * g.dw) as isize - g.pl as isize;
                let (ox0, ox1) = valid_range(g.ow, g.sw, xoff, g.w);
                let src = rows.next().expect("one row per (c, ki, kj)");
                if ox0 == ox1 {
                    continue;
                }
                for oy in oy0..oy1 {
                    let iy = ((oy * g.sh) as isize + yoff) as usize;
                    let drow = &mut plane[iy * g.w..(iy + 1) * g.w];
                    let srow = &src[oy * g.ow + ox0..oy * g.ow + ox1];
                    let ix0 = ((ox0 * g.sw) as isize + xoff) as usize;
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
            }
        }
    }
}

/// One column buffer (C_g·KH·KW × OH·OW) per task; empty for pointwise convolutions.
fn column_buffers<T: Float>(g: &Conv, tasks: usize) -> Result<Vec<Vec<T>>> {
    let shape = if g.pointwise() {
        [0, 0]
    } else {
        [g.k(), g.ohw()]
    };
    (0..tasks).map(|_| try_filled(&shape, T::zero())).collect()
}

/// Runs `work(first_sample, part, scratch)` over consecutive parts of `dst` (`per` elements a
/// sample), in parallel when there is more than one task.
fn over_batch<T: Float, S: Send>(
    dst: &mut [T],
    per: usize,
    (tasks, chunk): (usize, usize),
    scratch: &mut [S],
    work: impl Fn(usize, &mut [T], &mut S) + Sync + Send,
) {
    if dst.is_empty() {
        return;
    }
    if tasks <= 1 {
        work(0, dst, &mut scratch[0]);
        return;
    }
    dst.par_chunks_mut(chunk * per)
        .zip(scratch.par_iter_mut())
        .enumerate()
        .for_each(|(i, (part, s))| work(i * chunk, part, s));
}

/// `g`'s sizes for [`direct_conv`], when its kernels take them: stride 1, no padding or
/// dilation, one group, and small (the caller checks float32).
#[cfg(target_arch = "x86_64")]
fn direct_shape(g: &Conv) -> Option<direct_conv::Shape> {
    // No padding after the last row or column either: the output is exactly the valid part.
    let plain = (g.sh, g.sw, g.dh, g.dw, g.pt, g.pl, g.groups) == (1, 1, 1, 1, 0, 0, 1)
        && g.oh + g.kh == g.h + 1
        && g.ow + g.kw == g.w + 1;
    let s = direct_conv::Shape {
        c: g.c,
        h: g.h,
        w: g.w,
        o: g.o,
        kh: g.kh,
        kw: g.kw,
    };
    (plain && direct_conv::suits(&s)).then_some(s)
}

/// [`conv_forward`] by [`direct_conv`], when it takes the convolution.
#[cfg(target_arch = "x86_64")]
fn direct_forward<T: Float>(x: &[T], w: &[T], g: &Conv) -> Result<Option<Vec<T>>> {
    let (Some(x), Some(w), Some(s)) = (T::as_f32(x), T::as_f32(w), direct_shape(g)) else {
        return Ok(None);
    };
    let mut out = try_filled(&g.output_shape(), T::zero())?;
    let wt = direct_conv::tap_matrix(w, &s);
    let (per_in, per_out) = (g.c * g.hw(), g.o * g.ohw());
    let dst = T::as_f32_mut(&mut out).expect("float32, as the inputs");
    let tasks = g.tasks();
    over_batch(
        dst,
        per_out,
        tasks,
        &mut vec![(); tasks.0],
        |first, part, _| {
            for (i, out_n) in part.chunks_exact_mut(per_out).enumerate() {
                let xn = &x[(first + i) * per_in..(first + i + 1) * per_in];
                direct_conv::forward(xn, &wt, &s, out_n);
            }
        },
    );
    Ok(Some(out))
}

/// [`conv_backprop_filter`] by [`direct_conv`], when it takes the convolution: each part of
/// the batch sums into its own taps-by-lanes buffer, the parts are added in order.
#[cfg(target_arch = "x86_64")]
fn direct_filter<T: Float>(d: &[T], x: &[T], g: &Conv) -> Result<Option<Vec<T>>> {
    let (Some(d), Some(x), Some(s)) = (T::as_f32(d), T::as_f32(x), direct_shape(g)) else {
        return Ok(None);
    };
    let mut dw = try_filled(&g.weight_shape(), T::zero())?;
    let (tasks, chunk) = g.tasks();
    let (per_in, per_out) = (g.c * g.hw(), g.o * g.ohw());
    let mut sums: Vec<(Vec<f32>, Vec<f32>)> = (0..tasks)
        .map(|_| -> Result<_> {
            Ok((
                try_filled(&[s.tap_matrix_len()], 0.0f32)?,
                try_filled(&[s.positions_len()], 0.0f32)?,
            ))
        })
        .collect::<Result<_>>()?;
    sum_by_parts(&mut sums, |part, (dwt, dt)| {
        for n in part * chunk..((part + 1) * chunk).min(g.n) {
            let (dn, xn) = (
                &d[n * per_out..(n + 1) * per_out],
                &x[n * per_in..(n + 1) * per_in],
            );
            direct_conv::filter(dn, xn, &s, dt, dwt);
        }
    });
    let (first, rest) = sums.split_first_mut().expect("at least one part");
    for (other, _) in rest.iter() {
        add_into(&mut first.0, other);
    }
    let dst = T::as_f32_mut(&mut dw).expect("float32, as the inputs");
    direct_conv::from_tap_matrix(&first.0, &s, dst);
    Ok(Some(dw))
}

fn conv_forward<T: Float>(x: &[T], w: &[T], g: &Conv) -> Result<Vec<T>> {
    #[cfg(target_arch = "x86_64")]
    if let Some(out) = direct_forward(x, w, g)? {
        return Ok(out);
    }
    let mut out = try_filled(&g.output_shape(), T::zero())?;
    let (tasks, chunk) = g.tasks();
    let mut bufs = column_buffers::<T>(g, tasks)?;
    let (k, ohw, chw) = (g.k(), g.ohw(), g.c * g.hw());
    let gemm_threads = g.gemm_threads(tasks);
    over_batch(
        &mut out,
        g.o * ohw,
        (tasks, chunk),
        &mut bufs,
        |first, part, cols| {
            for (i, out_n) in part.chunks_exact_mut(g.o * ohw).enumerate() {
                let xn = &x[(first + i) * chw..(first + i + 1) * chw];
                for grp in 0..g.groups {
                    let xg = &xn[grp * g.cg * g.hw()..(grp + 1) * g.cg * g.hw()];
                    let rhs = columns(xg, g, cols);
                    T::gemm_with(
                        &mut out_n[grp * g.og * ohw..(grp + 1) * g.og * ohw],
                        &w[grp * g.og * k..(grp + 1) * g.og * k],
                        Layout::of(k, false),
                        rhs,
                        Layout::of(ohw, false),
                        (g.og, k, ohw),
                        Dst::Overwrite,
                        gemm_threads,
                    );
                }
            }
        },
    );
    Ok(out)
}

fn conv_backprop_input<T: Float>(d: &[T], w: &[T], g: &Conv) -> Result<Vec<T>> {
    let mut dx = try_filled(&g.input_shape(), T::zero())?;
    let (tasks, chunk) = g.tasks();
    let mut bufs = column_buffers::<T>(g, tasks)?;
    let (k, ohw, chw) = (g.k(), g.ohw(), g.c * g.hw());
    let gemm_threads = g.gemm_threads(tasks);
    over_batch(
        &mut dx,
        chw,
        (tasks, chunk),
        &mut bufs,
        |first, part, cols| {
            for (i, dx_n) in part.chunks_exact_mut(chw).enumerate() {
                let dn = &d[(first + i) * g.o * ohw..(first + i + 1) * g.o * ohw];
                for grp in 0..g.groups {
                    let dxg = &mut dx_n[grp * g.cg * g.hw()..(grp + 1) * g.cg * g.hw()];
                    let wg = &w[grp * g.og * k..(grp + 1) * g.og * k];
                    let dg = &dn[grp * g.og * ohw..(grp + 1) * g.og * ohw];
                    // The columns' gradient W_gᵀ · d_g (k × OH·OW), the image's gradient itself for
                    // a pointwise kernel.
                    let product = |dst: &mut [T]| {
                        T::gemm_with(
                            dst,
                            wg,
                            Layout::of(k, true),
                            dg,
                            Layout::of(ohw, false),
                            (k, g.og, ohw),
                            Dst::Overwrite,
                            gemm_threads,
                        )
                    };
                    if g.pointwise() {
                        product(dxg);
                    } else {
                        product(cols);
                        col2im(cols, g, dxg);
                    }
                }
            }
        },
    );
    Ok(dx)
}

fn conv_backprop_filter<T: Float>(d: &[T], x: &[T], g: &Conv) -> Result<Vec<T>> {
    #[cfg(target_arch = "x86_64")]
    if let Some(dw) = direct_filter(d, x, g)? {
        return Ok(dw);
    }
    let wshape = g.weight_shape();
    let (tasks, chunk) = g.tasks();
    // Per part of the batch: its sum (the first part's becomes the result) and its columns.
    let mut parts: Vec<(Vec<T>, Vec<T>)> = column_buffers::<T>(g, tasks)?
        .into_iter()
        .map(|cols| Ok((try_filled(&wshape, T::zero())?, cols)))
        .collect::<Result<_>>()?;
    let (k, ohw, chw) = (g.k(), g.ohw(), g.c * g.hw());
    let gemm_threads = g.gemm_threads(tasks);
    if !parts[0].0.is_empty() {
        sum_by_parts(&mut parts, |part, (dw, cols)| {
            for n in part * chunk..((part + 1) * chunk).min(g.n) {
                let xn = &x[n * chw..(n + 1) * chw];
                let dn = &d[n * g.o * ohw..(n + 1) * g.o * ohw];
                for grp in 0..g.groups {
                    let xg = &xn[grp * g.cg * g.hw()..(grp + 1) * g.cg * g.hw()];
                    let rhs = columns(xg, g, cols);
                    // dW_g += d_g (O_g × OH·OW) · colsᵀ (OH·OW × k).
                    T::gemm_with(
                        &mut dw[grp * g.og * k..(grp + 1) * g.og * k],
                        &dn[grp * g.og * ohw..(grp + 1) * g.og * ohw],
                        Layout::of(ohw, false),
                        rhs,
                        Layout::of(ohw, true),
                        (g.og, ohw, k),
                        Dst::Accumulate,
                        gemm_threads,
                    );
                }
            }
        });
    }
    let mut parts = parts.into_iter();
    let (mut dw, _) = parts.next().expect("at least one part");
    for (other, _) in parts {
        add_into(&mut dw, &other);
    }
    Ok(dw)
}

/// Runs `work(part, sum)` for every part of a batch, each adding its samples into its own
/// `sum`: in parallel when there is more than one. The caller then adds the sums in order, so
/// the result does not depend on the threads.
fn sum_by_parts<S: Send>(sums: &mut [S], work: impl Fn(usize, &mut S) + Sync + Send) {
    match sums {
        [] => {}
        [one] => work(0, one),
        _ => sums
            .par_iter_mut()
            .enumerate()
            .for_each(|(part, sum)| work(part, sum)),
    }
}

/// `acc += other`, element by element.
pub(crate) fn add_into<T: Float>(acc: &mut [T], other: &[T]) {
    for (a, &b) in acc.iter_mut().zip(other) {
        *a += b;
    }
}

/// `ops.conv2d`'s result shape for an input of shape `x` and a weight of shape `w`, or its
/// ValueError (wrong ranks, channels, groups, a kernel larger than the padded input, ...).
pub fn conv2d_output_shape(x: &[usize], w: &[usize], spec: &Conv2dSpec) -> Result<Vec<usize>> {
    Ok(conv_geometry("conv2d", x, w, spec)?.output_shape())
}

fn check_shape(op: &str, what: &str, got: &[usize], expected: &[usize]) -> Result<()> {
    if got != expected {
        return Err(value_error(
            op,
            format!(
                "{what} has shape {}, expected {}",
                tuple_repr(got),
                tuple_repr(expected)
            ),
        ));
    }
    Ok(())
}

/// Runs the kernel for the operands' float dtype.
fn dispatch2(
    a: &Tensor,
    b: &Tensor,
    f32_kernel: impl FnOnce(&[f32], &[f32]) -> Result<Vec<f32>>,
    f64_kernel: impl FnOnce(&[f64], &[f64]) -> Result<Vec<f64>>,
) -> Result<Storage> {
    Ok(match (a.data(), b.data()) {
        (Storage::F32(x), Storage::F32(y)) => Storage::F32(f32_kernel(x, y)?),
        (Storage::F64(x), Storage::F64(y)) => Storage::F64(f64_kernel(x, y)?),
        _ => unreachable!("dtypes checked by nn_float_dtype"),
    })
}

pub(crate) fn conv2d(x: &Tensor, w: &Tensor, spec: &Conv2dSpec) -> Result<Tensor> {
    let op = "conv2d";
    let dtype = nn_float_dtype(op, &[x.dtype(), w.dtype()])?;
    let g = conv_geometry(op, x.shape(), w.shape(), spec)?;
    let shape = g.output_shape();
    alloc::check_size(&shape, dtype)?;
    let storage = dispatch2(
        x,
        w,
        |x, w| conv_forward(x, w, &g),
        |x, w| conv_forward(x, w, &g),
    )?;
    Ok(Tensor::from_storage(storage, shape))
}

pub(crate) fn conv2d_backprop_input(
    d: &Tensor,
    w: &Tensor,
    input_shape: &[usize],
    spec: &Conv2dSpec,
) -> Result<Tensor> {
    let op = "conv2d_backprop_input";
    let dtype = nn_float_dtype(op, &[d.dtype(), w.dtype()])?;
    let g = conv_geometry(op, input_shape, w.shape(), spec)?;
    check_shape(op, "the sensitivity", d.shape(), &g.output_shape())?;
    alloc::check_size(input_shape, dtype)?;
    let storage = dispatch2(
        d,
        w,
        |d, w| conv_backprop_input(d, w, &g),
        |d, w| conv_backprop_input(d, w, &g),
    )?;
    Ok(Tensor::from_storage(storage, input_shape.to_vec()))
}

pub(crate) fn conv2d_backprop_filter(
    d: &Tensor,
    x: &Tensor,
    weight_shape: &[usize],
    spec: &Conv2dSpec,
) -> Result<Tensor> {
    let op = "conv2d_backprop_filter";
    let dtype = nn_float_dtype(op, &[d.dtype(), x.dtype()])?;
    let g = conv_geometry(op, x.shape(), weight_shape, spec)?;
    check_shape(op, "the sensitivity", d.shape(), &g.output_shape())?;
    alloc::check_size(weight_shape, dtype)?;
    let storage = dispatch2(
        d,
        x,
        |d, x| conv_backprop_filter(d, x, &g),
        |d, x| conv_backprop_filter(d, x, &g),
    )?;
    Ok(Tensor::from_storage(storage, weight_shape.to_vec()))
}

// ---- 2-D pooling ----------------------------------------------------------------------------

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
    let (lead, h, w) = match *x {
        [n, c, h, w] => (vec![n, c], h, w),
        [c, h, w] => (vec![c], h, w),
        _ => {
            return Err(value_error(
                op,
                format!(
                    "expected a 4-D input (N, C, H, W) or a 3-D one (C, H, W), got shape {}",
                    tuple_repr(x)
                ),
            ));
        }
    };
    let Pool2dSpec {
        kernel: [kh, kw],
        stride: [sh, sw],
        padding: [ph, pw],
    } = *spec;
    if kh == 0 || kw == 0 {
        return Err(value_error(
            op,
            format!("kernel_size must be positive, got ({kh}, {kw})"),
        ));
    }
    if sh == 0 || sw == 0 {
        return Err(value_error(
            op,
            format!("stride must be positive, got ({sh}, {sw})"),
        ));
    }
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
            out.par_chunks_mut(per_out * group)
                .enumerate()
                .for_each(|(k, o)| run(k * group, o));
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
            out.par_chunks_mut(per_row * per_task)
                .zip(x.par_chunks(2 * self.w * per_task))
                .enumerate()
                .for_each(|(k, (o, x))| f(k * per_task, x, o));
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
        for ((rows, dxr), dr) in x
            .chunks_exact(2 * w)
            .zip(dx.chunks_exact_mut(2 * w))
            .zip(d.chunks_exact(ow))
        {
            let (x0, x1) = rows.split_at(w);
            let (dx0, dx1) = dxr.split_at_mut(w);
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
        out.par_chunks_mut(per_out)
            .zip(inp.par_chunks(per_in.max(1)))
            .for_each(|(o, i)| f(o, i));
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

/// Runs a one-operand kernel for the operand's float dtype.
fn dispatch1(
    op: &str,
    a: &Tensor,
    f32_kernel: impl FnOnce(&[f32]) -> Result<Vec<f32>>,
    f64_kernel: impl FnOnce(&[f64]) -> Result<Vec<f64>>,
) -> Result<Storage> {
    nn_float_dtype(op, &[a.dtype()])?;
    Ok(match a.data() {
        Storage::F32(x) => Storage::F32(f32_kernel(x)?),
        Storage::F64(x) => Storage::F64(f64_kernel(x)?),
        _ => unreachable!("dtype checked by nn_float_dtype"),
    })
}

pub(crate) fn pool2d(kind: PoolKind, x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
    let op = match kind {
        PoolKind::Max => "max_pool2d",
        PoolKind::Avg => "avg_pool2d",
    };
    nn_float_dtype(op, &[x.dtype()])?;
    let (g, shape) = pool_geometry(op, x.shape(), spec)?;
    alloc::check_size(&shape, x.dtype())?;
    let storage = dispatch1(
        op,
        x,
        |x| pool_forward(x, &g, kind, &shape),
        |x| pool_forward(x, &g, kind, &shape),
    )?;
    Ok(Tensor::from_storage(storage, shape))
}

pub(crate) fn max_pool2d_grad(d: &Tensor, x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
    let op = "max_pool2d_grad";
    nn_float_dtype(op, &[d.dtype(), x.dtype()])?;
    let (g, out) = pool_geometry(op, x.shape(), spec)?;
    check_shape(op, "the sensitivity", d.shape(), &out)?;
    let shape = x.shape().to_vec();
    let storage = dispatch2(
        d,
        x,
        |d, x| pool_backward(d, Some(x), &g, PoolKind::Max, &shape),
        |d, x| pool_backward(d, Some(x), &g, PoolKind::Max, &shape),
    )?;
    Ok(Tensor::from_storage(storage, shape))
}

pub(crate) fn max_pool2d_grad_grad(dd: &Tensor, x: &Tensor, spec: &Pool2dSpec) -> Result<Tensor> {
    let op = "max_pool2d_grad_grad";
    nn_float_dtype(op, &[dd.dtype(), x.dtype()])?;
    let (g, out) = pool_geometry(op, x.shape(), spec)?;
    check_shape(op, "the sensitivity", dd.shape(), x.shape())?;
    let storage = dispatch2(
        dd,
        x,
        |dd, x| max_pool_grad_grad(dd, x, &g, &out),
        |dd, x| max_pool_grad_grad(dd, x, &g, &out),
    )?;
    Ok(Tensor::from_storage(storage, out))
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
    let storage = dispatch1(
        op,
        d,
        |d| pool_backward(d, None, &g, PoolKind::Avg, input_shape),
        |d| pool_backward(d, None, &g, PoolKind::Avg, input_shape),
    )?;
    Ok(Tensor::from_storage(storage, input_shape.to_vec()))
}

// ---- softmax, log_softmax, logsumexp -----------------------------------------------------------
//
// Composed of the crate's own reductions and elementwise kernels (so their numerics are those
// of `ops.max`, `ops.exp`, `ops.sum`, `ops.log`), stabilized by subtracting the maximum.

/// `axis` of an `ndim`-d tensor, or numpy's error prefixed with the operation.
fn nn_axis(op: &str, axis: i64, ndim: usize) -> Result<usize> {
    crate::shape::normalize_axis(axis, ndim).map_err(|e| value_error(op, e.message))
}

pub(crate) fn softmax(x: &Tensor, axis: i64, log: bool) -> Result<Tensor> {
    use crate::{BinaryOp, ReduceOp, UnaryOp};
    let op = if log { "log_softmax" } else { "softmax" };
    nn_float_dtype(op, &[x.dtype()])?;
    let ax = [nn_axis(op, axis, x.ndim())? as i64];
    if x.numel() == 0 {
        return Ok(x.clone());
    }
    let m = Tensor::reduce(ReduceOp::Max, x, Some(&ax), true)?;
    let z = Tensor::binary(BinaryOp::Sub, x, &m)?;
    let e = Tensor::unary(UnaryOp::Exp, &z)?;
    let s = Tensor::reduce(ReduceOp::Sum, &e, Some(&ax), true)?;
    if log {
        Tensor::binary(BinaryOp::Sub, &z, &Tensor::unary(UnaryOp::Log, &s)?)
    } else {
        Tensor::binary(BinaryOp::Div, &e, &s)
    }
}

pub(crate) fn logsumexp(x: &Tensor, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
    use crate::{BinaryOp, ReduceOp, Scalar, UnaryOp};
    let op = "logsumexp";
    nn_float_dtype(op, &[x.dtype()])?;
    if let Some(axes) = axes {
        for &a in axes {
            nn_axis(op, a, x.ndim())?;
        }
    }
    let sum = |t: &Tensor, keep: bool| Tensor::reduce(ReduceOp::Sum, t, axes, keep);
    if x.numel() == 0 {
        // A sum over nothing is 0: its log is -inf.
        return Tensor::unary(UnaryOp::Log, &sum(x, keepdims)?);
    }
    let m = Tensor::reduce(ReduceOp::Max, x, axes, true)?;
    // An infinite maximum is not subtracted (inf - inf would be NaN): all -inf gives -inf,
    // an inf gives inf.
    let finite = Tensor::binary_scalar(
        BinaryOp::Eq,
        &Tensor::binary(BinaryOp::Sub, &m, &m)?,
        Scalar::Int(0),
        false,
    )?;
    let m = Tensor::where_(&finite, &m, &Tensor::scalar(Scalar::Int(0), x.dtype())?)?;
    let e = Tensor::unary(UnaryOp::Exp, &Tensor::binary(BinaryOp::Sub, x, &m)?)?;
    let l = Tensor::unary(UnaryOp::Log, &sum(&e, keepdims)?)?;
    let shape: Vec<i64> = l.shape().iter().map(|&d| d as i64).collect();
    Tensor::binary(BinaryOp::Add, &l, &m.reshape(&shape)?)
}

#[cfg(test)]
mod tile_tests {
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

#[cfg(all(test, target_arch = "x86_64"))]
mod direct_tests {
    use super::*;

    fn random(n: usize, seed: u64) -> Vec<f32> {
        let mut rng = crate::random::Generator::new(seed);
        let t = rng.uniform(&[n], -1.0, 1.0, DType::F32).unwrap();
        t.as_f32_slice().unwrap().to_vec()
    }

    /// The direct kernels against their defined order of sums, bit for bit (random floats, so
    /// any other order or a lost lane shows): each output over the taps `(c, ki, kj)` in order
    /// from zero; each filter-gradient element over the images of a part and their positions
    /// in order, the parts added in order. Sizes cover LeNet's two layers, two lane groups
    /// (the second partial), every kernel width 1..=7, every tile width (24, 16, 8, 4, 2, 1)
    /// and a batch split over the threads.
    #[test]
    fn direct_convolutions_sum_in_their_order() {
        if !crate::avx512::available() {
            return;
        }
        let spec = Conv2dSpec::default();
        for (n, c, h, w, o, kh, kw) in [
            (3, 1, 28, 28, 6, 5, 5),
            (64, 6, 12, 12, 16, 5, 5),
            (2, 3, 9, 61, 20, 2, 7),
            (2, 2, 6, 8, 17, 3, 1),
            (1, 1, 4, 9, 1, 4, 2),
            (2, 2, 7, 10, 3, 1, 3),
            (1, 2, 8, 13, 5, 6, 4),
            (1, 1, 6, 6, 32, 2, 6),
        ] {
            let (oh, ow) = (h + 1 - kh, w + 1 - kw);
            let xv = random(n * c * h * w, 1 + n as u64);
            let wv = random(o * c * kh * kw, 2 + o as u64);
            let dv = random(n * o * oh * ow, 3 + kw as u64);
            let x = Tensor::from_f32(xv.clone(), &[n, c, h, w]).unwrap();
            let wt = Tensor::from_f32(wv.clone(), &[o, c, kh, kw]).unwrap();
            let d = Tensor::from_f32(dv.clone(), &[n, o, oh, ow]).unwrap();
            let g = conv_geometry("conv2d", &[n, c, h, w], &[o, c, kh, kw], &spec).unwrap();
            assert!(direct_shape(&g).is_some(), "{n} {c} {h} {w} {o} {kh} {kw}");
            let channels = c;
            let xat = |b: usize, ci: usize, y: usize, xx: usize| {
                xv[((b * channels + ci) * h + y) * w + xx]
            };
            let taps =
                || (0..c).flat_map(|c| (0..kh).flat_map(move |i| (0..kw).map(move |j| (c, i, j))));
            // Forward.
            let got = Tensor::conv2d(&x, &wt, &spec).unwrap();
            let got = got.as_f32_slice().unwrap();
            for (at, &v) in got.iter().enumerate() {
                let (b, oc, y, xx) = (
                    at / (o * oh * ow),
                    at / (oh * ow) % o,
                    at / ow % oh,
                    at % ow,
                );
                let want = taps().fold(0.0f32, |acc, (ci, i, j)| {
                    wv[((oc * c + ci) * kh + i) * kw + j].mul_add(xat(b, ci, y + i, xx + j), acc)
                });
                assert_eq!(
                    v.to_bits(),
                    want.to_bits(),
                    "forward {at} of {n} {c} {h} {w} {o} {kh} {kw}"
                );
            }
            // Filter gradient, by parts of the batch.
            let got = Tensor::conv2d_backprop_filter(&d, &x, &[o, c, kh, kw], &spec).unwrap();
            let got = got.as_f32_slice().unwrap();
            let (tasks, chunk) = g.tasks();
            for (at, &v) in got.iter().enumerate() {
                let (oc, ci, i, j) = (
                    at / (c * kh * kw),
                    at / (kh * kw) % c,
                    at / kw % kh,
                    at % kw,
                );
                let part = |p: usize| {
                    let mut acc = 0.0f32;
                    for b in p * chunk..((p + 1) * chunk).min(n) {
                        for y in 0..oh {
                            for xx in 0..ow {
                                let dy = dv[((b * o + oc) * oh + y) * ow + xx];
                                acc = dy.mul_add(xat(b, ci, y + i, xx + j), acc);
                            }
                        }
                    }
                    acc
                };
                let want = (1..tasks).fold(part(0), |acc, p| acc + part(p));
                assert_eq!(
                    v.to_bits(),
                    want.to_bits(),
                    "filter {at} of {n} {c} {h} {w} {o} {kh} {kw}"
                );
            }
        }
    }

    /// Convolutions the direct kernels do not take stay on the general path.
    #[test]
    fn other_convolutions_are_not_direct() {
        let geometry = |x: &[usize], w: &[usize], spec: &Conv2dSpec| {
            direct_shape(&conv_geometry("conv2d", x, w, spec).unwrap())
        };
        let plain = Conv2dSpec::default();
        assert!(
            geometry(&[1, 1, 8, 8], &[1, 1, 3, 8], &plain).is_none(),
            "8 wide"
        );
        assert!(
            geometry(&[1, 1, 8, 8], &[33, 1, 3, 3], &plain).is_none(),
            "33 channels"
        );
        assert!(
            geometry(&[1, 64, 8, 8], &[4, 64, 3, 3], &plain).is_none(),
            "576 taps"
        );
        assert!(
            geometry(&[1, 1, 258, 258], &[1, 1, 2, 2], &plain).is_none(),
            "257² positions"
        );
        assert!(
            geometry(&[1, 1, 257, 257], &[1, 1, 2, 2], &plain).is_some()
                == crate::avx512::available(),
            "256² positions"
        );
        let strided = Conv2dSpec {
            stride: [1, 2],
            ..plain
        };
        assert!(geometry(&[1, 1, 8, 8], &[2, 1, 3, 3], &strided).is_none());
        let dilated = Conv2dSpec {
            dilation: [2, 1],
            ..plain
        };
        assert!(geometry(&[1, 1, 8, 8], &[2, 1, 3, 3], &dilated).is_none());
        let grouped = Conv2dSpec { groups: 2, ..plain };
        assert!(geometry(&[1, 2, 8, 8], &[2, 1, 3, 3], &grouped).is_none());
        let padded = Conv2dSpec {
            padding: Padding2d::Explicit {
                h: [0, 1],
                w: [0, 0],
            },
            ..plain
        };
        assert!(geometry(&[1, 1, 8, 8], &[2, 1, 3, 3], &padded).is_none());
        assert!(
            geometry(&[1, 1, 8, 8], &[2, 1, 3, 3], &plain).is_some() == crate::avx512::available()
        );
    }
}

//! 2-D convolution and its two backward products.
//!
//! Convolution lowers each (sample, group) to one matrix product: the input patches are laid
//! out as the columns of a matrix (`im2col`: row `(c, ki, kj)`, column `(oy, ox)`), so the
//! output is `W_g (O_g × C_g·KH·KW) · cols (C_g·KH·KW × OH·OW)`, computed by the crate's gemm.
//! The gradient of the input is `W_gᵀ · d` scattered back into the image (`col2im`, which adds
//! where windows overlap), the gradient of the weight `Σ_n d · colsᵀ`. Large batches are split
//! over threads, each with its own column buffer (and, for the weight, its own partial sum),
//! allocated once per call.

use super::geometry::{Conv, Conv2dSpec, conv_geometry};
use super::im2col::{col2im, columns};
use super::{Float, PARALLEL_WORK, add_into, check_shape, float_kernel, nn_float_dtype};
use crate::alloc::{self, try_filled};
#[cfg(target_arch = "x86_64")]
use crate::direct_conv;
use crate::matmul::{Dst, Layout};
use crate::{Result, Tensor};

impl Conv {
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
    crate::parallel::for_each_part_and_item(dst, chunk * per, scratch, |i, part, s| {
        work(i * chunk, part, s)
    });
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

/// Part `i` of `v` cut into parts of `len` elements (the samples of a batch, the groups of a
/// sample).
fn part<T>(v: &[T], i: usize, len: usize) -> &[T] {
    &v[i * len..(i + 1) * len]
}

fn part_mut<T>(v: &mut [T], i: usize, len: usize) -> &mut [T] {
    &mut v[i * len..(i + 1) * len]
}

/// `dst (m×n) = op(a) · op(b)`, or `+=` with [`Dst::Accumulate`], for packed `m×k` and `k×n`
/// operands, each read transposed where its flag says: the product of one group, on the
/// thread pool when `threads`.
fn group_product<T: Float>(
    dst: &mut [T],
    (a, a_transposed): (&[T], bool),
    (b, b_transposed): (&[T], bool),
    (m, k, n): (usize, usize, usize),
    found: Dst,
    threads: bool,
) {
    let a_layout = Layout::of(if a_transposed { m } else { k }, a_transposed);
    let b_layout = Layout::of(if b_transposed { k } else { n }, b_transposed);
    T::gemm_with(dst, a, a_layout, b, b_layout, (m, k, n), found, threads);
}

/// How the general kernels split a batch: `tasks` parts of `chunk` samples, one column buffer
/// per part, and whether each group's product runs on the thread pool itself.
struct Split<T> {
    tasks: usize,
    chunk: usize,
    buffers: Vec<Vec<T>>,
    threads: bool,
}

impl<T: Float> Split<T> {
    fn of(g: &Conv) -> Result<Split<T>> {
        let (tasks, chunk) = g.tasks();
        Ok(Split {
            tasks,
            chunk,
            buffers: column_buffers(g, tasks)?,
            threads: g.gemm_threads(tasks),
        })
    }

    /// [`over_batch`] with the parts' column buffers.
    fn run(
        &mut self,
        dst: &mut [T],
        per: usize,
        work: impl Fn(usize, &mut [T], &mut Vec<T>) + Sync + Send,
    ) {
        over_batch(dst, per, (self.tasks, self.chunk), &mut self.buffers, work);
    }
}

fn conv_forward<T: Float>(x: &[T], w: &[T], g: &Conv) -> Result<Vec<T>> {
    #[cfg(target_arch = "x86_64")]
    if let Some(out) = direct_forward(x, w, g)? {
        return Ok(out);
    }
    let mut out = try_filled(&g.output_shape(), T::zero())?;
    let mut split = Split::of(g)?;
    let (k, ohw, threads) = (g.k(), g.ohw(), split.threads);
    let per_sample = g.o * ohw;
    split.run(&mut out, per_sample, |first, out, cols| {
        for (i, out_n) in out.chunks_exact_mut(per_sample).enumerate() {
            let xn = part(x, first + i, g.c * g.hw());
            for grp in 0..g.groups {
                let rhs = columns(part(xn, grp, g.cg * g.hw()), g, cols);
                let dst = part_mut(out_n, grp, g.og * ohw);
                let wg = part(w, grp, g.og * k);
                let dims = (g.og, k, ohw);
                group_product(
                    dst,
                    (wg, false),
                    (rhs, false),
                    dims,
                    Dst::Overwrite,
                    threads,
                );
            }
        }
    });
    Ok(out)
}

fn conv_backprop_input<T: Float>(d: &[T], w: &[T], g: &Conv) -> Result<Vec<T>> {
    let mut dx = try_filled(&g.input_shape(), T::zero())?;
    let mut split = Split::of(g)?;
    let (k, ohw, chw, threads) = (g.k(), g.ohw(), g.c * g.hw(), split.threads);
    split.run(&mut dx, chw, |first, dx, cols| {
        for (i, dx_n) in dx.chunks_exact_mut(chw).enumerate() {
            let dn = part(d, first + i, g.o * ohw);
            for grp in 0..g.groups {
                let dxg = part_mut(dx_n, grp, g.cg * g.hw());
                let (wg, dg) = (part(w, grp, g.og * k), part(dn, grp, g.og * ohw));
                // The columns' gradient W_gᵀ · d_g (k × OH·OW), the image's gradient itself
                // for a pointwise kernel.
                let dims = (k, g.og, ohw);
                let product = |dst: &mut [T]| {
                    group_product(dst, (wg, true), (dg, false), dims, Dst::Overwrite, threads)
                };
                if g.pointwise() {
                    product(dxg);
                } else {
                    product(cols);
                    col2im(cols, g, dxg);
                }
            }
        }
    });
    Ok(dx)
}

fn conv_backprop_filter<T: Float>(d: &[T], x: &[T], g: &Conv) -> Result<Vec<T>> {
    #[cfg(target_arch = "x86_64")]
    if let Some(dw) = direct_filter(d, x, g)? {
        return Ok(dw);
    }
    let wshape = g.weight_shape();
    let split = Split::<T>::of(g)?;
    // Per part of the batch: its sum (the first part's becomes the result) and its columns.
    let mut parts: Vec<(Vec<T>, Vec<T>)> = split
        .buffers
        .into_iter()
        .map(|cols| Ok((try_filled(&wshape, T::zero())?, cols)))
        .collect::<Result<_>>()?;
    let (k, ohw, threads) = (g.k(), g.ohw(), split.threads);
    if !parts[0].0.is_empty() {
        sum_by_parts(&mut parts, |p, (dw, cols)| {
            for n in p * split.chunk..((p + 1) * split.chunk).min(g.n) {
                let (xn, dn) = (part(x, n, g.c * g.hw()), part(d, n, g.o * ohw));
                for grp in 0..g.groups {
                    let rhs = columns(part(xn, grp, g.cg * g.hw()), g, cols);
                    // dW_g += d_g (O_g × OH·OW) · colsᵀ (OH·OW × k).
                    let (dwg, dg) = (part_mut(dw, grp, g.og * k), part(dn, grp, g.og * ohw));
                    let dims = (g.og, ohw, k);
                    group_product(
                        dwg,
                        (dg, false),
                        (rhs, true),
                        dims,
                        Dst::Accumulate,
                        threads,
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
        _ => crate::parallel::for_each_part(sums, 1, |part, sum| work(part, &mut sum[0])),
    }
}

pub(crate) fn conv2d(x: &Tensor, w: &Tensor, spec: &Conv2dSpec) -> Result<Tensor> {
    let op = "conv2d";
    let dtype = nn_float_dtype(op, &[x.dtype(), w.dtype()])?;
    let g = conv_geometry(op, x.shape(), w.shape(), spec)?;
    let shape = g.output_shape();
    alloc::check_size(&shape, dtype)?;
    Ok(float_kernel!(shape; x, w => conv_forward(x, w, &g)))
}

/// What a backward product of a convolution is the gradient with respect to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wrt {
    Input,
    Weight,
}

/// The gradient of [`conv2d`] with respect to its input (`other` is then the weight) or its
/// weight (`other` is the input), of shape `shape`, for the output's sensitivity `d`.
pub(crate) fn conv2d_backprop(
    wrt: Wrt,
    d: &Tensor,
    other: &Tensor,
    shape: &[usize],
    spec: &Conv2dSpec,
) -> Result<Tensor> {
    let (op, x, w) = match wrt {
        Wrt::Input => ("conv2d_backprop_input", shape, other.shape()),
        Wrt::Weight => ("conv2d_backprop_filter", other.shape(), shape),
    };
    let dtype = nn_float_dtype(op, &[d.dtype(), other.dtype()])?;
    let g = conv_geometry(op, x, w, spec)?;
    check_shape(op, "the sensitivity", d.shape(), &g.output_shape())?;
    alloc::check_size(shape, dtype)?;
    let shape = shape.to_vec();
    Ok(match wrt {
        Wrt::Input => float_kernel!(shape; d, other => conv_backprop_input(d, other, &g)),
        Wrt::Weight => float_kernel!(shape; d, other => conv_backprop_filter(d, other, &g)),
    })
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::{DType, Padding2d};

    /// The 4-D index of the element at flat index `at` of an array of shape `(_, d1, d2, d3)`.
    fn unravel(at: usize, [d1, d2, d3]: [usize; 3]) -> [usize; 4] {
        [
            at / (d1 * d2 * d3),
            at / (d2 * d3) % d1,
            at / d3 % d2,
            at % d3,
        ]
    }

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
                let [b, oc, y, xx] = unravel(at, [o, oh, ow]);
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
                let [oc, ci, i, j] = unravel(at, [c, kh, kw]);
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
        let plain = Conv2dSpec::default();
        let strided = Conv2dSpec {
            stride: [1, 2],
            ..plain
        };
        let dilated = Conv2dSpec {
            dilation: [2, 1],
            ..plain
        };
        let grouped = Conv2dSpec { groups: 2, ..plain };
        let padded = Conv2dSpec {
            padding: Padding2d::Explicit {
                h: [0, 1],
                w: [0, 0],
            },
            ..plain
        };
        let avx512 = crate::avx512::available();
        // (input shape, weight shape, spec, whether the direct kernels take it, what it shows)
        let rows = [
            ([1, 1, 8, 8], [1, 1, 3, 8], plain, false, "8 wide"),
            ([1, 1, 8, 8], [33, 1, 3, 3], plain, false, "33 channels"),
            ([1, 64, 8, 8], [4, 64, 3, 3], plain, false, "576 taps"),
            (
                [1, 1, 258, 258],
                [1, 1, 2, 2],
                plain,
                false,
                "257² positions",
            ),
            (
                [1, 1, 257, 257],
                [1, 1, 2, 2],
                plain,
                avx512,
                "256² positions",
            ),
            ([1, 1, 8, 8], [2, 1, 3, 3], strided, false, "strided"),
            ([1, 1, 8, 8], [2, 1, 3, 3], dilated, false, "dilated"),
            ([1, 2, 8, 8], [2, 1, 3, 3], grouped, false, "grouped"),
            ([1, 1, 8, 8], [2, 1, 3, 3], padded, false, "padded"),
            ([1, 1, 8, 8], [2, 1, 3, 3], plain, avx512, "plain"),
        ];
        for (x, w, spec, direct, what) in rows {
            let g = conv_geometry("conv2d", &x, &w, &spec).unwrap();
            assert_eq!(direct_shape(&g).is_some(), direct, "{what}");
        }
    }
}

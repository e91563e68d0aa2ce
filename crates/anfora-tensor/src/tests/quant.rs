//! The 8-bit kernels against plain integer arithmetic: quantize/dequantize round trips, the
//! product on random shapes (ragged rows, depths and columns) with zero points, the extremes
//! of both operands, and requantization's rounding and saturation.

use crate::quant::{
    MAX_DEPTH, PackedWeights, dequantize_u8, matmul_u8i8, matmul_u8i8_portable, quantize_u8,
    requantize_u8,
};

/// A small deterministic generator (xorshift), so that failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `Σ_p (a[i, p] − zero) · w[p, j]` in i64.
fn reference(a: &[u8], lda: usize, m: usize, zero: u8, w: &[i8], k: usize, n: usize) -> Vec<i32> {
    let mut c = vec![0i32; m * n];
    for i in 0..m {
        for j in 0..n {
            let s: i64 = (0..k)
                .map(|p| (i64::from(a[i * lda + p]) - i64::from(zero)) * i64::from(w[p * n + j]))
                .sum();
            c[i * n + j] = i32::try_from(s).unwrap();
        }
    }
    c
}

#[test]
fn products_on_random_ragged_shapes_equal_integer_arithmetic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..300 {
        let (m, k, n) = (1 + rng.below(9), 1 + rng.below(70), 1 + rng.below(40));
        let lda = k + rng.below(3);
        let zero = if case % 3 == 0 {
            0
        } else {
            rng.below(256) as u8
        };
        let a: Vec<u8> = (0..(m - 1) * lda + k)
            .map(|_| rng.below(256) as u8)
            .collect();
        let w: Vec<i8> = (0..k * n).map(|_| rng.below(256) as u8 as i8).collect();
        let packed = PackedWeights::pack(&w, k, n);
        let want = reference(&a, lda, m, zero, &w, k, n);
        let mut got = vec![0i32; m * n];
        matmul_u8i8(&a, lda, m, zero, &packed, &mut got);
        assert_eq!(got, want, "case {case}: {m}×{k}·{k}×{n}, zero {zero}");
        let mut portable = vec![0i32; m * n];
        matmul_u8i8_portable(&a, lda, m, zero, &packed, &mut portable);
        assert_eq!(portable, want, "case {case}, portable");
    }
}

/// Products and convolutions large enough to be split between threads (row blocks and groups
/// of images), on a pool of three threads, equal integer arithmetic.
#[test]
fn products_and_convolutions_split_between_threads_equal_integer_arithmetic() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    pool.install(|| {
        let mut rng = Rng(0x7eed);
        for (m, k, n) in [(301, 200, 90), (97, 1024, 33), (1000, 64, 20)] {
            let lda = k + 1;
            let a: Vec<u8> = (0..(m - 1) * lda + k)
                .map(|_| rng.below(256) as u8)
                .collect();
            let w: Vec<i8> = (0..k * n).map(|_| rng.below(256) as u8 as i8).collect();
            let packed = PackedWeights::pack(&w, k, n);
            let mut got = vec![0i32; m * n];
            matmul_u8i8(&a, lda, m, 7, &packed, &mut got);
            assert_eq!(got, reference(&a, lda, m, 7, &w, k, n), "{m}×{k}·{k}×{n}");
        }
        let case = ConvCase {
            dims: [37, 6, 12, 12],
            o: 24,
            kernel: [3, 3],
            pads: [1, 1, 1, 1],
            stride: [1, 1],
        };
        case.check(&mut rng, 1);
    });
}

#[test]
fn extreme_operands_do_not_overflow() {
    // 255 · -128 summed over the longest row is the most negative sum; with zero 0.
    let (m, k, n) = (2, 1030, 17);
    let a = vec![255u8; m * k];
    let w = vec![-128i8; k * n];
    let packed = PackedWeights::pack(&w, k, n);
    let mut c = vec![0i32; m * n];
    matmul_u8i8(&a, k, m, 0, &packed, &mut c);
    assert!(c.iter().all(|&s| s == -255 * 128 * k as i32));
    assert!(MAX_DEPTH * 255 * 128 <= i32::MAX as usize);
    // With the zero point the sums are of (255 − 255) · w.
    matmul_u8i8(&a, k, m, 255, &packed, &mut c);
    assert!(c.iter().all(|&s| s == 0));
}

#[test]
#[should_panic(expected = "overflow i32 sums")]
fn rows_too_long_for_i32_sums_are_refused() {
    let k = MAX_DEPTH + 1;
    let packed = PackedWeights::pack(&vec![0i8; k], k, 1);
    matmul_u8i8(&vec![0u8; k], k, 1, 0, &packed, &mut [0]);
}

#[test]
fn quantize_rounds_half_to_even_and_saturates() {
    let x = [0.0f32, 0.5, 1.5, 2.5, -0.5, 1000.0, -1000.0, 0.24, f32::NAN];
    let mut q = [0u8; 9];
    quantize_u8(&x, 1.0, 10, &mut q);
    // 0.5 → 0 and 2.5 → 2 (ties to even), then + 10; saturation at both ends; NaN → 0.
    assert_eq!(q, [10, 10, 12, 12, 10, 255, 0, 10, 0]);
    let mut back = [0f32; 9];
    dequantize_u8(&q, 0.5, 10, &mut back);
    assert_eq!(back, [0.0, 0.0, 1.0, 1.0, 0.0, 122.5, -5.0, 0.0, -5.0]);
}

#[test]
fn quantize_then_dequantize_is_within_half_a_step() {
    let (scale, zero) = (0.05f32, 128u8);
    let x: Vec<f32> = (0..200).map(|i| (i as f32 - 100.0) * 0.0317).collect();
    let mut q = vec![0u8; x.len()];
    quantize_u8(&x, scale, zero, &mut q);
    let mut back = vec![0f32; x.len()];
    dequantize_u8(&q, scale, zero, &mut back);
    for (a, b) in x.iter().zip(&back) {
        assert!((a - b).abs() <= scale / 2.0 + 1e-6, "{a} → {b}");
    }
}

#[test]
fn requantize_scales_per_column_with_rounding_and_saturation() {
    let sums = [10, -10, 3, 5, 1000, -1000];
    let mut out = [0u8; 6];
    requantize_u8(&sums, 3, &[0.25, 0.5, 0.5], 100, &mut out);
    // 2.5 → 2, -5, 1.5 → 2; 1.25 → 1, 500 → 255 (saturated), -500 → 0.
    assert_eq!(out, [102, 95, 102, 101, 255, 0]);
}

#[test]
fn weight_only_products_equal_the_portable_loop_bit_for_bit_and_the_dequantized_product() {
    use crate::quant::{WeightOnly, matmul_f32_i8, matmul_f32_i8_portable};
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for case in 0..200 {
        // Up to 60 rows: tiles of 24, 8 and 1 rows.
        let (m, k, n) = (1 + rng.below(60), 1 + rng.below(50), 1 + rng.below(40));
        let lda = k + rng.below(2);
        let a: Vec<f32> = (0..(m - 1) * lda + k)
            .map(|_| rng.below(2001) as f32 / 1000.0 - 1.0)
            .collect();
        let w: Vec<i8> = (0..k * n).map(|_| rng.below(256) as u8 as i8).collect();
        let scales: Vec<f32> = (0..n).map(|j| 0.001 + j as f32 * 0.0005).collect();
        let packed = WeightOnly::pack(&w, k, n, &scales);
        let mut got = vec![0f32; m * n];
        matmul_f32_i8(&a, lda, m, &packed, &mut got);
        let mut portable = vec![0f32; m * n];
        matmul_f32_i8_portable(&a, lda, m, &packed, &mut portable);
        assert_eq!(
            got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            portable.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            "case {case}: {m}×{k}·{k}×{n}"
        );
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k)
                    .map(|p| {
                        f64::from(a[i * lda + p]) * f64::from(w[p * n + j]) * f64::from(scales[j])
                    })
                    .sum();
                let tol = 1e-5 * (1.0 + want.abs()) * k as f64;
                assert!(
                    (f64::from(got[i * n + j]) - want).abs() <= tol,
                    "case {case} ({i}, {j})"
                );
            }
        }
    }
}

/// The requantized byte of an i64 sum, as the tensor operations compute it.
fn requantized(sum: i64, f: f32, zero: u8, relu: bool) -> u8 {
    let q = ((sum as i32) as f32 * f).round_ties_even() + f32::from(zero);
    let q = q.clamp(0.0, 255.0) as u8;
    if relu { q.max(zero) } else { q }
}

/// A convolution case: `n` images of `c`×`h`×`w`, `o` kernels of `kh`×`kw`, padding
/// (top, bottom, left, right) and strides.
struct ConvCase {
    dims: [usize; 4],
    o: usize,
    kernel: [usize; 2],
    pads: [usize; 4],
    stride: [usize; 2],
}

impl ConvCase {
    fn random(rng: &mut Rng, most: [usize; 4]) -> ConvCase {
        let [c_most, hw_most, o_most, k_most] = most;
        let (n, c) = (1 + rng.below(3), 1 + rng.below(c_most));
        let (h, w) = (3 + rng.below(hw_most - 2), 3 + rng.below(hw_most - 2));
        let kernel = [1 + rng.below(k_most.min(h)), 1 + rng.below(k_most.min(w))];
        ConvCase {
            dims: [n, c, h, w],
            o: 1 + rng.below(o_most),
            kernel,
            pads: [rng.below(3), rng.below(3), rng.below(3), rng.below(3)],
            stride: [1 + rng.below(3), 1 + rng.below(3)],
        }
    }

    fn out(&self) -> [usize; 2] {
        let ([_, _, h, w], [kh, kw], p, [sh, sw]) =
            (self.dims, self.kernel, self.pads, self.stride);
        [
            (h + p[0] + p[1] - kh) / sh + 1,
            (w + p[2] + p[3] - kw) / sw + 1,
        ]
    }

    /// The (N, O, OH, OW) sums `bias[j] + Σ (x − zero) · w` in i64, padding being `zero`.
    fn sums(&self, x: &[u8], zero: u8, wm: &[i8], bias: &[i32]) -> Vec<i64> {
        let ([n, c, h, w], o, [kh, kw]) = (self.dims, self.o, self.kernel);
        let ([oh, ow], p, s) = (self.out(), self.pads, self.stride);
        let mut out = Vec::with_capacity(n * o * oh * ow);
        for b in 0..n {
            for j in 0..o {
                for oy in 0..oh {
                    for ox in 0..ow {
                        let mut sum = i64::from(bias[j]);
                        for ch in 0..c {
                            for i in 0..kh {
                                for jj in 0..kw {
                                    let iy = (oy * s[0] + i) as i64 - p[0] as i64;
                                    let ix = (ox * s[1] + jj) as i64 - p[2] as i64;
                                    let inside =
                                        (0..h as i64).contains(&iy) && (0..w as i64).contains(&ix);
                                    let v = if inside {
                                        x[((b * c + ch) * h + iy as usize) * w + ix as usize]
                                    } else {
                                        zero
                                    };
                                    let wv = wm[((ch * kh + i) * kw + jj) * o + j];
                                    sum += (i64::from(v) - i64::from(zero)) * i64::from(wv);
                                }
                            }
                        }
                        out.push(sum);
                    }
                }
            }
        }
        out
    }

    /// Runs the case on random operands and checks both outputs, requantized (with or
    /// without ReLU) and float32, against [`ConvCase::sums`], bit for bit.
    fn check(&self, rng: &mut Rng, case: usize) {
        use crate::{Conv2dSpec, DType, Padding2d, QuantOutput, QuantWeights, Tensor, U8Quant};
        let ([n, c, h, w], o, [kh, kw]) = (self.dims, self.o, self.kernel);
        let x: Vec<u8> = (0..n * c * h * w).map(|_| rng.next() as u8).collect();
        let k = c * kh * kw;
        let wm: Vec<i8> = (0..k * o).map(|_| rng.next() as i8).collect();
        let bias: Vec<i32> = (0..o).map(|_| (rng.next() % 2001) as i32 - 1000).collect();
        let scales: Vec<f32> = (0..o).map(|j| 0.001 + j as f32 * 1e-4).collect();
        let xq = U8Quant {
            scale: 0.02,
            zero: rng.next() as u8,
        };
        let out = U8Quant {
            scale: 0.5 + case as f32 * 0.1,
            zero: rng.next() as u8,
        };
        let relu = case.is_multiple_of(2);
        let spec = Conv2dSpec {
            stride: self.stride,
            padding: Padding2d::Explicit {
                h: [self.pads[0], self.pads[1]],
                w: [self.pads[2], self.pads[3]],
            },
            dilation: [1, 1],
            groups: 1,
        };
        let (tx, tw) = (
            Tensor::from_u8(x.clone(), &[n, c, h, w]).unwrap(),
            Tensor::from_i8(wm.clone(), &[k, o]).unwrap(),
        );
        let (ts, tb) = (
            Tensor::from_f32(scales.clone(), &[o]).unwrap(),
            Tensor::from_i32(bias.clone(), &[o]).unwrap(),
        );
        let layer = QuantWeights {
            w: &tw,
            scales: &ts,
            bias: Some(&tb),
        };
        let [oh, ow] = self.out();
        let sums = self.sums(&x, xq.zero, &wm, &bias);
        let at_channel = |at: usize| (at / (oh * ow)) % o;
        let output = QuantOutput::U8 { out, relu };
        let y = Tensor::quant_conv2d(&tx, xq, layer, [kh, kw], &spec, output).unwrap();
        assert_eq!((y.dtype(), y.shape()), (DType::U8, &[n, o, oh, ow][..]));
        for (at, (&got, &sum)) in y.as_u8_slice().unwrap().iter().zip(&sums).enumerate() {
            let f = xq.scale * scales[at_channel(at)] / out.scale;
            let want = requantized(sum, f, out.zero, relu);
            assert_eq!(got, want, "case {case} at {at}");
        }
        // The float32 form: the same sums, scaled.
        let yf = Tensor::quant_conv2d(&tx, xq, layer, [kh, kw], &spec, QuantOutput::F32).unwrap();
        assert_eq!((yf.dtype(), yf.shape()), (DType::F32, &[n, o, oh, ow][..]));
        for (at, (&got, &sum)) in yf.as_f32_slice().unwrap().iter().zip(&sums).enumerate() {
            let want = (sum as i32) as f32 * (xq.scale * scales[at_channel(at)] / 1.0);
            assert_eq!(got.to_bits(), want.to_bits(), "case {case} at {at}");
        }
    }
}

#[test]
fn quantized_convolutions_equal_integer_arithmetic() {
    let mut rng = Rng(0x5eed_cafe);
    for case in 0..40 {
        ConvCase::random(&mut rng, [4, 8, 20, 3]).check(&mut rng, case);
    }
}

/// The direct kernel's cases: kernel rows of more than one word (wider than 4), channel
/// counts past one, two and three tiles of 16 with tails of 8 and fewer, 16 pixels spread
/// over several rows, and strides whose windows do not fit 64 bytes (read by gathers).
#[test]
fn direct_convolutions_of_wide_kernels_many_channels_and_strides() {
    let mut rng = Rng(0xd1ec7);
    for case in 0..24 {
        ConvCase::random(&mut rng, [3, 18, 40, 6]).check(&mut rng, case);
    }
}

#[test]
fn quantized_operations_refuse_bad_operands() {
    use crate::{ErrorKind, QuantOutput, QuantWeights, Tensor, U8Quant};
    let a = Tensor::from_u8(vec![1; 6], &[2, 3]).unwrap();
    let w = Tensor::from_i8(vec![1; 8], &[4, 2]).unwrap();
    let s = Tensor::from_f32(vec![0.1; 2], &[2]).unwrap();
    let q = U8Quant {
        scale: 0.1,
        zero: 0,
    };
    let layer = QuantWeights {
        w: &w,
        scales: &s,
        bias: None,
    };
    let e = Tensor::quant_matmul(&a, q, layer, QuantOutput::F32).unwrap_err();
    assert_eq!(
        (e.kind, e.message.as_str()),
        (
            ErrorKind::Value,
            "matmul: a 2×3 input and a 4×2 weight do not match"
        )
    );
    let bad = U8Quant {
        scale: f32::NAN,
        zero: 0,
    };
    let e = Tensor::quant_matmul(&a, bad, layer, QuantOutput::F32).unwrap_err();
    assert_eq!(
        e.message,
        "the input's scale must be finite and positive, not NaN"
    );
    let f = Tensor::from_f32(vec![1.0; 6], &[2, 3]).unwrap();
    let e = Tensor::quant_matmul(&f, q, layer, QuantOutput::F32).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Type);
    let e = f.dequantize_u8(q).unwrap_err();
    assert_eq!(e.message, "dequantize takes uint8, not float32");
    let r = f
        .quantize_u8(U8Quant {
            scale: 0.5,
            zero: 3,
        })
        .unwrap();
    assert_eq!(r.as_u8_slice().unwrap(), &[5; 6]);
}

#[test]
fn vector_and_portable_rounding_agree_on_every_kind_of_value() {
    use crate::quant::requantize_u8_from;
    // Ties, values near the clamps, far outside the byte range, NaN and infinities; lengths
    // that leave a tail after the 16-wide vectors.
    let mut x: Vec<f32> = vec![0.5, 1.5, 2.5, -0.5, -1.5, 254.5, 255.5, 300.0, -300.0, 1e30];
    x.extend([
        -1e30,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        127.49999,
        3.5,
        -2.5,
    ]);
    let mut rng = Rng(7);
    x.extend((0..40).map(|_| (rng.next() % 100_000) as f32 / 97.0 - 500.0));
    for zero in [0u8, 3, 128, 255] {
        let mut got = vec![0u8; x.len()];
        quantize_u8(&x, 1.0, zero, &mut got);
        for (i, &v) in x.iter().enumerate() {
            let want = (v.round_ties_even() + f32::from(zero)).clamp(0.0, 255.0) as u8;
            assert_eq!(got[i], want, "quantize {v} zero {zero}");
        }
        let sums: Vec<i32> = (0..37).map(|i| (i * 7919 % 2001) - 1000).collect();
        let scale: Vec<f32> = (0..37).map(|j| 0.25 + j as f32 * 0.125).collect();
        for lo in [0u8, zero] {
            let mut q = vec![0u8; 37];
            let offset: Vec<i32> = (0..37).map(|j| j * 13 - 200).collect();
            requantize_u8_from(&sums, 37, &offset, &scale, zero, lo, &mut q);
            for j in 0..37 {
                let s = (sums[j] + offset[j]) as f32;
                let r = (s * scale[j]).round_ties_even() + f32::from(zero);
                assert_eq!(
                    q[j],
                    r.clamp(f32::from(lo), 255.0) as u8,
                    "sum {} lo {lo}",
                    sums[j]
                );
            }
        }
    }
}

#[test]
fn uint8_max_pooling_equals_float_pooling() {
    use crate::{DType, Pool2dSpec, Tensor};
    let mut rng = Rng(11);
    for case in 0..40 {
        let (n, c, h, w) = (
            1 + rng.below(2),
            1 + rng.below(3),
            2 + rng.below(7),
            2 + rng.below(7),
        );
        let k = [1 + rng.below(2.min(h)), 1 + rng.below(2.min(w))];
        let spec = if case % 4 == 0 {
            // 2×2 windows at stride 2 (a loop of their own when the sizes are even).
            Pool2dSpec {
                kernel: [2, 2],
                stride: [2, 2],
                padding: [0, 0],
            }
        } else {
            Pool2dSpec {
                kernel: k,
                stride: [1 + rng.below(2), 1 + rng.below(2)],
                padding: [rng.below(k[0] / 2 + 1), rng.below(k[1] / 2 + 1)],
            }
        };
        let v: Vec<u8> = (0..n * c * h * w).map(|_| rng.next() as u8).collect();
        let x = Tensor::from_u8(v, &[n, c, h, w]).unwrap();
        let got = Tensor::max_pool2d(&x, &spec).unwrap();
        let want = Tensor::max_pool2d(&x.cast(DType::F32), &spec).unwrap();
        assert_eq!(got.dtype(), DType::U8, "case {case}");
        assert_eq!(got.shape(), want.shape(), "case {case}");
        assert_eq!(
            got.cast(DType::F32).to_f64_vec(),
            want.to_f64_vec(),
            "case {case} {spec:?}"
        );
    }
    // 2×2 at stride 2 on rows of 2 to 64 bytes and many planes: the vector loop's 64-byte
    // blocks of whole row pairs, and the rows left after the last block.
    let spec = Pool2dSpec {
        kernel: [2, 2],
        stride: [2, 2],
        padding: [0, 0],
    };
    for (case, shape) in [
        [3, 5, 2, 2],
        [2, 7, 6, 4],
        [3, 5, 8, 8],
        [1, 3, 10, 8],
        [2, 3, 16, 16],
        [1, 3, 6, 32],
        [1, 2, 4, 64],
        [2, 3, 6, 6],
    ]
    .into_iter()
    .enumerate()
    {
        let v: Vec<u8> = (0..shape.iter().product())
            .map(|_| rng.next() as u8)
            .collect();
        let x = Tensor::from_u8(v, &shape).unwrap();
        let got = Tensor::max_pool2d(&x, &spec).unwrap();
        let want = Tensor::max_pool2d(&x.cast(DType::F32), &spec).unwrap();
        assert_eq!(
            got.cast(DType::F32).to_f64_vec(),
            want.to_f64_vec(),
            "2×2 case {case} {shape:?}"
        );
    }
}

#[test]
fn four_bit_weights_equal_the_same_values_as_eight_bit_ones() {
    use crate::quant::{WeightOnly, matmul_f32_i8, matmul_f32_i8_portable};
    use crate::{Tensor, tests::f32s};
    let mut rng = Rng(4);
    for case in 0..60 {
        let (m, k, n) = (1 + rng.below(20), 1 + rng.below(40), 1 + rng.below(50));
        let w: Vec<i8> = (0..k * n).map(|_| (rng.below(16) as i8) - 8).collect();
        let row = n.div_ceil(2);
        let mut pairs = vec![0u8; k * row];
        for p in 0..k {
            for j in 0..n {
                pairs[p * row + j / 2] |= ((w[p * n + j] as u8) & 15) << (4 * (j % 2));
            }
        }
        let scales: Vec<f32> = (0..n).map(|j| 0.01 * (1 + j % 7) as f32).collect();
        let a: Vec<f32> = (0..m * k)
            .map(|_| rng.below(2001) as f32 / 1000.0 - 1.0)
            .collect();
        let (four, eight) = (
            WeightOnly::pack_int4(&pairs, k, n, &scales),
            WeightOnly::pack(&w, k, n, &scales),
        );
        let mut got = vec![0.0; m * n];
        let mut portable = vec![0.0; m * n];
        let mut byte = vec![0.0; m * n];
        matmul_f32_i8(&a, k, m, &four, &mut got);
        matmul_f32_i8_portable(&a, k, m, &four, &mut portable);
        matmul_f32_i8(&a, k, m, &eight, &mut byte);
        assert_eq!(got, portable, "case {case}");
        assert_eq!(got, byte, "case {case}");
        // Through tensors: uint8 pairs and int8 values give the same product.
        let x = f32s(&a, &[m, k]);
        let s = Tensor::from_f32(scales.clone(), &[n]).unwrap();
        let t4 = Tensor::weight_only_matmul(&x, &Tensor::from_u8(pairs, &[k, row]).unwrap(), &s);
        let t8 = Tensor::weight_only_matmul(&x, &Tensor::from_i8(w, &[k, n]).unwrap(), &s);
        assert!(t4.unwrap().same_as(&t8.unwrap()), "case {case}");
    }
}

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
        let (m, k, n) = (1 + rng.below(11), 1 + rng.below(50), 1 + rng.below(40));
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

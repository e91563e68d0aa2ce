//! The counter-based generator: Philox's published known answers, the block-to-element
//! mapping, reproducibility, the distributions' moments and the argument errors.

use super::*;
use crate::random::{Generator, philox4x32_10};

#[test]
fn philox_gives_the_published_known_answers() {
    // Random123's kat_vectors for philox4x32 with 10 rounds: counter, key, result.
    let cases: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
        (
            [0; 4],
            [0; 2],
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8],
        ),
        (
            [u32::MAX; 4],
            [u32::MAX; 2],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];
    for (ctr, key, want) in cases {
        assert_eq!(
            philox4x32_10(ctr, key),
            want,
            "ctr {ctr:08x?} key {key:08x?}"
        );
    }
}

#[test]
fn uniform_float32_takes_the_top_24_bits_of_each_word() {
    let mut g = Generator::new(0x2999_31d0_a409_3822);
    let t = g.uniform(&[6], 0.0, 1.0, DType::F32).unwrap();
    let key = [0xa409_3822, 0x2999_31d0];
    let words: Vec<u32> = [0u32, 1]
        .iter()
        .flat_map(|&b| philox4x32_10([b, 0, 0, 0], key))
        .collect();
    let want: Vec<f32> = words[..6]
        .iter()
        .map(|&w| (w >> 8) as f32 / 16_777_216.0)
        .collect();
    assert_eq!(t.as_f32_slice().unwrap(), &want[..]);
    // Six float32 elements use two blocks.
    assert_eq!(g.counter(), 2);
}

#[test]
fn draws_are_reproducible_and_new_draws_differ() {
    let draw = |g: &mut Generator| g.normal(&[3, 5], 0.0, 1.0, DType::F64).unwrap();
    let mut a = Generator::new(7);
    let mut b = Generator::new(7);
    let (a1, a2) = (draw(&mut a), draw(&mut a));
    assert!(a1.same_as(&draw(&mut b)), "same seed, same first draw");
    assert!(a2.same_as(&draw(&mut b)), "same seed, same second draw");
    assert!(!a1.same_as(&a2), "the second draw gives new values");
    let mut c = Generator::new(8);
    assert!(!a1.same_as(&draw(&mut c)), "another seed, other values");
    // The counter is the whole state besides the seed.
    let mut d = Generator::new(7);
    d.set_counter(a.counter() - 8);
    assert!(a2.same_as(&draw(&mut d)));
}

#[test]
fn an_element_depends_only_on_the_seed_the_counter_and_its_index() {
    // A larger draw starts with the values of a smaller one, and the threaded fill of a large
    // draw (past the parallel threshold) equals element-by-element generation.
    for dtype in [DType::F32, DType::F64] {
        let big = Generator::new(3)
            .uniform(&[100_003], -2.0, 5.0, dtype)
            .unwrap();
        let small = Generator::new(3).uniform(&[11], -2.0, 5.0, dtype).unwrap();
        let big = big.try_cast(DType::F64).unwrap();
        let small = small.try_cast(DType::F64).unwrap();
        assert_eq!(
            &big.as_f64_slice().unwrap()[..11],
            small.as_f64_slice().unwrap()
        );
    }
    let big = Generator::new(5)
        .randint(&[70_001], -3, 1 << 40, DType::I64)
        .unwrap();
    let serial: Vec<i64> = (0..70_001u64)
        .map(|i| {
            let w = philox4x32_10([(i / 2) as u32, 0, 0, 0], [5, 0]);
            let (hi, lo) = if i % 2 == 0 {
                (w[0], w[1])
            } else {
                (w[2], w[3])
            };
            let x = (u64::from(hi) << 32) | u64::from(lo);
            -3 + ((u128::from(x) * u128::from((1u64 << 40) + 3)) >> 64) as i64
        })
        .collect();
    assert_eq!(big.as_i64_slice().unwrap(), &serial[..]);
}

fn moments(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var)
}

#[test]
fn uniform_samples_lie_in_the_range_with_the_right_moments() {
    let n = 200_000;
    for dtype in [DType::F32, DType::F64] {
        let t = Generator::new(11).uniform(&[n], -1.0, 3.0, dtype).unwrap();
        assert_eq!((t.shape(), t.dtype()), (&[n][..], dtype));
        let t = t.try_cast(DType::F64).unwrap();
        let v = t.as_f64_slice().unwrap();
        assert!(v.iter().all(|&x| (-1.0..3.0).contains(&x)));
        let (mean, var) = moments(v);
        // Standard errors: 4 / sqrt(12 n) = 0.0026 for the mean.
        assert!((mean - 1.0).abs() < 0.013, "{dtype:?} mean {mean}");
        assert!((var - 16.0 / 12.0).abs() < 0.02, "{dtype:?} variance {var}");
    }
    // A range so narrow that rounding would reach `high`: samples stay below it.
    let (low, high) = (1.0f64, 1.0f64.next_up());
    let t = Generator::new(1)
        .uniform(&[1000], low, high, DType::F64)
        .unwrap();
    assert!(t.as_f64_slice().unwrap().iter().all(|&x| x == low));
}

#[test]
fn normal_samples_have_the_right_moments() {
    let n = 200_000;
    for dtype in [DType::F32, DType::F64] {
        let t = Generator::new(12).normal(&[n], 2.0, 0.5, dtype).unwrap();
        let t = t.try_cast(DType::F64).unwrap();
        let v = t.as_f64_slice().unwrap();
        assert!(v.iter().all(|x| x.is_finite()));
        let (mean, var) = moments(v);
        let skew = v.iter().map(|x| ((x - mean) / 0.5).powi(3)).sum::<f64>() / n as f64;
        let kurt = v.iter().map(|x| ((x - mean) / 0.5).powi(4)).sum::<f64>() / n as f64;
        assert!((mean - 2.0).abs() < 0.006, "{dtype:?} mean {mean}");
        assert!((var - 0.25).abs() < 0.004, "{dtype:?} variance {var}");
        assert!(skew.abs() < 0.03, "{dtype:?} skewness {skew}");
        assert!((kurt - 3.0).abs() < 0.06, "{dtype:?} kurtosis {kurt}");
        // About 4.55 % of the samples lie beyond two standard deviations.
        let tail = v.iter().filter(|x| (*x - 2.0).abs() > 1.0).count() as f64 / n as f64;
        assert!((tail - 0.0455).abs() < 0.003, "{dtype:?} tail {tail}");
    }
    // A zero scale gives the mean.
    let t = Generator::new(1)
        .normal(&[4], 3.5, 0.0, DType::F32)
        .unwrap();
    assert_eq!(t.as_f32_slice().unwrap(), &[3.5; 4]);
}

#[test]
fn randint_covers_the_range_evenly() {
    let n = 120_000;
    let t = Generator::new(13).randint(&[n], -2, 4, DType::I32).unwrap();
    assert_eq!(t.dtype(), DType::I32);
    let mut counts = [0usize; 6];
    for &x in t.as_i32_slice().unwrap() {
        counts[(x + 2) as usize] += 1;
    }
    // Chi-square with 5 degrees of freedom: 20.5 is its 0.999 quantile.
    let expected = n as f64 / 6.0;
    let chi2: f64 = counts
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum();
    assert!(chi2 < 20.5, "counts {counts:?}, chi-square {chi2}");
    // The extreme ranges.
    let t = Generator::new(1)
        .randint(&[1000], i64::MIN, i64::MAX, DType::I64)
        .unwrap();
    let v = t.as_i64_slice().unwrap();
    assert!(v.iter().any(|&x| x < 0) && v.iter().any(|&x| x > 0));
    let t = Generator::new(1).randint(&[5], 9, 10, DType::I64).unwrap();
    assert_eq!(t.as_i64_slice().unwrap(), &[9; 5]);
    let t = Generator::new(1)
        .randint(
            &[100],
            i64::from(i32::MIN),
            i64::from(i32::MAX) + 1,
            DType::I32,
        )
        .unwrap();
    assert_eq!(t.dtype(), DType::I32);
}

#[test]
fn empty_and_scalar_shapes() {
    let mut g = Generator::new(1);
    let t = g.uniform(&[0, 3], 0.0, 1.0, DType::F32).unwrap();
    assert_eq!((t.shape(), t.numel()), (&[0, 3][..], 0));
    assert_eq!(g.counter(), 0, "an empty draw takes no block");
    let t = g.normal(&[], 0.0, 1.0, DType::F64).unwrap();
    assert_eq!((t.shape(), t.numel()), (&[][..], 1));
    assert_eq!(g.counter(), 1);
}

#[test]
fn bad_arguments_are_errors() {
    let mut g = Generator::new(1);
    let err = |r: crate::Result<Tensor>| {
        let e = r.unwrap_err();
        (e.kind, e.message)
    };
    assert_eq!(
        err(g.randint(&[2], 3, 3, DType::I64)),
        (ErrorKind::Value, "randint: low >= high".into())
    );
    assert_eq!(
        err(g.randint(&[2], 0, 1 << 33, DType::I32)),
        (
            ErrorKind::Value,
            "randint: high is out of bounds for int32".into()
        )
    );
    assert_eq!(
        err(g.randint(&[2], -(1 << 33), 0, DType::I32)),
        (
            ErrorKind::Value,
            "randint: low is out of bounds for int32".into()
        )
    );
    assert_eq!(
        err(g.randint(&[2], 0, 5, DType::F32)),
        (
            ErrorKind::Type,
            "randint: unsupported dtype float32 (int32 or int64)".into()
        )
    );
    assert_eq!(
        err(g.normal(&[2], 0.0, -1.0, DType::F32)),
        (ErrorKind::Value, "normal: scale < 0".into())
    );
    assert_eq!(
        err(g.normal(&[2], 0.0, 1.0, DType::I64)),
        (
            ErrorKind::Type,
            "normal: unsupported dtype int64 (float32 or float64)".into()
        )
    );
    assert_eq!(
        err(g.uniform(&[2], 0.0, f64::INFINITY, DType::F64)),
        (
            ErrorKind::Overflow,
            "uniform: the range [0, inf) exceeds the valid bounds".into()
        )
    );
    assert_eq!(
        err(g.uniform(&[2], -f64::MAX, f64::MAX, DType::F64)).0,
        ErrorKind::Overflow
    );
    // Sizes past memory are MemoryErrors, not aborts; a failed draw takes no blocks.
    assert_eq!(
        err(g.uniform(&[1 << 40, 1 << 20], 0.0, 1.0, DType::F32)).0,
        ErrorKind::Memory
    );
    assert_eq!(g.counter(), 0);
    // An exhausted counter is an error, not a wrap to reused values.
    g.set_counter(u64::MAX);
    assert_eq!(
        err(g.uniform(&[4], 0.0, 1.0, DType::F32)).0,
        ErrorKind::Overflow
    );
}

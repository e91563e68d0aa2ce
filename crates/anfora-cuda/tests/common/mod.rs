//! What the CUDA tests share: sample values with each dtype's edge cases, and how results
//! are compared with the CPU's.

#![allow(dead_code)]

use anfora_tensor::{DType, Tensor};

/// `n` values of `dtype`, the dtype's edge cases first (extremes, zeros of both signs, NaN,
/// infinities, shift counts around the bit width), then pseudo-random ones from `seed`.
pub fn values(dtype: DType, n: usize, seed: u64) -> Tensor {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let t = match dtype {
        DType::Bool => Tensor::from_bool((0..n).map(|_| next() & 1 == 1).collect(), &[n]),
        DType::I32 => {
            let edge = [0, 1, -1, i32::MAX, i32::MIN, 31, 32, 33, -32, 7, -7, 2];
            Tensor::from_i32(
                (0..n)
                    .map(|i| edge.get(i).copied().unwrap_or(next() as i32 % 1000))
                    .collect(),
                &[n],
            )
        }
        DType::I64 => {
            let edge = [0, 1, -1, i64::MAX, i64::MIN, 63, 64, 65, -64, 7, -7, 2];
            Tensor::from_i64(
                (0..n)
                    .map(|i| edge.get(i).copied().unwrap_or(next() as i64 % 100_000))
                    .collect(),
                &[n],
            )
        }
        _ => {
            let edge = [
                0.0,
                -0.0,
                1.0,
                -1.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e-30,
                88.0,
                -88.0,
                3.0e9,
                -3.0e9,
                1e20,
                0.5,
                -2.5,
                2.0,
            ];
            let v = (0..n)
                .map(|i| {
                    edge.get(i).copied().unwrap_or_else(|| {
                        ((next() >> 11) as f64 / (1u64 << 53) as f64) * 20.0 - 10.0
                    })
                })
                .collect();
            return Tensor::from_f64(v, &[n]).unwrap().try_cast(dtype).unwrap();
        }
    };
    t.unwrap()
}

/// `t` with each value that is not finite or whose magnitude reaches 11 replaced by `fill`,
/// in `t`'s dtype: inputs whose products and sums stay far from overflow.
pub fn moderate(t: &Tensor, fill: f64) -> Tensor {
    let v = t
        .to_f64_vec()
        .into_iter()
        .map(|x| {
            if x.is_finite() && x.abs() < 11.0 {
                x
            } else {
                fill
            }
        })
        .collect();
    Tensor::from_f64(v, t.shape())
        .unwrap()
        .try_cast(t.dtype())
        .unwrap()
}

/// Float results agree within 1e-5 relative (1e-6 absolute near zero) in float32, 1e-12 in
/// float64; NaN agrees with NaN.
pub fn close(a: f64, b: f64, dtype: DType) -> bool {
    let (rel, abs): (f64, f64) = if dtype == DType::F32 {
        (1e-5, 1e-6)
    } else {
        (1e-12, 1e-15)
    };
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= abs.max(rel * a.abs().max(b.abs()))
}

/// `got` has `expected`'s shape and dtype and its values: floats close, the rest exactly.
pub fn assert_same(what: &str, expected: &Tensor, got: &Tensor) {
    assert_eq!(expected.shape(), got.shape(), "{what}: shape");
    assert_eq!(expected.dtype(), got.dtype(), "{what}: dtype");
    if expected.dtype().is_float() {
        for (k, (a, b)) in expected
            .to_f64_vec()
            .iter()
            .zip(got.to_f64_vec())
            .enumerate()
        {
            assert!(
                close(*a, b, expected.dtype()),
                "{what}: element {k}: expected {a}, got {b}"
            );
        }
    } else {
        assert_eq!(expected.to_scalars(), got.to_scalars(), "{what}");
    }
}

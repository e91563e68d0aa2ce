//! Accuracy and special values of the vectorized elementary functions (`crate::math`).
//!
//! Errors are measured in ulps of the result's type against a reference computed in float64
//! (for float32) or against the platform's libm (for float64, whose own error is below one ulp
//! for these functions).

use std::mem::MaybeUninit;

use super::*;
use crate::math::MathFloat;

const FUNCS: [UnaryOp; 7] = [
    UnaryOp::Exp,
    UnaryOp::Log,
    UnaryOp::Tanh,
    UnaryOp::Sigmoid,
    UnaryOp::Sqrt,
    UnaryOp::Sin,
    UnaryOp::Cos,
];

fn run<T: MathFloat + Default>(op: UnaryOp, xs: &[T]) -> Vec<T> {
    let mut out = vec![MaybeUninit::uninit(); xs.len()];
    T::math_into(op, xs, &mut out);
    out.into_iter()
        // SAFETY: `math_into` writes every element.
        .map(|v| unsafe { v.assume_init() })
        .collect()
}

fn sigmoid_ref(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// A double-double number `hi + lo` (about 106 bits), for float64 references.
#[derive(Clone, Copy, Debug)]
struct Dd(f64, f64);

impl Dd {
    fn new(v: f64) -> Dd {
        Dd(v, 0.0)
    }
    fn add(self, o: Dd) -> Dd {
        let s = self.0 + o.0;
        let bb = s - self.0;
        let err = (self.0 - (s - bb)) + (o.0 - bb);
        quick(s, err + self.1 + o.1)
    }
    fn neg(self) -> Dd {
        Dd(-self.0, -self.1)
    }
    fn sub(self, o: Dd) -> Dd {
        self.add(o.neg())
    }
    fn mul(self, o: Dd) -> Dd {
        let p = self.0 * o.0;
        let err = self.0.mul_add(o.0, -p);
        quick(p, err + self.0 * o.1 + self.1 * o.0)
    }
    fn div(self, o: Dd) -> Dd {
        let q1 = self.0 / o.0;
        let r = self.sub(o.mul(Dd::new(q1)));
        let q2 = r.0 / o.0;
        let r = r.sub(o.mul(Dd::new(q2)));
        let q3 = r.0 / o.0;
        quick(q1, q2).add(Dd::new(q3))
    }
    fn scale(self, k: i32) -> Dd {
        let (s1, s2) = (2f64.powi(k / 2), 2f64.powi(k - k / 2));
        Dd(self.0 * s1 * s2, self.1 * s1 * s2)
    }
}

fn quick(a: f64, b: f64) -> Dd {
    let s = a + b;
    Dd(s, b - (s - a))
}

/// ln 2 to about 107 bits.
const LN2_DD: Dd = Dd(std::f64::consts::LN_2, 2.319_046_813_846_299_6e-17);

/// e^x in double-double for |x| < 700.
fn exp_dd(x: Dd) -> Dd {
    let n = (x.0 / std::f64::consts::LN_2).round();
    let r = x.sub(LN2_DD.mul(Dd::new(n))).scale(-10);
    // Taylor series of e^r, |r| < 2^-10.
    let mut term = Dd::new(1.0);
    let mut sum = Dd::new(1.0);
    for k in 1..14 {
        term = term.mul(r).div(Dd::new(f64::from(k)));
        sum = sum.add(term);
    }
    for _ in 0..10 {
        sum = sum.mul(sum);
    }
    // 2^n in two steps, so that subnormal and huge scales stay exact.
    let n = n as i32;
    sum.scale(n)
}

/// The float64 references (double-double, so errors of the functions are measured against
/// nearly exact values).
fn reference64(op: UnaryOp, x: f64) -> Dd {
    match op {
        UnaryOp::Exp if x.abs() < 700.0 => exp_dd(Dd::new(x)),
        UnaryOp::Log if x > 0.0 && x.is_finite() => {
            // x = m 2^k, then one Newton step on ln m from libm's value.
            let k = x.log2().floor() as i32;
            let m = Dd::new(x).scale(-k);
            let y0 = m.0.ln();
            let c = m.mul(exp_dd(Dd::new(-y0))).sub(Dd::new(1.0));
            Dd::new(y0).add(c).add(LN2_DD.mul(Dd::new(f64::from(k))))
        }
        UnaryOp::Tanh if x.abs() < 1e-9 => {
            let x = Dd::new(x);
            x.sub(x.mul(x).mul(x).div(Dd::new(3.0)))
        }
        UnaryOp::Tanh if x.abs() < 40.0 => {
            let e = exp_dd(Dd::new(-2.0 * x.abs()));
            let t = Dd::new(1.0).sub(e).div(Dd::new(1.0).add(e));
            if x < 0.0 { t.neg() } else { t }
        }
        UnaryOp::Sigmoid if x.abs() < 700.0 => {
            let e = exp_dd(Dd::new(-x.abs()));
            let num = if x >= 0.0 { Dd::new(1.0) } else { e };
            num.div(Dd::new(1.0).add(e))
        }
        _ => Dd::new(reference(op, x)),
    }
}

fn reference(op: UnaryOp, x: f64) -> f64 {
    match op {
        UnaryOp::Exp => x.exp(),
        UnaryOp::Log => x.ln(),
        UnaryOp::Tanh => x.tanh(),
        UnaryOp::Sigmoid => sigmoid_ref(x),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Sin => x.sin(),
        UnaryOp::Cos => x.cos(),
        _ => unreachable!(),
    }
}

/// The error of `got` in float32 ulps at the reference value `r`.
fn ulp_err32(got: f32, r: f64) -> f64 {
    if got.is_nan() || r.is_nan() {
        return if got.is_nan() && r.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if got.is_infinite() || (r as f32).is_infinite() {
        return if got == r as f32 { 0.0 } else { f64::INFINITY };
    }
    let e = if r == 0.0 {
        -126
    } else {
        (r.abs().log2().floor() as i32).max(-126)
    };
    let ulp = 2f64.powi(e - 23);
    (f64::from(got) - r).abs() / ulp
}

/// The error of `got` in float64 ulps at the reference value `r`.
fn ulp_err64(got: f64, r: Dd) -> f64 {
    let (r, r_lo) = (r.0, r.1);
    if got.is_nan() || r.is_nan() {
        return if got.is_nan() && r.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if got.is_infinite() || r.is_infinite() {
        return if got == r { 0.0 } else { f64::INFINITY };
    }
    let e = if r == 0.0 {
        -1022
    } else {
        (r.abs().log2().floor() as i32).max(-1022)
    };
    // An exact power of two (2^-1074 .. 2^1023) as a product of two normal factors.
    let ulp = 2f64.powi((e - 52) / 2) * 2f64.powi((e - 52) - (e - 52) / 2);
    ((got - r) - r_lo).abs() / ulp
}

/// A deterministic stream of 64-bit values (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Inputs: edge values, every float of some ranges' bit patterns, uniform samples of the
/// interesting ranges, and random bit patterns (all magnitudes, subnormals included).
fn inputs32() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::from_bits(0x007f_ffff),
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        88.72283,
        88.72284,
        89.0,
        -87.33655,
        -103.97208,
        -103.9721,
        -104.0,
        -110.0,
        9.0,
        -9.0,
        0.55,
        1e-20,
        -1e-20,
        1e6,
        1.1e6,
        -3e38,
    ];
    let mut rng = Rng(1);
    for _ in 0..200_000 {
        v.push(f32::from_bits(rng.next() as u32));
    }
    for (lo, hi) in [
        (-10.0, 10.0),
        (-1.0, 1.0),
        (-0.01, 0.01),
        (-110.0, 95.0),
        (0.0, 3.0),
        (-2000.0, 2000.0),
        (85.0, 89.0),
        (-105.0, -85.0),
    ] {
        for _ in 0..100_000 {
            v.push((lo + (hi - lo) * rng.unit()) as f32);
        }
    }
    v
}

fn inputs64() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::from_bits(0x8000_0000_0000_0001),
        f64::MAX,
        f64::MIN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        709.782712893384,
        709.7827128933841,
        710.0,
        -708.3964185322641,
        -745.1332191019411,
        -745.1332191019412,
        -746.0,
        -800.0,
        19.0,
        -19.0,
        1e-300,
        -1e-300,
    ];
    let mut rng = Rng(2);
    for _ in 0..200_000 {
        v.push(f64::from_bits(rng.next()));
    }
    for (lo, hi) in [
        (-10.0, 10.0),
        (-1.0, 1.0),
        (-0.01, 0.01),
        (-750.0, 712.0),
        (0.0, 3.0),
        (-2000.0, 2000.0),
        (700.0, 710.0),
        (-746.0, -700.0),
    ] {
        for _ in 0..100_000 {
            v.push(lo + (hi - lo) * rng.unit());
        }
    }
    v
}

/// The largest error of `op` over `xs`, and an input that reaches it.
fn max_err32(op: UnaryOp, xs: &[f32]) -> (f64, f32) {
    let ys = run(op, xs);
    xs.iter()
        .zip(&ys)
        .map(|(&x, &y)| (ulp_err32(y, reference(op, f64::from(x))), x))
        .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a })
}

fn max_err64(op: UnaryOp, xs: &[f64]) -> (f64, f64) {
    let ys = run(op, xs);
    xs.iter()
        .zip(&ys)
        .map(|(&x, &y)| (ulp_err64(y, reference64(op, x)), x))
        .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a })
}

#[test]
fn float32_functions_within_two_ulp() {
    let xs = inputs32();
    let mut failed = Vec::new();
    for op in FUNCS {
        let (err, at) = max_err32(op, &xs);
        println!(
            "float32 {op:?}: max {err:.3} ulp at {at:e} ({:#x})",
            at.to_bits()
        );
        let bound = if op == UnaryOp::Sqrt { 0.5 } else { 2.0 };
        if err > bound {
            failed.push(op);
        }
    }
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
fn float64_functions_within_two_ulp() {
    let xs = inputs64();
    let mut failed = Vec::new();
    for op in FUNCS {
        let (err, at) = max_err64(op, &xs);
        println!(
            "float64 {op:?}: max {err:.3} ulp at {at:e} ({:#x})",
            at.to_bits()
        );
        // sqrt is exact; sin and cos are libm's (within one ulp).
        let bound = match op {
            UnaryOp::Sqrt => 0.5,
            UnaryOp::Sin | UnaryOp::Cos => 1.0,
            _ => 2.0,
        };
        if err > bound {
            failed.push(op);
        }
    }
    assert!(failed.is_empty(), "{failed:?}");
}

/// Every float32 input (run with `--release --ignored`; prints the largest errors).
#[test]
#[ignore]
fn float32_functions_exhaustive() {
    use rayon::prelude::*;
    for op in FUNCS {
        let (err, at) = (0u32..=0xffff)
            .into_par_iter()
            .map(|hi| {
                let xs: Vec<f32> = (0..=0xffffu32)
                    .map(|lo| f32::from_bits(hi << 16 | lo))
                    .collect();
                max_err32(op, &xs)
            })
            .reduce(|| (0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        println!("{op:?}: max {err:.3} ulp at {at:e} ({:#x})", at.to_bits());
        assert!(err <= 2.0);
    }
}

#[test]
fn special_values() {
    let inf = f32::INFINITY;
    let cases32: &[(UnaryOp, f32, f32)] = &[
        (UnaryOp::Exp, inf, inf),
        (UnaryOp::Exp, -inf, 0.0),
        (UnaryOp::Exp, 0.0, 1.0),
        (UnaryOp::Exp, -0.0, 1.0),
        (UnaryOp::Exp, 88.72284, inf),
        (UnaryOp::Exp, 1000.0, inf),
        (UnaryOp::Exp, -1000.0, 0.0),
        // The smallest subnormal, rounded from e^-103.28.
        (UnaryOp::Exp, -103.28, f32::from_bits(1)),
        (UnaryOp::Log, 0.0, -inf),
        (UnaryOp::Log, -0.0, -inf),
        (UnaryOp::Log, 1.0, 0.0),
        (UnaryOp::Log, inf, inf),
        (UnaryOp::Tanh, 0.0, 0.0),
        (UnaryOp::Tanh, -0.0, -0.0),
        (UnaryOp::Tanh, 20.0, 1.0),
        (UnaryOp::Tanh, -20.0, -1.0),
        (UnaryOp::Tanh, inf, 1.0),
        (UnaryOp::Tanh, -inf, -1.0),
        (UnaryOp::Tanh, 1e-30, 1e-30),
        (UnaryOp::Sigmoid, inf, 1.0),
        (UnaryOp::Sigmoid, -inf, 0.0),
        (UnaryOp::Sigmoid, 0.0, 0.5),
        (UnaryOp::Sigmoid, -0.0, 0.5),
        (UnaryOp::Sigmoid, 100.0, 1.0),
        (UnaryOp::Sigmoid, -200.0, 0.0),
        (UnaryOp::Sqrt, -0.0, -0.0),
        (UnaryOp::Sqrt, inf, inf),
        (UnaryOp::Sin, -0.0, -0.0),
        (UnaryOp::Sin, 0.0, 0.0),
        (UnaryOp::Cos, 0.0, 1.0),
        (UnaryOp::Cos, -0.0, 1.0),
    ];
    for &(op, x, want) in cases32 {
        let got = run(op, &[x])[0];
        assert_eq!(got.to_bits(), want.to_bits(), "{op:?}({x:e}) = {got:e}");
    }
    for (op, x) in [
        (UnaryOp::Log, -1.0f32),
        (UnaryOp::Log, -inf),
        (UnaryOp::Log, f32::NAN),
        (UnaryOp::Exp, f32::NAN),
        (UnaryOp::Tanh, f32::NAN),
        (UnaryOp::Sigmoid, f32::NAN),
        (UnaryOp::Sin, inf),
        (UnaryOp::Cos, -inf),
        (UnaryOp::Sqrt, -1.0),
    ] {
        assert!(run(op, &[x])[0].is_nan(), "{op:?}({x})");
    }
    let inf = f64::INFINITY;
    let cases64: &[(UnaryOp, f64, f64)] = &[
        (UnaryOp::Exp, inf, inf),
        (UnaryOp::Exp, -inf, 0.0),
        (UnaryOp::Exp, 0.0, 1.0),
        (UnaryOp::Exp, 709.79, inf),
        (UnaryOp::Exp, -745.2, 0.0),
        (UnaryOp::Exp, -745.1, f64::from_bits(1)),
        (UnaryOp::Log, 0.0, -inf),
        (UnaryOp::Log, -0.0, -inf),
        (UnaryOp::Log, 1.0, 0.0),
        (UnaryOp::Log, inf, inf),
        (UnaryOp::Log, f64::from_bits(1), -744.4400719213812),
        (UnaryOp::Tanh, -0.0, -0.0),
        (UnaryOp::Tanh, 0.0, 0.0),
        (UnaryOp::Tanh, 40.0, 1.0),
        (UnaryOp::Tanh, -inf, -1.0),
        (UnaryOp::Sigmoid, inf, 1.0),
        (UnaryOp::Sigmoid, -inf, 0.0),
        (UnaryOp::Sigmoid, 0.0, 0.5),
        (UnaryOp::Sigmoid, 800.0, 1.0),
        (UnaryOp::Sigmoid, -800.0, 0.0),
    ];
    for &(op, x, want) in cases64 {
        let got = run(op, &[x])[0];
        assert_eq!(got.to_bits(), want.to_bits(), "{op:?}({x:e}) = {got:e}");
    }
    for (op, x) in [
        (UnaryOp::Log, -1.0f64),
        (UnaryOp::Log, f64::NAN),
        (UnaryOp::Exp, f64::NAN),
        (UnaryOp::Tanh, f64::NAN),
        (UnaryOp::Sigmoid, f64::NAN),
    ] {
        assert!(run(op, &[x])[0].is_nan(), "{op:?}({x})");
    }
}

/// Slices of every length and alignment give each element the same bits as a one-element call
/// (the vector body, masked tails and scalar remainders agree).
#[test]
fn position_does_not_change_results() {
    let xs: Vec<f32> = inputs32().into_iter().take(1000).collect();
    for op in FUNCS {
        let whole = run(op, &xs);
        for start in [0, 1, 3, 7] {
            for len in [0, 1, 5, 15, 16, 17, 63, 100] {
                let part = run(op, &xs[start..start + len]);
                for (i, y) in part.iter().enumerate() {
                    assert!(y.to_bits() == whole[start + i].to_bits() || y.is_nan());
                }
            }
        }
    }
}

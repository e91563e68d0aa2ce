//! Elementary functions of float32 and float64, written to vectorize.
//!
//! Each function is one branch-free scalar routine of IEEE operations (fused multiply-adds
//! included) and bit manipulation; [`MathFloat::math_into`] runs it over a slice through
//! [`map1_into`], which compiles the loop for AVX-512, AVX2+FMA or the baseline at run time. The
//! result of an element never depends on where it sits or on the instruction set, and the unfused
//! unary ops and the fused kernels both call `math_into`, so they agree bitwise.
//!
//! Accuracy (measured against the correctly rounded result, see the tests): `exp`, `log`,
//! `tanh` and `sigmoid` within 2 ulp — the float32 versions over every float32 input — and
//! `sqrt` exact (the hardware's correctly rounded square root). float32 `sin`/`cos` compute in
//! float64 after a Cody–Waite reduction, with libm's float64 `sin`/`cos` for |x| > 1e6; float64
//! `sin`/`cos` are libm's, element by element.
//!
//! Polynomial coefficients are minimax fits (Remez exchange in 50-digit arithmetic, or a linear
//! program over a dense grid for the reciprocal seeds) made for this file; `log` of float64
//! follows fdlibm's `log` (Sun Microsystems, freely redistributable), with its constants.

use std::mem::MaybeUninit;

use crate::UnaryOp;
use crate::loops::map1_into;

// ----- shared by float32 and float64 ------------------------------------------------------------

/// What the routines written once for float32 and float64 need of the type: the constants of
/// the reduction by ln 2, and powers of two made in the exponent field.
trait Real:
    Copy
    + PartialOrd
    + std::ops::Neg<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
{
    /// The signed integer of the type's width.
    type Int;
    /// 1.5 · 2^(mantissa bits): adding it rounds a number of smaller magnitude to an integer,
    /// which then sits in the low bits.
    const MAGIC: Self;
    const LOG2E: Self;
    /// ln 2 = LN2_HI + LN2_LO, with LN2_HI short enough that `n * LN2_HI` is exact.
    const LN2_HI: Self;
    const LN2_LO: Self;
    const ZERO: Self;
    const INFINITY: Self;
    const NEG_INFINITY: Self;
    const NAN: Self;
    fn mul_add(self, a: Self, b: Self) -> Self;
    fn is_nan(self) -> bool;
    fn abs(self) -> Self;
    /// `n` from `t = MAGIC + n`: the difference of their bits.
    fn magic_int(t: Self) -> Self::Int;
    /// 2^n for `n` in the exponent range of normal numbers.
    fn pow2(n: Self::Int) -> Self;
    /// `x · 2^n` in two factors, so that 2^n is representable on the way to a subnormal or
    /// infinite result, which then rounds once.
    fn scale(x: Self, n: Self::Int) -> Self;
}

/// [`Real`] for `$t`: `$int` and `$uint` its integers of the same width, `$bias` its exponent
/// bias, `$mantissa` its mantissa bits, then `MAGIC`, `LOG2E`, `LN2_HI` and `LN2_LO`.
macro_rules! impl_real {
    (
        $t:ident, $int:ty, $uint:ty, $bias:literal, $mantissa:literal,
        [$magic:expr, $log2e:expr, $ln2_hi:expr, $ln2_lo:expr]
    ) => {
        impl Real for $t {
            type Int = $int;
            const MAGIC: Self = $magic;
            const LOG2E: Self = $log2e;
            const LN2_HI: Self = $ln2_hi;
            const LN2_LO: Self = $ln2_lo;
            const ZERO: Self = 0.0;
            const INFINITY: Self = $t::INFINITY;
            const NEG_INFINITY: Self = $t::NEG_INFINITY;
            const NAN: Self = $t::NAN;
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                $t::mul_add(self, a, b)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                $t::abs(self)
            }
            #[inline(always)]
            fn magic_int(t: Self) -> $int {
                (t.to_bits() as $int).wrapping_sub(Self::MAGIC.to_bits() as $int)
            }
            #[inline(always)]
            fn pow2(n: $int) -> Self {
                $t::from_bits((n.wrapping_add($bias) as $uint) << $mantissa)
            }
            #[inline(always)]
            fn scale(x: Self, n: $int) -> Self {
                let n1 = n >> 1;
                x * Self::pow2(n1) * Self::pow2(n.wrapping_sub(n1))
            }
        }
    };
}
impl_real! { f32, i32, u32, 127, 23, [MAGIC32, LOG2E32, LN2_HI32, LN2_LO32] }
impl_real! { f64, i64, u64, 1023, 52, [MAGIC64, LOG2E64, LN2_HI64, LN2_LO64] }

/// x = n ln2 + r with n = round(x / ln2) and |r| <= ln(2)/2 (plus a little), for |x| below a
/// quarter of `MAGIC` (2^21 for float32): `r`, and `t = MAGIC + n`, which holds `n` in its low
/// bits.
#[inline(always)]
fn reduce_ln2_magic<F: Real>(x: F) -> (F, F) {
    let t = x.mul_add(F::LOG2E, F::MAGIC);
    let n = t - F::MAGIC;
    // Exact: n * LN2_HI has few bits and cancels against x.
    let r = n.mul_add(-F::LN2_HI, x);
    (n.mul_add(-F::LN2_LO, r), t)
}

/// [`reduce_ln2_magic`] with `n` as an integer.
#[inline(always)]
fn reduce_ln2<F: Real>(x: F) -> (F, F::Int) {
    let (r, t) = reduce_ln2_magic(x);
    (r, F::magic_int(t))
}

/// `c[0] + c[1] t + ... + c[N-1] t^(N-1)` by Horner's scheme, one fused multiply-add a step
/// from `t·c[N-1] + c[N-2]`.
#[inline(always)]
fn horner<F: Real, const N: usize>(t: F, c: [F; N]) -> F {
    let mut p = t.mul_add(c[N - 1], c[N - 2]);
    for &k in c[..N - 2].iter().rev() {
        p = p.mul_add(t, k);
    }
    p
}

/// `|x|`, and `tanh |x|` for small `|x|` (below 0.55): `a + a·z·p(z)` with `z = a²` and `p` the
/// polynomial of coefficients `c`, a fit of `(tanh a - a) / a³`.
#[inline(always)]
fn tanh_near_zero<F: Real, const N: usize>(x: F, c: [F; N]) -> (F, F) {
    let a = x.abs();
    let z = a * a;
    (a, (a * z).mul_add(horner(z, c), a))
}

/// `x` clamped to `[lo, hi]`; the comparisons keep NaN.
#[inline(always)]
fn clamp<F: Real>(x: F, lo: F, hi: F) -> F {
    let x = if x < lo { lo } else { x };
    if x > hi { hi } else { x }
}

/// `log x` where it is special (-inf at zero, NaN below zero and at NaN, inf at inf), `res`
/// elsewhere.
#[inline(always)]
fn log_special<F: Real>(x: F, res: F) -> F {
    let res = if x == F::ZERO { F::NEG_INFINITY } else { res };
    let res = if x < F::ZERO { F::NAN } else { res };
    let res = if x == F::INFINITY { x } else { res };
    if x.is_nan() { x } else { res }
}

// ----- float32 -----------------------------------------------------------------------------------

/// 1.5 * 2^23: adding it rounds a float32 of magnitude below 2^22 to an integer.
pub(crate) const MAGIC32: f32 = 12_582_912.0;
pub(crate) const LOG2E32: f32 = std::f32::consts::LOG2_E;
/// ln 2 = LN2_HI32 + LN2_LO32, with LN2_HI32 short enough that `n * LN2_HI32` is exact.
pub(crate) const LN2_HI32: f32 = 0.693_359_4;
pub(crate) const LN2_LO32: f32 = -2.121_944_4e-4;
/// (e^r - 1 - r) / r^2 on |r| <= ln(2)/2: error 3.2e-9 relative to e^r.
const EXPM1_Q32: [f32; 5] = [
    0.5,
    0.166_665_17,
    0.041_666_202,
    0.008_369_088,
    0.001_395_083_6,
];
/// (log1p(f) - f + f^2/2) / f^3 on f in [sqrt(1/2) - 1, sqrt(2) - 1]: error 6.0e-9 relative to
/// log1p(f).
const LOG1P_R32: [f32; 8] = [
    0.333_333_16,
    -0.250_008_2,
    0.200_023_31,
    -0.166_242_76,
    0.141_800_12,
    -0.131_304_86,
    0.128_908_95,
    -0.078_662_59,
];

/// e^r on |r| <= ln(2)/2 as one polynomial, `1 + r + r^2 (q0 + q1 r + ...)` with the
/// coefficients of `EXPM1_Q32`, lowest degree first.
pub(crate) const EXP_P32: [f32; 7] = [
    1.0,
    1.0,
    EXPM1_Q32[0],
    EXPM1_Q32[1],
    EXPM1_Q32[2],
    EXPM1_Q32[3],
    EXPM1_Q32[4],
];

/// e^r for |r| <= ln(2)/2: `EXP_P32` by Horner's scheme.
#[inline(always)]
fn exp_poly32(r: f32) -> f32 {
    horner(r, EXP_P32)
}

/// e^x for x in [-104, 89] (and NaN).
#[inline(always)]
fn exp_core32(x: f32) -> f32 {
    let (r, n) = reduce_ln2(x);
    f32::scale(exp_poly32(r), n)
}

#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    // Beyond these bounds the result is 0 or inf anyway.
    exp_core32(clamp(x, -104.0, 89.0))
}

/// (tanh x - x) / x^3 in z = x^2, |x| <= 0.55: error 1.0e-9 relative to tanh x.
pub(crate) const TANH_P32: [f32; 5] = [
    -0.333_333_2,
    0.133_326,
    -0.053_853_553,
    0.021_076_394,
    -0.006_280_413,
];

/// Below this, tanh is its odd Taylor-like polynomial; above, tanh|x| = 1 - 2e/(1 + e) with
/// e = e^(-2|x|), where 2e/(1 + e) < 1/2 keeps the subtraction's error under half an ulp.
pub(crate) const TANH_SMALL: f32 = 0.55;

/// [`reduce_ln2`] of a float32 with `n << 23`, the exponent to add for 2^n, for `n`.
#[inline(always)]
fn reduce_ln2_bits32(x: f32) -> (f32, u32) {
    let (r, t) = reduce_ln2_magic(x);
    // t = 1.5 * 2^23 + n: shifting out all but the low bits leaves n << 23, modulo 2^32.
    (r, t.to_bits() << 23)
}

#[inline(always)]
pub(crate) fn tanh_f32(x: f32) -> f32 {
    let (a, small) = tanh_near_zero(x, TANH_P32);
    // e = e^(-2|x|) in [e^-80, e^-1.1]: normal, so its exponent is added to the bits directly
    // (e's error only reaches the result halved).
    let y = -2.0 * a;
    let (r, scale) = reduce_ln2_bits32(if y < -80.0 { -80.0 } else { y });
    let p = exp_poly32(r);
    let e = f32::from_bits(p.to_bits().wrapping_add(scale));
    let large = 1.0 - quotient_1p32(e + e, e, RECIP_1P_TANH32);
    // NaN takes the small branch, which keeps it (the large one may not).
    let t = if a >= TANH_SMALL { large } else { small };
    t.copysign(x)
}

#[inline(always)]
pub(crate) fn sigmoid_f32(x: f32) -> f32 {
    // 1 / (1 + e) for x >= 0 and e / (1 + e) below, with e = e^-|x| (which never overflows).
    let a = -x.abs();
    let (r, scale) = reduce_ln2_bits32(if a < -104.0 { -104.0 } else { a });
    // e = (e^r 2^(n+64)) 2^-64: the first product is normal (n >= -150), the second rounds
    // once, also to a subnormal.
    let p = exp_poly32(r);
    let s = f32::from_bits(scale.wrapping_add((127 + 64) << 23));
    // A product, not a sum of bits, so that NaN stays NaN.
    let e = p * s * TWO_M64_32;
    quotient_1p32(if x >= 0.0 { 1.0 } else { e }, e, RECIP_1P_SIGMOID32)
}

/// 1 / (1 + e) ≈ c0 + c1 e + ... on e in [0, 1/3]: relative error 5.4e-5 (evaluated in float32).
pub(crate) const RECIP_1P_TANH32: [f32; 4] =
    [0.999_946_8, -0.994_842_65, 0.918_301_64, -0.550_959_94];

/// 1 / (1 + e) ≈ c0 + c1 e + ... on e in [0, 1]: relative error 5.6e-5 (evaluated in float32),
/// fitted with the error at e = 1 held above 4e-7, so that the value there stays above 1/2 (which
/// `quotient_1p32`'s exact subtraction needs).
pub(crate) const RECIP_1P_SIGMOID32: [f32; 6] = [
    0.999_945_1,
    -0.996_059_66,
    0.951_510_25,
    -0.764_705_7,
    0.410_640_2,
    -0.101_329_96,
];

/// `n / (1 + e)` for `n` in [e, 1] and `e` in the range that `c` (a fit of 1 / (1 + e)) covers,
/// without a division: `q0 = n r` with `r = c(e)`, then one correction step on the exact residual
/// `n - q0 (1 + e)`. With r's relative error δ the result is within δ² (below 2^-28 here) of the
/// quotient before its one rounding, and 1 + e is never rounded.
#[inline(always)]
fn quotient_1p32<const N: usize>(n: f32, e: f32, c: [f32; N]) -> f32 {
    let r = horner(e, c);
    let q0 = n * r;
    // Exact: q0 is within [n/2, 2n] (Sterbenz).
    let t = n - q0;
    let res = (-q0).mul_add(e, t);
    res.mul_add(r, q0)
}

/// 2^-64.
const TWO_M64_32: f32 = 5.421_011e-20;

#[inline(always)]
pub(crate) fn log_f32(x: f32) -> f32 {
    // Subnormals are scaled into the normal range first.
    let tiny = x < f32::MIN_POSITIVE;
    let xs = if tiny { x * 8_388_608.0 } else { x };
    let kadj: i32 = if tiny { -23 } else { 0 };
    // x = 2^k m with m in [sqrt(1/2), sqrt(2)).
    let ix = (xs.to_bits() as i32).wrapping_add(0x3f80_0000 - 0x3f35_04f3);
    let k = (ix >> 23).wrapping_sub(127).wrapping_add(kadj);
    let m = f32::from_bits(((ix & 0x007f_ffff) + 0x3f35_04f3) as u32);
    let f = m - 1.0;
    let kf = k as f32;
    let p = horner(f, LOG1P_R32);
    // log x = k ln2 + f - f^2/2 + f^3 p
    let lo = (f * f).mul_add(f.mul_add(p, -0.5), kf * LN2_LO32);
    log_special(x, kf.mul_add(LN2_HI32, f + lo))
}

// ----- float64 -----------------------------------------------------------------------------------

/// 1.5 * 2^52.
const MAGIC64: f64 = 6_755_399_441_055_744.0;
const LOG2E64: f64 = std::f64::consts::LOG2_E;
/// fdlibm's split of ln 2: `n * LN2_HI64` is exact for |n| < 2^20.
const LN2_HI64: f64 = 0.693_147_180_369_123_8;
const LN2_LO64: f64 = 1.908_214_929_270_587_7e-10;
/// (e^r - 1 - r) / r^2 on |r| <= ln(2)/2: error 3.5e-18 relative to e^r.
const EXPM1_Q64: [f64; 10] = [
    0.500_000_000_000_001_3,
    0.166_666_666_666_667,
    0.041_666_666_666_512_02,
    0.008_333_333_333_306_615,
    0.001_388_888_894_799_457_4,
    0.000_198_412_699_186_702_18,
    2.480_148_885_224_724e-5,
    2.755_721_514_416_751e-6,
    2.763_169_336_159_478e-7,
    2.511_822_960_154_218_3e-8,
];

#[inline(always)]
fn expm1_poly64(r: f64) -> f64 {
    (r * r).mul_add(horner(r, EXPM1_Q64), r)
}

/// e^x for x in [-746, 710] (and NaN).
#[inline(always)]
fn exp_core64(x: f64) -> f64 {
    let (r, n) = reduce_ln2(x);
    f64::scale(expm1_poly64(r) + 1.0, n)
}

#[inline(always)]
pub(crate) fn exp_f64(x: f64) -> f64 {
    exp_core64(clamp(x, -746.0, 710.0))
}

/// (tanh x - x) / x^3 in z = x^2, |x| <= 0.55: error 5.6e-19 relative to tanh x.
const TANH_P64: [f64; 11] = [
    -0.333_333_333_333_333,
    0.133_333_333_333_267_72,
    -0.053_968_253_963_842_076,
    0.021_869_488_388_022_22,
    -0.008_863_232_634_502_952,
    0.003_592_092_342_086_82,
    -0.001_455_544_720_941_870_5,
    0.000_588_451_701_749_767_6,
    -0.000_233_398_742_971_801_03,
    8.333_948_412_057_346e-5,
    -1.950_798_937_457_207_4e-5,
];

#[inline(always)]
pub(crate) fn tanh_f64(x: f64) -> f64 {
    let (a, small) = tanh_near_zero(x, TANH_P64);
    let y = -2.0 * a;
    let (r, n) = reduce_ln2(if y < -200.0 { -200.0 } else { y });
    let e = (expm1_poly64(r) + 1.0) * f64::pow2(n);
    let large = 1.0 - (e + e) / (1.0 + e);
    let t = if a < 0.55 { small } else { large };
    t.copysign(x)
}

#[inline(always)]
pub(crate) fn sigmoid_f64(x: f64) -> f64 {
    let a = -x.abs();
    let e = exp_core64(if a < -746.0 { -746.0 } else { a });
    let d = 1.0 + e;
    let d_lo = (1.0 - d) + e;
    let pos = x >= 0.0;
    let q = (if pos { 1.0 } else { e }) / d;
    let inv = if pos { q } else { 1.0 - q };
    (-(q * inv)).mul_add(d_lo, q)
}

/// fdlibm's `log` coefficients: 2 atanh(s) = 2s + s R(s^2).
const LG: [f64; 7] = [
    0.666_666_666_666_673_5,
    0.399_999_999_994_094_2,
    0.285_714_287_436_623_9,
    0.222_221_984_321_497_84,
    0.181_835_721_616_180_5,
    0.153_138_376_992_093_73,
    0.147_981_986_051_165_86,
];

#[inline(always)]
pub(crate) fn log_f64(x: f64) -> f64 {
    let tiny = x < f64::MIN_POSITIVE;
    let xs = if tiny {
        x * 18_014_398_509_481_984.0
    } else {
        x
    }; // 2^54
    let kadj: i64 = if tiny { -54 } else { 0 };
    let ix = (xs.to_bits() as i64).wrapping_add(0x3ff0_0000_0000_0000 - 0x3fe6_a09e_667f_3bcd);
    let k = (ix >> 52).wrapping_sub(1023).wrapping_add(kadj);
    let m = f64::from_bits(((ix & 0x000f_ffff_ffff_ffff) + 0x3fe6_a09e_667f_3bcd) as u64);
    let f = m - 1.0;
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG[1] + w * (LG[3] + w * LG[5]));
    let t2 = z * (LG[0] + w * (LG[2] + w * (LG[4] + w * LG[6])));
    let r = t2 + t1;
    let dk = k as f64;
    log_special(
        x,
        dk * LN2_HI64 - ((hfsq - (s * (hfsq + r) + dk * LN2_LO64)) - f),
    )
}

// ----- sin and cos -------------------------------------------------------------------------------

const FRAC_2_PI: f64 = std::f64::consts::FRAC_2_PI;
/// pi/2 = PIO2_1 + PIO2_2 + PIO2_2T (fdlibm's split; the first two have 33 bits).
const PIO2_1: f64 = 1.570_796_326_734_125_6;
const PIO2_2: f64 = 6.077_100_506_303_966e-11;
const PIO2_2T: f64 = 2.022_266_248_795_950_6e-21;
/// (sin r - r) / r^3 in z = r^2, |r| <= pi/4: error 4.9e-12 relative to sin r.
const SIN_S: [f64; 4] = [
    -0.166_666_666_416_170_03,
    0.008_333_329_384_764_35,
    -0.000_198_393_344_687_935_82,
    2.718_307_950_012_520_5e-6,
];
/// (cos r - 1 + r^2/2) / r^4 in z = r^2, |r| <= pi/4: error 9.9e-14.
const COS_C: [f64; 4] = [
    0.041_666_666_622_810_7,
    -0.001_388_888_375_189_034_6,
    2.479_951_960_207_248e-5,
    -2.721_020_373_751_295e-7,
];
/// float32 arguments beyond this go to libm's float64 functions.
const TRIG_LIMIT32: f32 = 1.0e6;

/// (sin, cos) of a float32 argument, in float64, for |x| <= TRIG_LIMIT32.
#[inline(always)]
fn sincos32(x: f32) -> (f64, f64) {
    let x = f64::from(x);
    let t = x.mul_add(FRAC_2_PI, MAGIC64);
    let n = t - MAGIC64;
    let q = f64::magic_int(t);
    let r = n.mul_add(-PIO2_1, x);
    let r = n.mul_add(-PIO2_2, r);
    let r = n.mul_add(-PIO2_2T, r);
    let z = r * r;
    let sin_r = (r * z).mul_add(horner(z, SIN_S), r);
    let cos_r = (z * z).mul_add(horner(z, COS_C), z.mul_add(-0.5, 1.0));
    // Quadrant q: sin x = sin r, cos r, -sin r, -cos r.
    let (sin, cos) = if q & 1 == 0 {
        (sin_r, cos_r)
    } else {
        (cos_r, -sin_r)
    };
    if q & 2 == 0 { (sin, cos) } else { (-sin, -cos) }
}

#[inline(always)]
fn sin_core32(x: f32) -> f32 {
    let s = sincos32(x).0 as f32;
    // sin(-0.0) is -0.0.
    if x == 0.0 { x } else { s }
}

#[inline(always)]
fn cos_core32(x: f32) -> f32 {
    sincos32(x).1 as f32
}

/// Recomputes the elements whose argument `needs` a slow path with `slow`.
#[inline(always)]
fn fixup<T: Copy>(
    src: &[T],
    dst: &mut [MaybeUninit<T>],
    needs: impl Fn(T) -> bool,
    slow: impl Fn(T) -> T,
) {
    for (d, &x) in dst.iter_mut().zip(src) {
        if needs(x) {
            d.write(slow(x));
        }
    }
}

// ----- over slices -------------------------------------------------------------------------------

/// The float dtypes' elementary functions over slices.
pub(crate) trait MathFloat: Copy + Send + Sync {
    /// Writes `op(src[i])` into `dst[i]` for the float functions (`Exp`, `Log`, `Sqrt`, `Tanh`,
    /// `Sin`, `Cos`, `Sigmoid`, ...); `src` and `dst` have the same length.
    fn math_into(op: UnaryOp, src: &[Self], dst: &mut [MaybeUninit<Self>]);
}

/// [`MathFloat`] for `$t`, each op computed by the routine (element by element) or the slice
/// function (`*_into`) given for it.
macro_rules! impl_math_float {
    ($t:ident {
        exp: $exp:expr,
        log: $log:expr,
        tanh: $tanh:expr,
        sigmoid: $sigmoid:expr,
        sin_into: $sin_into:expr,
        cos_into: $cos_into:expr,
        erf: $erf:expr,
        gelu: $gelu:expr,
        gelu_tanh: $gelu_tanh:expr $(,)?
    }) => {
        impl MathFloat for $t {
            fn math_into(op: UnaryOp, src: &[$t], dst: &mut [MaybeUninit<$t>]) {
                match op {
                    UnaryOp::Exp => map1_into(src, dst, $exp),
                    UnaryOp::Log => map1_into(src, dst, $log),
                    UnaryOp::Sqrt => map1_into(src, dst, $t::sqrt),
                    UnaryOp::Tanh => map1_into(src, dst, $tanh),
                    UnaryOp::Sigmoid => map1_into(src, dst, $sigmoid),
                    UnaryOp::Sin => $sin_into(src, dst),
                    UnaryOp::Cos => $cos_into(src, dst),
                    UnaryOp::Log1p => map1_into(src, dst, $t::ln_1p),
                    UnaryOp::Expm1 => map1_into(src, dst, $t::exp_m1),
                    UnaryOp::Erf => map1_into(src, dst, $erf),
                    UnaryOp::Gelu => map1_into(src, dst, $gelu),
                    UnaryOp::GeluTanh => map1_into(src, dst, $gelu_tanh),
                    UnaryOp::Silu => map1_into(src, dst, |x: $t| x * $sigmoid(x)),
                    UnaryOp::Softplus => {
                        map1_into(src, dst, |x: $t| x.max(0.0) + $exp(-x.abs()).ln_1p())
                    }
                    UnaryOp::Rsqrt => map1_into(src, dst, |x: $t| 1.0 / x.sqrt()),
                    _ => unreachable!("{op:?} is not an elementary function"),
                }
            }
        }
    };
}

/// float32 `sin` or `cos` over a slice: `core` (in float64 after a Cody–Waite reduction), and
/// libm's float64 `slow` where |x| > TRIG_LIMIT32.
#[inline(always)]
fn trig32_into(
    src: &[f32],
    dst: &mut [MaybeUninit<f32>],
    core: impl Fn(f32) -> f32,
    slow: impl Fn(f64) -> f64,
) {
    map1_into(src, dst, core);
    fixup(
        src,
        dst,
        |x| x.abs() > TRIG_LIMIT32,
        |x| slow(f64::from(x)) as f32,
    );
}

impl_math_float!(f32 {
    exp: exp_f32,
    log: log_f32,
    tanh: tanh_f32,
    sigmoid: sigmoid_f32,
    sin_into: |s, d| trig32_into(s, d, sin_core32, f64::sin),
    cos_into: |s, d| trig32_into(s, d, cos_core32, f64::cos),
    erf: libm::erff,
    // In float64, rounded once.
    gelu: |x: f32| gelu_f64(f64::from(x)) as f32,
    gelu_tanh: gelu_tanh_f32,
});

impl_math_float!(f64 {
    exp: exp_f64,
    log: log_f64,
    tanh: tanh_f64,
    sigmoid: sigmoid_f64,
    sin_into: |s, d| map1_into(s, d, f64::sin),
    cos_into: |s, d| map1_into(s, d, f64::cos),
    erf: libm::erf,
    gelu: gelu_f64,
    gelu_tanh: gelu_tanh_f64,
});

/// √(2/π) and the cubic coefficient of GELU's tanh approximation.
const GELU_C: f64 = 0.797_884_560_802_865_4;
const GELU_A: f64 = 0.044_715;

/// `x·Φ(x) = x/2·(1 + erf(x/√2))`.
fn gelu_f64(x: f64) -> f64 {
    0.5 * x * (1.0 + libm::erf(x / std::f64::consts::SQRT_2))
}

fn gelu_tanh_f32(x: f32) -> f32 {
    let (c, a) = (GELU_C as f32, GELU_A as f32);
    0.5 * x * (1.0 + tanh_f32(c * (x + a * x * x * x)))
}

fn gelu_tanh_f64(x: f64) -> f64 {
    0.5 * x * (1.0 + tanh_f64(GELU_C * (x + GELU_A * x * x * x)))
}

//! Elementwise kernels: broadcasting binary ops, unary ops, `where` and casts, their in-place
//! versions for uniquely owned buffers, and the chunk-level entry points of the fused kernels.
//!
//! The function of each op on each dtype is chosen in one place ([`BinaryFns`],
//! [`UnaryFns`]); the whole-tensor ops, the in-place ops and the fused kernels all run those
//! functions through the loops of [`crate::loops`], so they give the same bits.

use std::mem::MaybeUninit;

use crate::alloc;
use crate::element::{AnyOut, AnyVal, Element, Val, with_storage, with_type};
use crate::loops::{
    CHUNK, as_uninit, fill_vec, for_parts, map1_in_place, map1_into, map2_into, select_into,
};
use crate::math::MathFloat;
use crate::promote::{binary_types, promote_types, unary_result_dtype, weak_scalar_dtype};
use crate::shape::{BroadcastRead, broadcast_n, broadcast_strides, for_each_row};
use crate::{BinaryOp, DType, ErrorKind, Result, Scalar, Storage, Tensor, TensorError, UnaryOp};

/// The broadcast output shape of a ufunc, with numpy's iterator size check.
pub(crate) fn broadcast_out(shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let out = broadcast_n(shapes)?;
    alloc::checked_iter_size(&out)?;
    Ok(out)
}

/// The operand of a whole-tensor kernel over an output of `n` elements: the part of it at
/// output positions `start..start + len`, for operands read linearly or broadcast from one
/// element.
#[inline(always)]
fn linear<T: Copy>(v: &[T], n: usize, start: usize, len: usize) -> Val<'_, T> {
    if v.len() == n {
        Val::Slice(&v[start..start + len])
    } else {
        Val::Splat(v[0])
    }
}

/// Applies `f` to `a` and `b` broadcast to `out`, with fast paths for equal sizes and for a
/// single-element operand.
fn map2<A: Element, B: Element, O: Element>(
    a: &[A],
    a_shape: &[usize],
    b: &[B],
    b_shape: &[usize],
    out: &[usize],
    f: impl Fn(A, B) -> O + Copy + Send + Sync,
) -> Result<Vec<O>> {
    let (mut res, n) = alloc::try_vec_capped(out, alloc::cap())?;
    if n == 0 {
        return Ok(res);
    }
    // An operand with as many elements as the output is not broadcast, so it can be read linearly.
    let flat = |v: usize| v == n || v == 1;
    if flat(a.len()) && flat(b.len()) {
        let fill = |dst: &mut [MaybeUninit<O>]| {
            for_parts(dst, |start, part| {
                let len = part.len();
                map2_into(linear(a, n, start, len), linear(b, n, start, len), part, f);
            })
        };
        // SAFETY: the parts cover the output and `map2_into` writes every slot of its part.
        return Ok(unsafe { fill_vec(res, n, fill) });
    }
    let sa = broadcast_strides(a_shape, out);
    let sb = broadcast_strides(b_shape, out);
    for_each_row(out, [&sa, &sb], [0, 0], |[oa, ob], len, [ia, ib]| {
        let (oa, ob) = (oa as usize, ob as usize);
        match (ia, ib) {
            (1, 1) => res.extend(
                a[oa..oa + len]
                    .iter()
                    .zip(&b[ob..ob + len])
                    .map(|(&x, &y)| f(x, y)),
            ),
            (0, 1) => res.extend(b[ob..ob + len].iter().map(|&y| f(a[oa], y))),
            (1, 0) => res.extend(a[oa..oa + len].iter().map(|&x| f(x, b[ob]))),
            _ => res.extend((0..len).map(|j| {
                let x = a[(oa as isize + j as isize * ia) as usize];
                let y = b[(ob as isize + j as isize * ib) as usize];
                f(x, y)
            })),
        }
    });
    Ok(res)
}

/// Three-operand broadcasting map (for `where`).
fn map3<A: Element, B: Element, C: Element, O: Element>(
    (a, a_shape): (&[A], &[usize]),
    (b, b_shape): (&[B], &[usize]),
    (c, c_shape): (&[C], &[usize]),
    out: &[usize],
    f: impl Fn(A, B, C) -> O + Sync + Send,
) -> Result<Vec<O>> {
    let (mut res, n) = alloc::try_vec_capped(out, alloc::cap())?;
    if a.len() == n && b.len() == n && c.len() == n {
        let fill = |dst: &mut [MaybeUninit<O>]| {
            for_parts(dst, |start, part| {
                let end = start + part.len();
                for (i, d) in (start..end).zip(part.iter_mut()) {
                    d.write(f(a[i], b[i], c[i]));
                }
            })
        };
        // SAFETY: the parts cover the output and each part's loop writes all of its slots.
        return Ok(unsafe { fill_vec(res, n, fill) });
    }
    let sa = broadcast_strides(a_shape, out);
    let sb = broadcast_strides(b_shape, out);
    let sc = broadcast_strides(c_shape, out);
    for_each_row(out, [&sa, &sb, &sc], [0, 0, 0], |o, len, s| {
        res.extend((0..len as isize).map(|j| {
            f(
                a[(o[0] + j * s[0]) as usize],
                b[(o[1] + j * s[1]) as usize],
                c[(o[2] + j * s[2]) as usize],
            )
        }));
    });
    Ok(res)
}

/// Arithmetic shared by the integer and float dtypes, with numpy's semantics.
trait Arith: Element {
    const ZERO: Self;
    fn add(a: Self, b: Self) -> Self;
    fn sub(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
    fn floor_div(a: Self, b: Self) -> Self;
    fn rem(a: Self, b: Self) -> Self;
    fn pow(a: Self, b: Self) -> Self;
    fn max(a: Self, b: Self) -> Self;
    fn min(a: Self, b: Self) -> Self;
    fn neg(a: Self) -> Self;
    fn abs(a: Self) -> Self;
    /// numpy's `sign`: -1, 0 or 1 (NaN stays NaN).
    fn sign(a: Self) -> Self;
}

macro_rules! impl_int {
    ($t:ty) => {
        impl Arith for $t {
            const ZERO: Self = 0;
            fn add(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            fn sub(a: Self, b: Self) -> Self {
                a.wrapping_sub(b)
            }
            fn mul(a: Self, b: Self) -> Self {
                a.wrapping_mul(b)
            }
            // Python's rounding toward negative infinity; `b != 0` is checked beforehand.
            fn floor_div(a: Self, b: Self) -> Self {
                let q = a.wrapping_div(b);
                if a.wrapping_rem(b) != 0 && ((a < 0) != (b < 0)) {
                    q - 1
                } else {
                    q
                }
            }
            // The remainder takes the divisor's sign; `b != 0` is checked beforehand.
            fn rem(a: Self, b: Self) -> Self {
                let r = a.wrapping_rem(b);
                if r != 0 && ((r < 0) != (b < 0)) {
                    r + b
                } else {
                    r
                }
            }
            // Wrapping square-and-multiply; `b >= 0` is checked beforehand.
            fn pow(a: Self, b: Self) -> Self {
                let (mut base, mut e, mut acc) = (a, b as u64, 1 as $t);
                while e > 0 {
                    if e & 1 == 1 {
                        acc = acc.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                acc
            }
            fn max(a: Self, b: Self) -> Self {
                Ord::max(a, b)
            }
            fn min(a: Self, b: Self) -> Self {
                Ord::min(a, b)
            }
            fn neg(a: Self) -> Self {
                a.wrapping_neg()
            }
            fn abs(a: Self) -> Self {
                a.wrapping_abs()
            }
            #[inline]
            fn sign(a: Self) -> Self {
                a.signum()
            }
        }

        impl Bits for $t {
            // numpy defines shifts by >= the bit width (or negative amounts) as 0, or -1 for
            // right shifts of negative numbers, instead of leaving them undefined.
            fn shl(a: Self, b: Self) -> Self {
                if (b as u64) < <$t>::BITS as u64 {
                    a << b
                } else {
                    0
                }
            }
            fn shr(a: Self, b: Self) -> Self {
                if (b as u64) < <$t>::BITS as u64 {
                    a >> b
                } else if a < 0 {
                    -1
                } else {
                    0
                }
            }
        }
    };
}
impl_int!(i32);
impl_int!(i64);

/// Bitwise ops of the integer dtypes: Rust's operators, and shifts with numpy's semantics.
trait Bits:
    Arith
    + std::ops::BitAnd<Output = Self>
    + std::ops::BitOr<Output = Self>
    + std::ops::BitXor<Output = Self>
    + std::ops::Not<Output = Self>
{
    fn shl(a: Self, b: Self) -> Self;
    fn shr(a: Self, b: Self) -> Self;
}

/// Float-only operations (the elementary functions are in [`crate::math`]).
trait Float: Arith + MathFloat {
    fn div(a: Self, b: Self) -> Self;
}

macro_rules! impl_float {
    ($t:ty) => {
        impl Arith for $t {
            const ZERO: Self = 0.0;
            fn add(a: Self, b: Self) -> Self {
                a + b
            }
            fn sub(a: Self, b: Self) -> Self {
                a - b
            }
            fn mul(a: Self, b: Self) -> Self {
                a * b
            }
            fn floor_div(a: Self, b: Self) -> Self {
                if b == 0.0 { a / b } else { divmod(a, b).0 }
            }
            fn rem(a: Self, b: Self) -> Self {
                if b == 0.0 { a % b } else { divmod(a, b).1 }
            }
            fn pow(a: Self, b: Self) -> Self {
                a.powf(b)
            }
            // NaN propagates; on ties (`0.0` vs `-0.0`) the second operand wins, as in numpy.
            fn max(a: Self, b: Self) -> Self {
                if a > b || a.is_nan() { a } else { b }
            }
            fn min(a: Self, b: Self) -> Self {
                if a < b || a.is_nan() { a } else { b }
            }
            fn neg(a: Self) -> Self {
                -a
            }
            fn abs(a: Self) -> Self {
                a.abs()
            }
            // Both zeros give +0.
            #[inline]
            fn sign(a: Self) -> Self {
                if a > 0.0 {
                    1.0
                } else if a < 0.0 {
                    -1.0
                } else if a == 0.0 {
                    0.0
                } else {
                    a
                }
            }
        }

        impl Float for $t {
            fn div(a: Self, b: Self) -> Self {
                a / b
            }
        }

        /// numpy's `npy_divmod` (CPython's float divmod): floor division and a remainder with
        /// the divisor's sign, from `fmod` so that `a == q * b + r` holds as closely as floats
        /// allow. `b != 0`.
        pub(super) fn divmod(a: $t, b: $t) -> ($t, $t) {
            let mut m = a % b;
            let mut div = (a - m) / b;
            if m != 0.0 {
                if (b < 0.0) != (m < 0.0) {
                    m += b;
                    div -= 1.0;
                }
            } else {
                m = (0.0 as $t).copysign(b);
            }
            let q = if div != 0.0 {
                let f = div.floor();
                if div - f > 0.5 { f + 1.0 } else { f }
            } else {
                (0.0 as $t).copysign(a / b)
            };
            (q, m)
        }
    };
}

mod f32_impl {
    use super::*;
    impl_float!(f32);
}
mod f64_impl {
    use super::*;
    impl_float!(f64);
}

/// Floor division and remainder of two floats, as numpy's `divmod` and Python's float `//`
/// and `%` compute them: `(a // b, a % b)`. `b != 0`.
pub fn float_divmod(a: f64, b: f64) -> (f64, f64) {
    f64_impl::divmod(a, b)
}

// ----- the function of each op ------------------------------------------------------------------

/// Receives the elementwise function of a binary op on a compute type `T`.
pub(crate) trait BinarySink<T> {
    type Out;
    fn apply<O: Element, F: Fn(T, T) -> O + Copy + Send + Sync>(self, f: F) -> Self::Out;
}

/// The compute types of binary ops.
pub(crate) trait BinaryFns: Element {
    /// Calls `sink.apply` with the function of `op` on `Self`, which must be a compute dtype
    /// of `op` (see `promote::binary_types`).
    fn visit_binary<S: BinarySink<Self>>(op: BinaryOp, sink: S) -> S::Out;
}

/// Passes the comparison `op` to `sink`.
#[inline(always)]
fn visit_compare<T: Element, S: BinarySink<T>>(op: BinaryOp, sink: S) -> S::Out {
    match op {
        BinaryOp::Eq => sink.apply(|x: T, y: T| x == y),
        BinaryOp::Ne => sink.apply(|x: T, y: T| x != y),
        BinaryOp::Lt => sink.apply(|x: T, y: T| x < y),
        BinaryOp::Le => sink.apply(|x: T, y: T| x <= y),
        BinaryOp::Gt => sink.apply(|x: T, y: T| x > y),
        BinaryOp::Ge => sink.apply(|x: T, y: T| x >= y),
        _ => unreachable!("{op:?} is not a comparison"),
    }
}

/// Passes the arithmetic `op` to `sink`.
#[inline(always)]
fn visit_arith<T: Arith, S: BinarySink<T>>(op: BinaryOp, sink: S) -> S::Out {
    match op {
        BinaryOp::Add => sink.apply(T::add),
        BinaryOp::Sub => sink.apply(T::sub),
        BinaryOp::Mul => sink.apply(T::mul),
        BinaryOp::FloorDiv => sink.apply(T::floor_div),
        BinaryOp::Mod => sink.apply(T::rem),
        BinaryOp::Pow => sink.apply(T::pow),
        BinaryOp::Maximum => sink.apply(T::max),
        BinaryOp::Minimum => sink.apply(T::min),
        _ => visit_compare(op, sink),
    }
}

impl BinaryFns for bool {
    fn visit_binary<S: BinarySink<bool>>(op: BinaryOp, sink: S) -> S::Out {
        match op {
            BinaryOp::Add | BinaryOp::BitOr | BinaryOp::Maximum => {
                sink.apply(|x: bool, y: bool| x | y)
            }
            BinaryOp::Mul | BinaryOp::BitAnd | BinaryOp::Minimum => {
                sink.apply(|x: bool, y: bool| x & y)
            }
            BinaryOp::BitXor => sink.apply(|x: bool, y: bool| x ^ y),
            _ if op.is_comparison() => visit_compare(op, sink),
            _ => unreachable!("{op:?} on bool is promoted or rejected before dispatch"),
        }
    }
}

/// Passes the integer `op` to `sink`.
#[inline(always)]
fn visit_int_binary<T: Bits, S: BinarySink<T>>(op: BinaryOp, sink: S) -> S::Out {
    match op {
        BinaryOp::BitAnd => sink.apply(|x: T, y: T| x & y),
        BinaryOp::BitOr => sink.apply(|x: T, y: T| x | y),
        BinaryOp::BitXor => sink.apply(|x: T, y: T| x ^ y),
        BinaryOp::LShift => sink.apply(T::shl),
        BinaryOp::RShift => sink.apply(T::shr),
        BinaryOp::Div => unreachable!("integer division computes in float64"),
        _ => visit_arith(op, sink),
    }
}

/// Passes the float `op` to `sink`.
#[inline(always)]
fn visit_float_binary<T: Float, S: BinarySink<T>>(op: BinaryOp, sink: S) -> S::Out {
    match op {
        BinaryOp::Div => sink.apply(T::div),
        BinaryOp::BitAnd
        | BinaryOp::BitOr
        | BinaryOp::BitXor
        | BinaryOp::LShift
        | BinaryOp::RShift => unreachable!("{op:?} on floats is rejected"),
        _ => visit_arith(op, sink),
    }
}

/// A unary function over slices: `dst[i] = f(src[i])`, same lengths.
pub(crate) trait SliceFn<T, O>: Copy + Send + Sync {
    fn run(self, src: &[T], dst: &mut [MaybeUninit<O>]);

    /// Whether [`SliceFn::run_in_place`] runs: functions that only run from one slice into
    /// another are run over a copy instead.
    const IN_PLACE: bool = false;

    /// `data[i] = f(data[i])`; only where [`SliceFn::IN_PLACE`] and `O` is `T`.
    fn run_in_place(self, data: &mut [T]) {
        let _ = data;
        unreachable!("not an in-place function")
    }
}

/// A [`SliceFn`] from a function of one element.
#[derive(Clone, Copy)]
struct PerElement<F>(F);

impl<T: Element, O: Element, F: Fn(T) -> O + Copy + Send + Sync> SliceFn<T, O> for PerElement<F> {
    #[inline(always)]
    fn run(self, src: &[T], dst: &mut [MaybeUninit<O>]) {
        map1_into(src, dst, self.0);
    }

    const IN_PLACE: bool = true;

    #[inline(always)]
    fn run_in_place(self, data: &mut [T]) {
        assert_eq!(O::DTYPE, T::DTYPE);
        // SAFETY: each dtype is stored by one type, so `O` is `T`.
        map1_in_place(data, |x| unsafe {
            std::mem::transmute_copy::<O, T>(&(self.0)(x))
        });
    }
}

/// The elementary function `op` of [`MathFloat`].
#[derive(Clone, Copy)]
struct Elementary(UnaryOp);

impl<T: MathFloat> SliceFn<T, T> for Elementary {
    #[inline(always)]
    fn run(self, src: &[T], dst: &mut [MaybeUninit<T>]) {
        T::math_into(self.0, src, dst);
    }
}

/// Receives the function of a unary op on an input type `T`.
pub(crate) trait UnarySink<T> {
    type Out;
    fn apply<O: Element, K: SliceFn<T, O>>(self, k: K) -> Self::Out;
}

/// The input types of unary ops.
pub(crate) trait UnaryFns: Element {
    /// Calls `sink.apply` with the function of `op` on `Self`: the input's dtype for
    /// `LogicalNot`, the result dtype (which the input is cast to first) for the others. `Pos`,
    /// and `Abs` of bool, are the identity and never get here.
    fn visit_unary<S: UnarySink<Self>>(op: UnaryOp, sink: S) -> S::Out;
}

impl UnaryFns for bool {
    fn visit_unary<S: UnarySink<bool>>(op: UnaryOp, sink: S) -> S::Out {
        match op {
            UnaryOp::LogicalNot | UnaryOp::Invert => sink.apply(PerElement(|x: bool| !x)),
            _ => unreachable!("{op:?} on bool is promoted or rejected before dispatch"),
        }
    }
}

/// Passes the unary `op` that every numeric type has to `sink`.
#[inline(always)]
fn visit_numeric_unary<T: Arith, S: UnarySink<T>>(op: UnaryOp, sink: S) -> S::Out {
    match op {
        UnaryOp::LogicalNot => sink.apply(PerElement(|x: T| x == T::ZERO)),
        UnaryOp::Neg => sink.apply(PerElement(T::neg)),
        UnaryOp::Abs => sink.apply(PerElement(T::abs)),
        UnaryOp::Relu => sink.apply(PerElement(|x: T| T::max(x, T::ZERO))),
        UnaryOp::Sign => sink.apply(PerElement(T::sign)),
        _ => unreachable!("{op:?} is not an op of every numeric type"),
    }
}

/// Passes the integer unary `op` to `sink`.
#[inline(always)]
fn visit_int_unary<T: Bits, S: UnarySink<T>>(op: UnaryOp, sink: S) -> S::Out {
    match op {
        UnaryOp::Invert => sink.apply(PerElement(|x: T| !x)),
        UnaryOp::LogicalNot | UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Relu | UnaryOp::Sign => {
            visit_numeric_unary(op, sink)
        }
        _ => unreachable!("{op:?} on integers computes in float64"),
    }
}

/// Passes the float unary `op` to `sink`.
#[inline(always)]
fn visit_float_unary<T: Float, S: UnarySink<T>>(op: UnaryOp, sink: S) -> S::Out {
    match op {
        UnaryOp::Exp
        | UnaryOp::Log
        | UnaryOp::Sqrt
        | UnaryOp::Tanh
        | UnaryOp::Sin
        | UnaryOp::Cos
        | UnaryOp::Sigmoid
        | UnaryOp::Log1p
        | UnaryOp::Expm1
        | UnaryOp::Erf
        | UnaryOp::Gelu
        | UnaryOp::GeluTanh
        | UnaryOp::Silu
        | UnaryOp::Softplus
        | UnaryOp::Rsqrt => sink.apply(Elementary(op)),
        UnaryOp::Invert | UnaryOp::Pos => unreachable!("{op:?} never gets here"),
        _ => visit_numeric_unary(op, sink),
    }
}

/// The numeric types' [`BinaryFns`] and [`UnaryFns`]: the visits of their kind.
macro_rules! numeric_fns {
    ($($t:ty: $binary:ident, $unary:ident;)+) => {$(
        impl BinaryFns for $t {
            fn visit_binary<S: BinarySink<$t>>(op: BinaryOp, sink: S) -> S::Out {
                $binary(op, sink)
            }
        }

        impl UnaryFns for $t {
            fn visit_unary<S: UnarySink<$t>>(op: UnaryOp, sink: S) -> S::Out {
                $unary(op, sink)
            }
        }
    )+};
}
numeric_fns! {
    i32: visit_int_binary, visit_int_unary;
    i64: visit_int_binary, visit_int_unary;
    f32: visit_float_binary, visit_float_unary;
    f64: visit_float_binary, visit_float_unary;
}

// ----- whole tensors -------------------------------------------------------------------------------

struct Operand<'a, T> {
    data: &'a [T],
    shape: &'a [usize],
}

fn operand<'a, T: Element>(t: &'a Tensor) -> Result<Operand<'a, T>> {
    Ok(Operand {
        data: T::slice(t.try_data()?).expect("operand was cast to the compute dtype"),
        shape: &t.shape,
    })
}

/// A binary op over two whole tensors broadcast to `out`.
struct Map2Sink<'a, T> {
    a: Operand<'a, T>,
    b: Operand<'a, T>,
    out: &'a [usize],
}

impl<T: Element> BinarySink<T> for Map2Sink<'_, T> {
    type Out = Result<Storage>;
    fn apply<O: Element, F: Fn(T, T) -> O + Copy + Send + Sync>(self, f: F) -> Result<Storage> {
        let Map2Sink { a, b, out } = self;
        Ok(O::into_storage(map2(
            a.data, a.shape, b.data, b.shape, out, f,
        )?))
    }
}

/// The value errors numpy raises for integer operands (zero division is our deliberate error).
fn check_int_operands(op: BinaryOp, rhs: &Storage) -> Result<()> {
    fn any(rhs: &Storage, pred: impl Fn(i64) -> bool) -> bool {
        match rhs {
            Storage::I32(v) => v.iter().any(|&x| pred(i64::from(x))),
            Storage::I64(v) => v.iter().any(|&x| pred(x)),
            _ => false,
        }
    }
    match op {
        BinaryOp::FloorDiv | BinaryOp::Mod if any(rhs, |x| x == 0) => Err(zero_division()),
        BinaryOp::Pow if any(rhs, |x| x < 0) => Err(negative_power()),
        _ => Ok(()),
    }
}

fn zero_division() -> TensorError {
    TensorError::new(
        ErrorKind::ZeroDivision,
        "integer division or modulo by zero",
    )
}

fn negative_power() -> TensorError {
    TensorError::new(
        ErrorKind::Value,
        "Integers to negative integer powers are not allowed.",
    )
}

/// The output shape of `binary` for operands of these shapes, with its errors: numpy's
/// broadcasting errors and, when an operand is broadcast, the size of the result.
pub(crate) fn binary_out_shape(a: &[usize], b: &[usize], result: DType) -> Result<Vec<usize>> {
    if a == b || b.is_empty() {
        // No broadcasting (or a 0-d operand): the common cases, kept cheap.
        Ok(a.to_vec())
    } else if a.is_empty() {
        Ok(b.to_vec())
    } else {
        let out = broadcast_out(&[a, b])?;
        // Refuse an oversized result before copying the operands.
        alloc::check_size(&out, result)?;
        Ok(out)
    }
}

pub(crate) fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (compute, result) = binary_types(op, promote_types(a.dtype(), b.dtype()))?;
    let out = binary_out_shape(&a.shape, &b.shape, result)?;
    let a = a.try_cast(compute)?;
    let b = b.try_cast(compute)?;
    // Every element of `b` is read when the output is non-empty, so scanning it is exact.
    if !out.contains(&0) {
        check_int_operands(op, b.try_data()?)?;
    }
    let storage = with_type!(compute, T => T::visit_binary(op, Map2Sink {
        a: operand::<T>(&a)?,
        b: operand::<T>(&b)?,
        out: &out,
    }))?;
    Ok(Tensor::from_storage(storage, out))
}

pub(crate) fn binary_scalar(
    op: BinaryOp,
    t: &Tensor,
    s: Scalar,
    scalar_first: bool,
) -> Result<Tensor> {
    let st = Tensor::scalar(s, weak_scalar_dtype(op, t.dtype(), s))?;
    if scalar_first {
        binary(op, &st, t)
    } else {
        binary(op, t, &st)
    }
}

/// A unary op over a whole tensor.
struct Map1Sink<'a, T> {
    src: &'a [T],
    shape: &'a [usize],
}

impl<T: Element> UnarySink<T> for Map1Sink<'_, T> {
    type Out = Result<Storage>;
    fn apply<O: Element, K: SliceFn<T, O>>(self, k: K) -> Result<Storage> {
        let (res, n) = alloc::try_vec_capped(self.shape, alloc::cap())?;
        let src = self.src;
        let fill = |dst: &mut [MaybeUninit<O>]| {
            for_parts(dst, |start, part| {
                k.run(&src[start..start + part.len()], part)
            })
        };
        // SAFETY: the parts cover the output and a `SliceFn` writes every slot of its output.
        Ok(O::into_storage(unsafe { fill_vec(res, n, fill) }))
    }
}

fn unary_storage<T: UnaryFns>(op: UnaryOp, v: &[T], shape: &[usize]) -> Result<Storage> {
    T::visit_unary(op, Map1Sink { src: v, shape })
}

pub(crate) fn unary(op: UnaryOp, a: &Tensor) -> Result<Tensor> {
    let dtype = unary_result_dtype(op, a.dtype())?;
    let storage = match op {
        UnaryOp::Pos => return Ok(a.clone()),
        // Abs of bool is the identity (and tensors are immutable, so the storage is shared).
        UnaryOp::Abs if dtype == DType::Bool => return Ok(a.clone()),
        UnaryOp::LogicalNot => with_storage!(a.try_data()?, v => unary_storage(op, v, &a.shape)?),
        _ => with_storage!(a.try_cast(dtype)?.try_data()?, v => unary_storage(op, v, &a.shape)?),
    };
    Ok(Tensor::from_storage(storage, a.shape.to_vec()))
}

pub(crate) fn where_(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = broadcast_out(&[&cond.shape, &x.shape, &y.shape])?;
    let dtype = promote_types(x.dtype(), y.dtype());
    // Refuse an oversized result before copying the operands.
    alloc::check_size(&out, dtype)?;
    let cond = cond.try_cast(DType::Bool)?;
    let c = bool::slice(cond.try_data()?).expect("cast to bool");
    let (x, y) = (x.try_cast(dtype)?, y.try_cast(dtype)?);
    let storage = with_storage!(x.try_data()?, xv => {
        let yv = operand(&y)?.data;
        Element::into_storage(map3(
            (c, &cond.shape),
            (xv.as_slice(), &x.shape),
            (yv, &y.shape),
            &out,
            |c, a, b| if c { a } else { b },
        )?)
    });
    Ok(Tensor::from_storage(storage, out))
}

/// The data of a tensor of `shape` cast to `dtype`.
pub(crate) fn cast_storage(s: &Storage, shape: &[usize], dtype: DType) -> Result<Storage> {
    Ok(with_storage!(s, v => with_type!(dtype, D => {
        let (res, n) = alloc::try_vec_capped::<D>(shape, alloc::cap())?;
        let fill = |dst: &mut [MaybeUninit<D>]| {
            for_parts(dst, |start, part| {
                map1_into(&v[start..start + part.len()], part, |x| x.cast::<D>())
            })
        };
        // SAFETY: the parts cover the output and `map1_into` writes every slot of its part.
        D::into_storage(unsafe { fill_vec(res, n, fill) })
    })))
}

// ----- in place ----------------------------------------------------------------------------------

/// Runs `work(start, part, scratch)` over consecutive parts of at most [`CHUNK`] elements of
/// `data`, in parallel for large tensors; `scratch` holds a copy of `part`.
fn in_place_chunks<T: Element>(data: &mut [T], work: impl Fn(usize, &mut [T], &[T]) + Sync) {
    for_parts(data, |offset, task| {
        let mut scratch = vec![T::from_bool(false); task.len().min(CHUNK)];
        for (i, part) in task.chunks_mut(CHUNK).enumerate() {
            let copy = &mut scratch[..part.len()];
            copy.copy_from_slice(part);
            work(offset + i * CHUNK, part, copy);
        }
    });
}

/// The destination of a kernel that writes over `part`, whose values were copied out first.
/// `O` is `T` (callers check that the result dtype is the operand's).
fn overwrite<T: Element, O: Element>(part: &mut [T]) -> &mut [MaybeUninit<O>] {
    O::from_any_out(T::any_out(as_uninit(part))).expect("the result has the operand's dtype")
}

/// How the other operand of an in-place binary op is read, chunk by chunk.
struct Other<'a, T> {
    data: &'a [T],
    n: usize,
    broadcast: Option<BroadcastRead>,
}

impl<T: Element> Other<'_, T> {
    /// The operand at output positions `start..start + len`; `buf` holds gathered elements.
    fn at<'b>(&'b self, start: usize, len: usize, buf: &'b mut Vec<T>) -> Val<'b, T> {
        match &self.broadcast {
            None => linear(self.data, self.n, start, len),
            Some(read) => {
                buf.resize(len, T::from_bool(false));
                read.read(self.data, start, buf);
                Val::Slice(buf)
            }
        }
    }
}

/// A binary op whose result overwrites one of its operands.
struct InPlaceSink<'a, T> {
    target: &'a mut [T],
    other: Other<'a, T>,
    target_left: bool,
}

impl<T: Element> BinarySink<T> for InPlaceSink<'_, T> {
    type Out = ();
    fn apply<O: Element, F: Fn(T, T) -> O + Copy + Send + Sync>(self, f: F) {
        let InPlaceSink {
            target,
            other,
            target_left,
        } = self;
        in_place_chunks(target, |start, part, copy| {
            let mut buf = Vec::new();
            let o = other.at(start, part.len(), &mut buf);
            let dst = overwrite::<T, O>(part);
            if target_left {
                map2_into(Val::Slice(copy), o, dst, f);
            } else {
                map2_into(o, Val::Slice(copy), dst, f);
            }
        });
    }
}

/// `binary(op, l, r)` where `target` is `l` (`target_left`) or `r`, reusing `target`'s buffer
/// when it is uniquely owned and already has the result's shape and dtype.
pub(crate) fn binary_in_place(
    op: BinaryOp,
    mut target: Tensor,
    other: &Tensor,
    target_left: bool,
) -> Result<Tensor> {
    let fallback = |target: &Tensor| {
        if target_left {
            binary(op, target, other)
        } else {
            binary(op, other, target)
        }
    };
    let dtype = target.dtype();
    let (compute, result) = binary_types(op, promote_types(dtype, other.dtype()))?;
    if compute != dtype || result != dtype || target.storage_mut().is_none() {
        return fallback(&target);
    }
    let out = if target_left {
        binary_out_shape(&target.shape, &other.shape, result)?
    } else {
        binary_out_shape(&other.shape, &target.shape, result)?
    };
    if out[..] != target.shape[..] {
        return fallback(&target);
    }
    let other = other.try_cast(compute)?;
    if !out.contains(&0) {
        let rhs = if target_left { &other } else { &target };
        check_int_operands(op, rhs.try_data()?)?;
    }
    let n = out.iter().product::<usize>();
    let broadcast =
        (other.numel() != n && other.numel() != 1).then(|| BroadcastRead::new(&other.shape, &out));
    let storage = target.storage_mut().expect("checked unique above");
    with_type!(compute, T => {
        let data = T::vec_mut(storage).expect("the target has the compute dtype");
        T::visit_binary(op, InPlaceSink {
            target: data,
            other: Other { data: operand::<T>(&other)?.data, n, broadcast },
            target_left,
        })
    });
    Ok(target)
}

/// A unary op whose result overwrites its operand.
struct InPlaceUnary<'a, T> {
    target: &'a mut [T],
}

impl<T: Element> UnarySink<T> for InPlaceUnary<'_, T> {
    type Out = ();
    fn apply<O: Element, K: SliceFn<T, O>>(self, k: K) {
        if K::IN_PLACE && O::DTYPE == T::DTYPE {
            // A function of one element reads it before writing it: no copy needed (the copy
            // was 5 % of the digits MLP's run at batch 360, for its ReLU).
            for_parts(self.target, |_, part| k.run_in_place(part));
            return;
        }
        in_place_chunks(self.target, |_, part, copy| {
            k.run(copy, overwrite::<T, O>(part))
        });
    }
}

fn unary_in_place_typed<T: UnaryFns>(op: UnaryOp, v: &mut [T]) {
    T::visit_unary(op, InPlaceUnary { target: v });
}

/// `unary(op, a)`, reusing `a`'s buffer when it is uniquely owned and the result has its dtype.
pub(crate) fn unary_in_place(op: UnaryOp, mut a: Tensor) -> Result<Tensor> {
    let dtype = unary_result_dtype(op, a.dtype())?;
    if matches!(op, UnaryOp::Pos) || (op == UnaryOp::Abs && dtype == DType::Bool) {
        return Ok(a);
    }
    if dtype != a.dtype() {
        return unary(op, &a);
    }
    let Some(storage) = a.storage_mut() else {
        return unary(op, &a);
    };
    match storage {
        Storage::Bool(v) => unary_in_place_typed(op, v),
        Storage::I32(v) => unary_in_place_typed(op, v),
        Storage::I64(v) => unary_in_place_typed(op, v),
        Storage::F32(v) => unary_in_place_typed(op, v),
        Storage::F64(v) => unary_in_place_typed(op, v),
        Storage::F16(_)
        | Storage::BF16(_)
        | Storage::I8(_)
        | Storage::U8(_)
        | Storage::View(_)
        | Storage::Device(_) => {
            return unary(op, &a);
        }
    }
    Ok(a)
}

// ----- chunks (the fused kernels) ----------------------------------------------------------------

/// A data-dependent error of an integer op (zero division, negative power): the fused kernels
/// stop and let the unfused evaluation raise it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DataError;

/// Whether integer `op` with right operand `b` raises (as `check_int_operands` does).
#[inline]
fn chunk_data_error<T: Element>(op: BinaryOp, b: Val<T>) -> bool {
    if !T::DTYPE.is_int() {
        return false;
    }
    match op {
        BinaryOp::FloorDiv | BinaryOp::Mod => crate::loops::any(b, |x| x.is_zero()),
        BinaryOp::Pow => crate::loops::any(b, |x| x.to_f64() < 0.0),
        _ => false,
    }
}

/// Whether a binary op on this compute dtype can raise a data-dependent error.
pub(crate) fn can_raise(op: BinaryOp, compute: DType) -> bool {
    compute.is_int() && matches!(op, BinaryOp::FloorDiv | BinaryOp::Mod | BinaryOp::Pow)
}

struct ChunkSink<'a, T> {
    a: Val<'a, T>,
    b: Val<'a, T>,
    dst: AnyOut<'a>,
}

impl<T: Element> BinarySink<T> for ChunkSink<'_, T> {
    type Out = ();
    fn apply<O: Element, F: Fn(T, T) -> O + Copy + Send + Sync>(self, f: F) {
        let dst = O::from_any_out(self.dst).expect("destination of the result dtype");
        map2_into(self.a, self.b, dst, f);
    }
}

/// `op` on operands of the compute dtype `compute`, into `dst` of the result dtype.
pub(crate) fn binary_chunk(
    op: BinaryOp,
    compute: DType,
    a: AnyVal,
    b: AnyVal,
    dst: AnyOut,
) -> std::result::Result<(), DataError> {
    with_type!(compute, T => {
        let a = T::from_any_val(a).expect("operand of the compute dtype");
        let b = T::from_any_val(b).expect("operand of the compute dtype");
        if chunk_data_error(op, b) {
            return Err(DataError);
        }
        T::visit_binary(op, ChunkSink { a, b, dst });
    });
    Ok(())
}

struct UnaryChunkSink<'a, T> {
    src: Val<'a, T>,
    dst: AnyOut<'a>,
}

impl<T: Element> UnarySink<T> for UnaryChunkSink<'_, T> {
    type Out = ();
    fn apply<O: Element, K: SliceFn<T, O>>(self, k: K) {
        let dst = O::from_any_out(self.dst).expect("destination of the result dtype");
        match self.src {
            Val::Slice(s) => k.run(s, dst),
            Val::Splat(x) => {
                let mut one = [MaybeUninit::uninit()];
                k.run(&[x], &mut one);
                // SAFETY: `k.run` wrote the single slot.
                let v = unsafe { one[0].assume_init() };
                for d in dst {
                    d.write(v);
                }
            }
        }
    }
}

fn unary_chunk_typed<T: UnaryFns>(op: UnaryOp, src: Val<T>, dst: AnyOut) {
    T::visit_unary(op, UnaryChunkSink { src, dst });
}

/// `op` (not `Pos`, nor `Abs` of bool) on `src`, already cast to the op's dtype (the input's
/// dtype for `LogicalNot`), into `dst` of the result dtype.
pub(crate) fn unary_chunk(op: UnaryOp, src: AnyVal, dst: AnyOut) {
    match src {
        AnyVal::Bool(v) => unary_chunk_typed(op, v, dst),
        AnyVal::I32(v) => unary_chunk_typed(op, v, dst),
        AnyVal::I64(v) => unary_chunk_typed(op, v, dst),
        AnyVal::F32(v) => unary_chunk_typed(op, v, dst),
        AnyVal::F64(v) => unary_chunk_typed(op, v, dst),
    }
}

fn cast_chunk_typed<T: Element>(src: Val<T>, dst: AnyOut) {
    macro_rules! go {
        ($d:expr) => {
            match src {
                Val::Slice(s) => map1_into(s, $d, |x| x.cast()),
                Val::Splat(x) => {
                    for d in $d {
                        d.write(x.cast());
                    }
                }
            }
        };
    }
    match dst {
        AnyOut::Bool(d) => go!(d),
        AnyOut::I32(d) => go!(d),
        AnyOut::I64(d) => go!(d),
        AnyOut::F32(d) => go!(d),
        AnyOut::F64(d) => go!(d),
    }
}

/// `src` cast (numpy's `astype`) to the dtype of `dst`.
pub(crate) fn cast_chunk(src: AnyVal, dst: AnyOut) {
    match src {
        AnyVal::Bool(v) => cast_chunk_typed(v, dst),
        AnyVal::I32(v) => cast_chunk_typed(v, dst),
        AnyVal::I64(v) => cast_chunk_typed(v, dst),
        AnyVal::F32(v) => cast_chunk_typed(v, dst),
        AnyVal::F64(v) => cast_chunk_typed(v, dst),
    }
}

fn select_chunk_typed<T: Element>(c: Val<bool>, x: AnyVal, y: AnyVal, dst: AnyOut) {
    let x = T::from_any_val(x).expect("operand of the result dtype");
    let y = T::from_any_val(y).expect("operand of the result dtype");
    let dst = T::from_any_out(dst).expect("destination of the result dtype");
    select_into(c, x, y, dst);
}

/// `where(c, x, y)` with `c` bool and `x`, `y` of the result dtype.
pub(crate) fn select_chunk(c: AnyVal, x: AnyVal, y: AnyVal, dst: AnyOut) {
    let AnyVal::Bool(c) = c else {
        unreachable!("the condition is cast to bool")
    };
    with_type!(x.dtype(), T => select_chunk_typed::<T>(c, x, y, dst));
}

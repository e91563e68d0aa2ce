//! Elementwise kernels: broadcasting binary ops, unary ops, `where` and casts.

use crate::alloc::{self, try_collect};
use crate::element::{Element, with_storage, with_type};
use crate::promote::{binary_types, promote_types, unary_result_dtype, weak_scalar_dtype};
use crate::shape::{broadcast_n, broadcast_strides, for_each_row};
use crate::{BinaryOp, DType, ErrorKind, Result, Scalar, Storage, Tensor, TensorError, UnaryOp};

/// The broadcast output shape of a ufunc, with numpy's iterator size check.
fn broadcast_out(shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let out = broadcast_n(shapes)?;
    alloc::checked_iter_size(&out)?;
    Ok(out)
}

/// Applies `f` to `a` and `b` broadcast to `out`, with fast paths for equal sizes and for a
/// single-element operand.
fn map2<A: Copy, B: Copy, O: Element>(
    a: &[A],
    a_shape: &[usize],
    b: &[B],
    b_shape: &[usize],
    out: &[usize],
    f: impl Fn(A, B) -> O,
) -> Result<Vec<O>> {
    let (mut res, n) = alloc::try_vec_capped(out, alloc::cap())?;
    if n == 0 {
        return Ok(res);
    }
    // An operand with as many elements as the output is not broadcast, so it can be read linearly.
    match (a.len() == n, b.len() == n) {
        (true, true) => {
            res.extend(a.iter().zip(b).map(|(&x, &y)| f(x, y)));
            return Ok(res);
        }
        (false, true) if a.len() == 1 => {
            res.extend(b.iter().map(|&y| f(a[0], y)));
            return Ok(res);
        }
        (true, false) if b.len() == 1 => {
            res.extend(a.iter().map(|&x| f(x, b[0])));
            return Ok(res);
        }
        _ => {}
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
fn map3<A: Copy, B: Copy, C: Copy, O: Element>(
    (a, a_shape): (&[A], &[usize]),
    (b, b_shape): (&[B], &[usize]),
    (c, c_shape): (&[C], &[usize]),
    out: &[usize],
    f: impl Fn(A, B, C) -> O,
) -> Result<Vec<O>> {
    let (mut res, n) = alloc::try_vec_capped(out, alloc::cap())?;
    if a.len() == n && b.len() == n && c.len() == n {
        res.extend((0..n).map(|i| f(a[i], b[i], c[i])));
        return Ok(res);
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
    fn zero() -> Self;
}

/// Bitwise ops of the integer dtypes.
trait Bits: Arith {
    fn and(a: Self, b: Self) -> Self;
    fn or(a: Self, b: Self) -> Self;
    fn xor(a: Self, b: Self) -> Self;
    fn shl(a: Self, b: Self) -> Self;
    fn shr(a: Self, b: Self) -> Self;
    fn not(a: Self) -> Self;
}

macro_rules! impl_int {
    ($t:ty) => {
        impl Arith for $t {
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
            fn zero() -> Self {
                0
            }
        }

        impl Bits for $t {
            fn and(a: Self, b: Self) -> Self {
                a & b
            }
            fn or(a: Self, b: Self) -> Self {
                a | b
            }
            fn xor(a: Self, b: Self) -> Self {
                a ^ b
            }
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
            fn not(a: Self) -> Self {
                !a
            }
        }
    };
}
impl_int!(i32);
impl_int!(i64);

/// Float-only operations.
trait Float: Arith {
    fn div(a: Self, b: Self) -> Self;
    fn exp(a: Self) -> Self;
    fn ln(a: Self) -> Self;
    fn sqrt(a: Self) -> Self;
    fn tanh(a: Self) -> Self;
    fn sin(a: Self) -> Self;
    fn cos(a: Self) -> Self;
    fn sigmoid(a: Self) -> Self;
}

macro_rules! impl_float {
    ($t:ty) => {
        impl Arith for $t {
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
            fn zero() -> Self {
                0.0
            }
        }

        impl Float for $t {
            fn div(a: Self, b: Self) -> Self {
                a / b
            }
            fn exp(a: Self) -> Self {
                a.exp()
            }
            fn ln(a: Self) -> Self {
                a.ln()
            }
            fn sqrt(a: Self) -> Self {
                a.sqrt()
            }
            fn tanh(a: Self) -> Self {
                a.tanh()
            }
            fn sin(a: Self) -> Self {
                a.sin()
            }
            fn cos(a: Self) -> Self {
                a.cos()
            }
            // Split on the sign so `exp` never overflows.
            fn sigmoid(a: Self) -> Self {
                if a >= 0.0 {
                    1.0 / (1.0 + (-a).exp())
                } else {
                    let e = a.exp();
                    e / (1.0 + e)
                }
            }
        }

        /// numpy's `npy_divmod`: floor division and a remainder with the divisor's sign, from
        /// `fmod` so that `a == q * b + r` holds as closely as floats allow. `b != 0`.
        fn divmod(a: $t, b: $t) -> ($t, $t) {
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

/// Maps `$f` over two broadcast operands. `$f` is a fn item or closure, never a `fn` pointer,
/// so every op gets its own monomorphized, inlinable loop.
macro_rules! go {
    ($a:ident, $b:ident, $out:ident, $f:expr) => {
        map2($a.data, $a.shape, $b.data, $b.shape, $out, $f)
    };
}

struct Operand<'a, T> {
    data: &'a [T],
    shape: &'a [usize],
}

fn arith<T: Arith>(op: BinaryOp, a: Operand<T>, b: Operand<T>, out: &[usize]) -> Result<Vec<T>> {
    match op {
        BinaryOp::Add => go!(a, b, out, T::add),
        BinaryOp::Sub => go!(a, b, out, T::sub),
        BinaryOp::Mul => go!(a, b, out, T::mul),
        BinaryOp::FloorDiv => go!(a, b, out, T::floor_div),
        BinaryOp::Mod => go!(a, b, out, T::rem),
        BinaryOp::Pow => go!(a, b, out, T::pow),
        BinaryOp::Maximum => go!(a, b, out, T::max),
        BinaryOp::Minimum => go!(a, b, out, T::min),
        _ => unreachable!("{op:?} is dispatched elsewhere"),
    }
}

fn int_binary<T: Bits>(
    op: BinaryOp,
    a: Operand<T>,
    b: Operand<T>,
    out: &[usize],
) -> Result<Vec<T>> {
    match op {
        BinaryOp::BitAnd => go!(a, b, out, T::and),
        BinaryOp::BitOr => go!(a, b, out, T::or),
        BinaryOp::BitXor => go!(a, b, out, T::xor),
        BinaryOp::LShift => go!(a, b, out, T::shl),
        BinaryOp::RShift => go!(a, b, out, T::shr),
        _ => arith(op, a, b, out),
    }
}

fn float_binary<T: Float>(
    op: BinaryOp,
    a: Operand<T>,
    b: Operand<T>,
    out: &[usize],
) -> Result<Vec<T>> {
    match op {
        BinaryOp::Div => map2(a.data, a.shape, b.data, b.shape, out, T::div),
        _ => arith(op, a, b, out),
    }
}

fn bool_binary(
    op: BinaryOp,
    a: Operand<bool>,
    b: Operand<bool>,
    out: &[usize],
) -> Result<Vec<bool>> {
    match op {
        BinaryOp::Add | BinaryOp::BitOr | BinaryOp::Maximum => go!(a, b, out, |x, y| x | y),
        BinaryOp::Mul | BinaryOp::BitAnd | BinaryOp::Minimum => go!(a, b, out, |x, y| x & y),
        BinaryOp::BitXor => go!(a, b, out, |x, y| x ^ y),
        _ => unreachable!("{op:?} on bool is promoted or rejected before dispatch"),
    }
}

fn compare<T: Element>(
    op: BinaryOp,
    a: Operand<T>,
    b: Operand<T>,
    out: &[usize],
) -> Result<Vec<bool>> {
    match op {
        BinaryOp::Eq => go!(a, b, out, |x, y| x == y),
        BinaryOp::Ne => go!(a, b, out, |x, y| x != y),
        BinaryOp::Lt => go!(a, b, out, |x, y| x < y),
        BinaryOp::Le => go!(a, b, out, |x, y| x <= y),
        BinaryOp::Gt => go!(a, b, out, |x, y| x > y),
        BinaryOp::Ge => go!(a, b, out, |x, y| x >= y),
        _ => unreachable!("{op:?} is not a comparison"),
    }
}

fn operand<'a, T: Element>(t: &'a Tensor) -> Operand<'a, T> {
    Operand {
        data: T::slice(&t.storage).expect("operand was cast to the compute dtype"),
        shape: &t.shape,
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
        BinaryOp::FloorDiv | BinaryOp::Mod if any(rhs, |x| x == 0) => Err(TensorError::new(
            ErrorKind::ZeroDivision,
            "integer division or modulo by zero",
        )),
        BinaryOp::Pow if any(rhs, |x| x < 0) => Err(TensorError::new(
            ErrorKind::Value,
            "Integers to negative integer powers are not allowed.",
        )),
        _ => Ok(()),
    }
}

pub(crate) fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (compute, result) = binary_types(op, promote_types(a.dtype(), b.dtype()))?;
    let out = if a.shape == b.shape || b.shape.is_empty() {
        // No broadcasting (or a 0-d operand): the common cases, kept cheap.
        a.shape.to_vec()
    } else if a.shape.is_empty() {
        b.shape.to_vec()
    } else {
        let out = broadcast_out(&[&a.shape, &b.shape])?;
        // Refuse an oversized result before copying the operands.
        alloc::check_size(&out, result)?;
        out
    };
    let a = a.try_cast(compute)?;
    let b = b.try_cast(compute)?;
    // Every element of `b` is read when the output is non-empty, so scanning it is exact.
    if !out.contains(&0) {
        check_int_operands(op, &b.storage)?;
    }
    let storage = if op.is_comparison() {
        Storage::Bool(with_storage!(&*a.storage, v => {
            compare(op, Operand { data: v, shape: &a.shape }, operand(&b), &out)?
        }))
    } else {
        match compute {
            DType::Bool => Storage::Bool(bool_binary(op, operand(&a), operand(&b), &out)?),
            DType::I32 => Storage::I32(int_binary(op, operand(&a), operand(&b), &out)?),
            DType::I64 => Storage::I64(int_binary(op, operand(&a), operand(&b), &out)?),
            DType::F32 => Storage::F32(float_binary(op, operand(&a), operand(&b), &out)?),
            DType::F64 => Storage::F64(float_binary(op, operand(&a), operand(&b), &out)?),
        }
    };
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

/// Applies `f` to every element of `v`, the data of a tensor of `shape`.
fn map1<T: Copy, O: Element>(v: &[T], shape: &[usize], f: impl Fn(T) -> O) -> Result<Vec<O>> {
    try_collect(shape, v.iter().map(|&x| f(x)))
}

fn signed_unary<T: Arith>(op: UnaryOp, v: &[T], shape: &[usize]) -> Result<Vec<T>> {
    match op {
        UnaryOp::Neg => map1(v, shape, T::neg),
        UnaryOp::Abs => map1(v, shape, T::abs),
        UnaryOp::Relu => map1(v, shape, |x| T::max(x, T::zero())),
        _ => unreachable!("{op:?} is dispatched elsewhere"),
    }
}

fn int_unary<T: Bits>(op: UnaryOp, v: &[T], shape: &[usize]) -> Result<Vec<T>> {
    match op {
        UnaryOp::Invert => map1(v, shape, T::not),
        _ => signed_unary(op, v, shape),
    }
}

fn float_unary<T: Float>(op: UnaryOp, v: &[T], shape: &[usize]) -> Result<Vec<T>> {
    match op {
        UnaryOp::Exp => map1(v, shape, T::exp),
        UnaryOp::Log => map1(v, shape, T::ln),
        UnaryOp::Sqrt => map1(v, shape, T::sqrt),
        UnaryOp::Tanh => map1(v, shape, T::tanh),
        UnaryOp::Sin => map1(v, shape, T::sin),
        UnaryOp::Cos => map1(v, shape, T::cos),
        UnaryOp::Sigmoid => map1(v, shape, T::sigmoid),
        _ => signed_unary(op, v, shape),
    }
}

pub(crate) fn unary(op: UnaryOp, a: &Tensor) -> Result<Tensor> {
    let dtype = unary_result_dtype(op, a.dtype())?;
    let shape = &a.shape[..];
    let storage = match op {
        UnaryOp::Pos => return Ok(a.clone()),
        // Abs of bool is the identity (and tensors are immutable, so the storage is shared).
        UnaryOp::Abs if dtype == DType::Bool => return Ok(a.clone()),
        UnaryOp::LogicalNot => {
            Storage::Bool(with_storage!(&*a.storage, v => map1(v, shape, Element::is_zero)?))
        }
        _ => match &*a.try_cast(dtype)?.storage {
            // Invert of bool is logical not.
            Storage::Bool(v) => Storage::Bool(map1(v, shape, |x| !x)?),
            Storage::I32(v) => Storage::I32(int_unary(op, v, shape)?),
            Storage::I64(v) => Storage::I64(int_unary(op, v, shape)?),
            Storage::F32(v) => Storage::F32(float_unary(op, v, shape)?),
            Storage::F64(v) => Storage::F64(float_unary(op, v, shape)?),
        },
    };
    Ok(Tensor::from_storage(storage, a.shape.to_vec()))
}

pub(crate) fn where_(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = broadcast_out(&[&cond.shape, &x.shape, &y.shape])?;
    let dtype = promote_types(x.dtype(), y.dtype());
    // Refuse an oversized result before copying the operands.
    alloc::check_size(&out, dtype)?;
    let cond = cond.try_cast(DType::Bool)?;
    let c = bool::slice(&cond.storage).expect("cast to bool");
    let (x, y) = (x.try_cast(dtype)?, y.try_cast(dtype)?);
    let storage = with_storage!(&*x.storage, xv => {
        let yv = operand(&y).data;
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
        D::into_storage(try_collect(shape, v.iter().map(|&x| x.cast::<D>()))?)
    })))
}

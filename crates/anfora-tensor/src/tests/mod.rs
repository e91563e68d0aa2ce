//! Unit tests. Expected values, dtypes, error texts and printed strings were all checked against
//! numpy 2.4.6; deliberate deviations are marked where they are tested.

pub(crate) use crate::{
    BinaryOp, DType, ErrorKind, IndexItem, Nested, ReduceOp, Scalar, SplitSpec, Tensor, UnaryOp,
};

mod advanced;
mod array;
mod binary;
mod construct;
mod convert;
mod fused;
mod half;
mod int8;
mod math;
mod matmul;
mod memory;
// Expected values are CPython's, digits and all.
#[allow(clippy::approx_constant)]
mod nn;
// Expected values are numpy's output, digits and all.
#[allow(clippy::approx_constant)]
mod print;
mod print_mindspore;
mod props;
mod quant;
mod random;
mod reduce;
mod scatter;
mod shape;
#[allow(clippy::approx_constant)]
mod unary;
mod views;

pub(crate) const NAN: f64 = f64::NAN;
pub(crate) const INF: f64 = f64::INFINITY;
pub(crate) const NAN32: f32 = f32::NAN;
pub(crate) const INF32: f32 = f32::INFINITY;

pub(crate) fn f32s(v: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_f32(v.to_vec(), shape).unwrap()
}
pub(crate) fn f64s(v: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_f64(v.to_vec(), shape).unwrap()
}
pub(crate) fn i32s(v: &[i32], shape: &[usize]) -> Tensor {
    Tensor::from_i32(v.to_vec(), shape).unwrap()
}
pub(crate) fn i64s(v: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_i64(v.to_vec(), shape).unwrap()
}
pub(crate) fn bools(v: &[bool], shape: &[usize]) -> Tensor {
    Tensor::from_bool(v.to_vec(), shape).unwrap()
}

// One-dimensional tensors (the shape is the length), for rows of tables of cases.
pub(crate) fn f32s1(v: &[f32]) -> Tensor {
    f32s(v, &[v.len()])
}
pub(crate) fn f64s1(v: &[f64]) -> Tensor {
    f64s(v, &[v.len()])
}
pub(crate) fn i32s1(v: &[i32]) -> Tensor {
    i32s(v, &[v.len()])
}
pub(crate) fn i64s1(v: &[i64]) -> Tensor {
    i64s(v, &[v.len()])
}
pub(crate) fn bools1(v: &[bool]) -> Tensor {
    bools(v, &[v.len()])
}

/// `np.arange(n, dtype=dtype)`.
pub(crate) fn ar(n: i64, dtype: DType) -> Tensor {
    Tensor::arange(Scalar::Int(0), Scalar::Int(n), Scalar::Int(1), Some(dtype)).unwrap()
}
pub(crate) fn div(t: &Tensor, s: impl Into<Scalar>) -> Tensor {
    Tensor::binary_scalar(BinaryOp::Div, t, s.into(), false).unwrap()
}
pub(crate) fn mul(t: &Tensor, s: impl Into<Scalar>) -> Tensor {
    Tensor::binary_scalar(BinaryOp::Mul, t, s.into(), false).unwrap()
}
pub(crate) fn cmp_gt(t: &Tensor, s: impl Into<Scalar>) -> Tensor {
    Tensor::binary_scalar(BinaryOp::Gt, t, s.into(), false).unwrap()
}

/// Asserts an error's Python class and message.
#[track_caller]
pub(crate) fn assert_err<T: std::fmt::Debug>(r: crate::Result<T>, kind: ErrorKind, message: &str) {
    let e = r.expect_err("expected an error");
    assert_eq!((e.kind, e.message.as_str()), (kind, message));
}

/// Asserts a tensor's dtype, shape and values (NaN equal to NaN, signed zeros distinct).
#[track_caller]
pub(crate) fn assert_tensor(t: &Tensor, expected: &Tensor) {
    assert!(
        t.same_as(expected),
        "got {t:?} with shape {:?}, expected {expected:?} with shape {:?}",
        t.shape(),
        expected.shape()
    );
}

/// What a row of a table of cases expects: a tensor (compared as [`assert_tensor`] compares),
/// or an error's Python class and message.
pub(crate) type Expected = std::result::Result<Tensor, (ErrorKind, String)>;

/// An expected error.
pub(crate) fn raises(kind: ErrorKind, message: &str) -> Expected {
    Err((kind, message.to_string()))
}

/// Runs a table of cases, each a description, the result and what is expected, and fails
/// after the last one if any result differs, listing every such row (numbered from 0).
#[track_caller]
pub(crate) fn check_rows(
    rows: impl IntoIterator<Item = (String, crate::Result<Tensor>, Expected)>,
) {
    let mut failed = Vec::new();
    let mut n = 0;
    for (i, (what, got, want)) in rows.into_iter().enumerate() {
        n += 1;
        let same = match (&got, &want) {
            (Ok(t), Ok(w)) => t.same_as(w),
            (Err(e), Err((kind, message))) => e.kind == *kind && e.message == *message,
            _ => false,
        };
        if !same {
            failed.push(format!("row {i}, {what}: got {got:?}, expected {want:?}"));
        }
    }
    assert!(n > 0, "an empty table");
    assert!(
        failed.is_empty(),
        "{} of {n} rows failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

pub(crate) fn list(items: Vec<Nested>) -> Nested {
    Nested::List(items)
}
pub(crate) fn int(i: i64) -> Nested {
    Nested::Scalar(Scalar::Int(i))
}
pub(crate) fn float(f: f64) -> Nested {
    Nested::Scalar(Scalar::Float(f))
}
pub(crate) fn boolean(b: bool) -> Nested {
    Nested::Scalar(Scalar::Bool(b))
}

pub(crate) fn slice(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> IndexItem {
    IndexItem::Slice { start, stop, step }
}

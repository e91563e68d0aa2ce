//! Elementwise binary ops: promotion, NEP 50 scalars, broadcasting, per-op semantics.
//!
//! Each test is a table of cases: the operands, the op and the expected tensor or error.

use super::*;
use crate::BinaryOp as Op;
use crate::DType::{Bool, F32, F64, I32, I64};

/// A row of the `Tensor::binary` tables: the op, its operands and what it gives.
type BinaryCase = (Op, (Tensor, Tensor), Expected);

/// Runs `Tensor::binary` on every row.
#[track_caller]
fn check_binary(rows: Vec<BinaryCase>) {
    check_rows(rows.into_iter().map(|(op, (a, b), want)| {
        (
            format!("{op:?} of {a:?} and {b:?}"),
            Tensor::binary(op, &a, &b),
            want,
        )
    }));
}

/// numpy's TypeError for a bitwise ufunc on floats.
fn unsupported(ufunc: &str) -> Expected {
    let message = format!(
        "ufunc '{ufunc}' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''"
    );
    raises(ErrorKind::Type, &message)
}

/// numpy's TypeError for `-` on bools.
const BOOL_SUBTRACT: &str = "numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead.";

/// The operands most rows of the `each_op_on_*` tables take, by dtype: signs, zeros, and for
/// floats signed zeros, infinities and NaN.
fn pair(dtype: DType) -> (Tensor, Tensor) {
    match dtype {
        Bool => (
            bools(&[true, true, false, false], &[4]),
            bools(&[true, false, true, false], &[4]),
        ),
        I32 => (
            i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        ),
        I64 => (
            i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        ),
        F32 => (
            f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        ),
        F64 => (
            f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        ),
        _ => unreachable!("no operands of {dtype}"),
    }
}

/// numpy's result dtype for every pair of dtypes.
#[test]
fn add_promotion_table() {
    // [1, 0] + [1, 1] is [2, 1] in the result dtype ([true, true] for two bools).
    let table = [
        (Bool, Bool, Bool),
        (Bool, I32, I32),
        (Bool, I64, I64),
        (Bool, F32, F32),
        (Bool, F64, F64),
        (I32, Bool, I32),
        (I32, I32, I32),
        (I32, I64, I64),
        (I32, F32, F64),
        (I32, F64, F64),
        (I64, Bool, I64),
        (I64, I32, I64),
        (I64, I64, I64),
        (I64, F32, F64),
        (I64, F64, F64),
        (F32, Bool, F32),
        (F32, I32, F64),
        (F32, I64, F64),
        (F32, F32, F32),
        (F32, F64, F64),
        (F64, Bool, F64),
        (F64, I32, F64),
        (F64, I64, F64),
        (F64, F32, F64),
        (F64, F64, F64),
    ];
    let pair = |v: [i64; 2], dtype| i64s1(&v).cast(dtype);
    check_binary(Vec::from(table.map(|(a, b, result)| {
        let operands = (pair([1, 0], a), pair([1, 1], b));
        (Op::Add, operands, Ok(pair([2, 1], result)))
    })));
}

/// Runs every op of `rows` on the operands of `pair(dtype)`.
#[track_caller]
fn check_on(dtype: DType, rows: Vec<(Op, Expected)>) {
    let (a, b) = pair(dtype);
    check_binary(Vec::from_iter(
        rows.into_iter()
            .map(|(op, want)| (op, (a.clone(), b.clone()), want)),
    ));
}

#[test]
fn each_op_on_bool() {
    check_on(
        Bool,
        vec![
            (Op::Add, Ok(bools1(&[true, true, true, false]))),
            (Op::Sub, raises(ErrorKind::Type, BOOL_SUBTRACT)),
            (Op::Mul, Ok(bools1(&[true, false, false, false]))),
            (Op::Div, Ok(f64s1(&[1.0, INF, 0.0, NAN]))),
            // numpy gives int8 here; without int8 the result is int64.
            (Op::Pow, Ok(i64s1(&[1, 1, 0, 1]))),
            (Op::Maximum, Ok(bools1(&[true, true, true, false]))),
            (Op::Minimum, Ok(bools1(&[true, false, false, false]))),
            (Op::BitAnd, Ok(bools1(&[true, false, false, false]))),
            (Op::BitOr, Ok(bools1(&[true, true, true, false]))),
            (Op::BitXor, Ok(bools1(&[false, true, true, false]))),
            // numpy gives int8 here; without int8 the result is int64.
            (Op::LShift, Ok(i64s1(&[2, 1, 0, 0]))),
            // numpy gives int8 here; without int8 the result is int64.
            (Op::RShift, Ok(i64s1(&[0, 1, 0, 0]))),
            (Op::Eq, Ok(bools1(&[true, false, false, true]))),
            (Op::Ne, Ok(bools1(&[false, true, true, false]))),
            (Op::Lt, Ok(bools1(&[false, false, true, false]))),
            (Op::Le, Ok(bools1(&[true, false, true, true]))),
            (Op::Gt, Ok(bools1(&[false, true, false, false]))),
            (Op::Ge, Ok(bools1(&[true, true, false, true]))),
        ],
    );
}

#[test]
fn each_op_on_int32() {
    check_on(
        I32,
        vec![
            (Op::Add, Ok(i32s1(&[9, -5, 5, -9, 3, 4, 2]))),
            (Op::Sub, Ok(i32s1(&[5, -9, 9, -5, -3, 6, -4]))),
            (Op::Mul, Ok(i32s1(&[14, -14, -14, 14, 0, -5, -3]))),
            (
                Op::Div,
                Ok(f64s1(&[
                    3.5,
                    -3.5,
                    -3.5,
                    3.5,
                    0.0,
                    -5.0,
                    -0.3333333333333333,
                ])),
            ),
            (Op::FloorDiv, Ok(i32s1(&[3, -4, -4, 3, 0, -5, -1]))),
            (Op::Mod, Ok(i32s1(&[1, 1, -1, -1, 0, 0, 2]))),
            (Op::Maximum, Ok(i32s1(&[7, 2, 7, -2, 3, 5, 3]))),
            (Op::Minimum, Ok(i32s1(&[2, -7, -2, -7, 0, -1, -1]))),
            (Op::BitAnd, Ok(i32s1(&[2, 0, 6, -8, 0, 5, 3]))),
            (Op::BitOr, Ok(i32s1(&[7, -5, -1, -1, 3, -1, -1]))),
            (Op::BitXor, Ok(i32s1(&[5, -5, -7, 7, 3, -6, -4]))),
            (
                Op::Eq,
                Ok(bools1(&[false, false, false, false, false, false, false])),
            ),
            (
                Op::Ne,
                Ok(bools1(&[true, true, true, true, true, true, true])),
            ),
            (
                Op::Lt,
                Ok(bools1(&[false, true, false, true, true, false, true])),
            ),
            (
                Op::Le,
                Ok(bools1(&[false, true, false, true, true, false, true])),
            ),
            (
                Op::Gt,
                Ok(bools1(&[true, false, true, false, false, true, false])),
            ),
            (
                Op::Ge,
                Ok(bools1(&[true, false, true, false, false, true, false])),
            ),
        ],
    );
}

#[test]
fn each_op_on_int64() {
    check_on(
        I64,
        vec![
            (Op::Add, Ok(i64s1(&[9, -5, 5, -9, 3, 4, 2]))),
            (Op::Sub, Ok(i64s1(&[5, -9, 9, -5, -3, 6, -4]))),
            (Op::Mul, Ok(i64s1(&[14, -14, -14, 14, 0, -5, -3]))),
            (
                Op::Div,
                Ok(f64s1(&[
                    3.5,
                    -3.5,
                    -3.5,
                    3.5,
                    0.0,
                    -5.0,
                    -0.3333333333333333,
                ])),
            ),
            (Op::FloorDiv, Ok(i64s1(&[3, -4, -4, 3, 0, -5, -1]))),
            (Op::Mod, Ok(i64s1(&[1, 1, -1, -1, 0, 0, 2]))),
            (Op::Maximum, Ok(i64s1(&[7, 2, 7, -2, 3, 5, 3]))),
            (Op::Minimum, Ok(i64s1(&[2, -7, -2, -7, 0, -1, -1]))),
            (Op::BitAnd, Ok(i64s1(&[2, 0, 6, -8, 0, 5, 3]))),
            (Op::BitOr, Ok(i64s1(&[7, -5, -1, -1, 3, -1, -1]))),
            (Op::BitXor, Ok(i64s1(&[5, -5, -7, 7, 3, -6, -4]))),
            (
                Op::Eq,
                Ok(bools1(&[false, false, false, false, false, false, false])),
            ),
            (
                Op::Ne,
                Ok(bools1(&[true, true, true, true, true, true, true])),
            ),
            (
                Op::Lt,
                Ok(bools1(&[false, true, false, true, true, false, true])),
            ),
            (
                Op::Le,
                Ok(bools1(&[false, true, false, true, true, false, true])),
            ),
            (
                Op::Gt,
                Ok(bools1(&[true, false, true, false, false, true, false])),
            ),
            (
                Op::Ge,
                Ok(bools1(&[true, false, true, false, false, true, false])),
            ),
        ],
    );
}

#[test]
fn each_op_on_float32() {
    check_on(
        F32,
        vec![
            (
                Op::Add,
                Ok(f32s1(&[
                    8.0, -2.0, 2.0, -8.0, 3.0, 3.0, INF32, -INF32, NAN32, 2.5, 8.0,
                ])),
            ),
            (
                Op::Sub,
                Ok(f32s1(&[
                    2.0, -8.0, 8.0, -2.0, -3.0, -3.0, INF32, NAN32, NAN32, 2.5, 7.0,
                ])),
            ),
            (
                Op::Mul,
                Ok(f32s1(&[
                    15.0, -15.0, -15.0, 15.0, 0.0, -0.0, INF32, INF32, NAN32, 0.0, 3.75,
                ])),
            ),
            (
                Op::Div,
                Ok(f32s1(&[
                    1.6666666, -1.6666666, -1.6666666, 1.6666666, 0.0, -0.0, INF32, NAN32, NAN32,
                    INF32, 15.0,
                ])),
            ),
            (
                Op::FloorDiv,
                Ok(f32s1(&[
                    1.0, -2.0, -2.0, 1.0, 0.0, -0.0, NAN32, NAN32, NAN32, INF32, 15.0,
                ])),
            ),
            (
                Op::Mod,
                Ok(f32s1(&[
                    2.0, 1.0, -1.0, -2.0, 0.0, 0.0, NAN32, NAN32, NAN32, NAN32, 0.0,
                ])),
            ),
            (
                Op::Maximum,
                Ok(f32s1(&[
                    5.0, 3.0, 5.0, -3.0, 3.0, 3.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ])),
            ),
            (
                Op::Minimum,
                Ok(f32s1(&[
                    3.0, -5.0, -3.0, -5.0, 0.0, -0.0, 3.0, -INF32, NAN32, 0.0, 0.5,
                ])),
            ),
            (Op::BitAnd, unsupported("bitwise_and")),
            (Op::BitOr, unsupported("bitwise_or")),
            (Op::BitXor, unsupported("bitwise_xor")),
            (Op::LShift, unsupported("left_shift")),
            (Op::RShift, unsupported("right_shift")),
            (
                Op::Eq,
                Ok(bools1(&[
                    false, false, false, false, false, false, false, true, false, false, false,
                ])),
            ),
            (
                Op::Ne,
                Ok(bools1(&[
                    true, true, true, true, true, true, true, false, true, true, true,
                ])),
            ),
            (
                Op::Lt,
                Ok(bools1(&[
                    false, true, false, true, true, true, false, false, false, false, false,
                ])),
            ),
            (
                Op::Le,
                Ok(bools1(&[
                    false, true, false, true, true, true, false, true, false, false, false,
                ])),
            ),
            (
                Op::Gt,
                Ok(bools1(&[
                    true, false, true, false, false, false, true, false, false, true, true,
                ])),
            ),
            (
                Op::Ge,
                Ok(bools1(&[
                    true, false, true, false, false, false, true, true, false, true, true,
                ])),
            ),
        ],
    );
}

#[test]
fn each_op_on_float64() {
    check_on(
        F64,
        vec![
            (
                Op::Add,
                Ok(f64s1(&[
                    8.0, -2.0, 2.0, -8.0, 3.0, 3.0, INF, -INF, NAN, 2.5, 8.0,
                ])),
            ),
            (
                Op::Sub,
                Ok(f64s1(&[
                    2.0, -8.0, 8.0, -2.0, -3.0, -3.0, INF, NAN, NAN, 2.5, 7.0,
                ])),
            ),
            (
                Op::Mul,
                Ok(f64s1(&[
                    15.0, -15.0, -15.0, 15.0, 0.0, -0.0, INF, INF, NAN, 0.0, 3.75,
                ])),
            ),
            (
                Op::Div,
                Ok(f64s1(&[
                    1.6666666666666667,
                    -1.6666666666666667,
                    -1.6666666666666667,
                    1.6666666666666667,
                    0.0,
                    -0.0,
                    INF,
                    NAN,
                    NAN,
                    INF,
                    15.0,
                ])),
            ),
            (
                Op::FloorDiv,
                Ok(f64s1(&[
                    1.0, -2.0, -2.0, 1.0, 0.0, -0.0, NAN, NAN, NAN, INF, 15.0,
                ])),
            ),
            (
                Op::Mod,
                Ok(f64s1(&[
                    2.0, 1.0, -1.0, -2.0, 0.0, 0.0, NAN, NAN, NAN, NAN, 0.0,
                ])),
            ),
            (
                Op::Maximum,
                Ok(f64s1(&[
                    5.0, 3.0, 5.0, -3.0, 3.0, 3.0, INF, -INF, NAN, 2.5, 7.5,
                ])),
            ),
            (
                Op::Minimum,
                Ok(f64s1(&[
                    3.0, -5.0, -3.0, -5.0, 0.0, -0.0, 3.0, -INF, NAN, 0.0, 0.5,
                ])),
            ),
            (Op::BitAnd, unsupported("bitwise_and")),
            (Op::BitOr, unsupported("bitwise_or")),
            (Op::BitXor, unsupported("bitwise_xor")),
            (Op::LShift, unsupported("left_shift")),
            (Op::RShift, unsupported("right_shift")),
            (
                Op::Eq,
                Ok(bools1(&[
                    false, false, false, false, false, false, false, true, false, false, false,
                ])),
            ),
            (
                Op::Ne,
                Ok(bools1(&[
                    true, true, true, true, true, true, true, false, true, true, true,
                ])),
            ),
            (
                Op::Lt,
                Ok(bools1(&[
                    false, true, false, true, true, true, false, false, false, false, false,
                ])),
            ),
            (
                Op::Le,
                Ok(bools1(&[
                    false, true, false, true, true, true, false, true, false, false, false,
                ])),
            ),
            (
                Op::Gt,
                Ok(bools1(&[
                    true, false, true, false, false, false, true, false, false, true, true,
                ])),
            ),
            (
                Op::Ge,
                Ok(bools1(&[
                    true, false, true, false, false, false, true, true, false, true, true,
                ])),
            ),
        ],
    );
}

/// Shifts, powers, and bool floor division and remainder, on operands that suit them.
#[test]
fn ops_on_operands_of_their_own() {
    check_binary(vec![
        // numpy gives int8 here; without int8 the result is int64.
        (
            Op::FloorDiv,
            (
                bools1(&[true, true, false, false]),
                bools1(&[true, true, true, true]),
            ),
            Ok(i64s1(&[1, 1, 0, 0])),
        ),
        // numpy gives int8 here; without int8 the result is int64.
        (
            Op::Mod,
            (
                bools1(&[true, true, false, false]),
                bools1(&[true, true, true, true]),
            ),
            Ok(i64s1(&[0, 0, 0, 0])),
        ),
        (
            Op::Pow,
            (
                i32s1(&[7, -7, 7, -7, 0, 5, -1]),
                i32s1(&[2, 3, 0, 1, 5, 2, 7]),
            ),
            Ok(i32s1(&[49, -343, 1, -7, 0, 25, -1])),
        ),
        (
            Op::Pow,
            (
                i64s1(&[7, -7, 7, -7, 0, 5, -1]),
                i64s1(&[2, 3, 0, 1, 5, 2, 7]),
            ),
            Ok(i64s1(&[49, -343, 1, -7, 0, 25, -1])),
        ),
        (
            Op::Pow,
            (
                f32s1(&[2.0, -2.0, 4.0, 0.0, NAN32, 1.5, -0.5, 10.0]),
                f32s1(&[3.0, 2.0, 0.5, 0.0, 0.0, 2.0, -1.0, -2.0]),
            ),
            Ok(f32s1(&[8.0, 4.0, 2.0, 1.0, 1.0, 2.25, -2.0, 0.01])),
        ),
        (
            Op::Pow,
            (
                f64s1(&[2.0, -2.0, 4.0, 0.0, NAN, 1.5, -0.5, 10.0]),
                f64s1(&[3.0, 2.0, 0.5, 0.0, 0.0, 2.0, -1.0, -2.0]),
            ),
            Ok(f64s1(&[8.0, 4.0, 2.0, 1.0, 1.0, 2.25, -2.0, 0.01])),
        ),
        (
            Op::LShift,
            (
                i32s1(&[7, -7, 7, -7, 0, 5, -1]),
                i32s1(&[1, 2, 0, 3, 31, 64, -1]),
            ),
            Ok(i32s1(&[14, -28, 7, -56, 0, 0, 0])),
        ),
        (
            Op::LShift,
            (
                i64s1(&[7, -7, 7, -7, 0, 5, -1]),
                i64s1(&[1, 2, 0, 3, 31, 64, -1]),
            ),
            Ok(i64s1(&[14, -28, 7, -56, 0, 0, 0])),
        ),
        (
            Op::RShift,
            (
                i32s1(&[7, -7, 7, -7, 0, 5, -1]),
                i32s1(&[1, 2, 0, 3, 31, 64, -1]),
            ),
            Ok(i32s1(&[3, -2, 7, -1, 0, 0, -1])),
        ),
        (
            Op::RShift,
            (
                i64s1(&[7, -7, 7, -7, 0, 5, -1]),
                i64s1(&[1, 2, 0, 3, 31, 64, -1]),
            ),
            Ok(i64s1(&[3, -2, 7, -1, 0, 0, -1])),
        ),
    ]);
}

#[test]
fn binary_errors() {
    check_binary(vec![
        // Deliberate deviation: numpy returns 0 with a warning.
        (
            Op::FloorDiv,
            (i32s1(&[7, -7, 1]), i32s1(&[2, 0, 1])),
            raises(
                ErrorKind::ZeroDivision,
                "integer division or modulo by zero",
            ),
        ),
        (
            Op::FloorDiv,
            (i64s1(&[7, -7, 1]), i64s1(&[2, 0, 1])),
            raises(
                ErrorKind::ZeroDivision,
                "integer division or modulo by zero",
            ),
        ),
        (
            Op::FloorDiv,
            (bools1(&[true]), bools1(&[false])),
            raises(
                ErrorKind::ZeroDivision,
                "integer division or modulo by zero",
            ),
        ),
        (
            Op::Mod,
            (i32s1(&[7, -7, 1]), i32s1(&[2, 0, 1])),
            raises(
                ErrorKind::ZeroDivision,
                "integer division or modulo by zero",
            ),
        ),
        (
            Op::Mod,
            (i64s1(&[7, -7, 1]), i64s1(&[2, 0, 1])),
            raises(
                ErrorKind::ZeroDivision,
                "integer division or modulo by zero",
            ),
        ),
        (
            Op::Mod,
            (bools1(&[true]), bools1(&[false])),
            raises(
                ErrorKind::ZeroDivision,
                "integer division or modulo by zero",
            ),
        ),
        // An empty result reads no divisor, so there is nothing to divide by zero.
        (Op::FloorDiv, (i64s1(&[]), i64s1(&[0])), Ok(i64s1(&[]))),
        (
            Op::Pow,
            (i32s1(&[2, 3]), i32s1(&[1, -1])),
            raises(
                ErrorKind::Value,
                "Integers to negative integer powers are not allowed.",
            ),
        ),
        (
            Op::Pow,
            (i64s1(&[2, 3]), i64s1(&[1, -1])),
            raises(
                ErrorKind::Value,
                "Integers to negative integer powers are not allowed.",
            ),
        ),
        (
            Op::BitAnd,
            (f64s1(&[1.0]), i32s1(&[1])),
            unsupported("bitwise_and"),
        ),
        (
            Op::BitOr,
            (f64s1(&[1.0]), i32s1(&[1])),
            unsupported("bitwise_or"),
        ),
        (
            Op::BitXor,
            (f64s1(&[1.0]), i32s1(&[1])),
            unsupported("bitwise_xor"),
        ),
        (
            Op::LShift,
            (f64s1(&[1.0]), i32s1(&[1])),
            unsupported("left_shift"),
        ),
        (
            Op::RShift,
            (f64s1(&[1.0]), i32s1(&[1])),
            unsupported("right_shift"),
        ),
        (
            Op::Sub,
            (bools1(&[true]), bools1(&[true])),
            raises(ErrorKind::Type, BOOL_SUBTRACT),
        ),
        (
            Op::Add,
            (f64s1(&[1.0, 2.0]), f64s1(&[1.0, 2.0, 3.0])),
            raises(
                ErrorKind::Value,
                "operands could not be broadcast together with shapes (2,) (3,) ",
            ),
        ),
    ]);
}

/// int32 - float32 computes in float64; shapes broadcast as in numpy.
#[test]
fn broadcasting() {
    check_binary(vec![
        (
            Op::Sub,
            (
                i32s(&[3, -5, -4, -3, -4, 3], &[2, 3]),
                f32s1(&[9.0, 2.0, -11.75]),
            ),
            Ok(f64s(&[-6.0, -7.0, 7.75, -12.0, -6.0, 14.75], &[2, 3])),
        ),
        (
            Op::Sub,
            (
                i32s(&[-5, -2], &[2, 1]),
                f32s(&[-1.75, 3.0, -0.75], &[1, 3]),
            ),
            Ok(f64s(&[-3.25, -8.0, -4.25, -0.25, -5.0, -1.25], &[2, 3])),
        ),
        (
            Op::Sub,
            (i32s1(&[-3, -4, 1]), f32s(&[5.75], &[])),
            Ok(f64s1(&[-8.75, -9.75, -4.75])),
        ),
        (
            Op::Sub,
            (i32s(&[-5], &[]), f32s(&[-9.75], &[])),
            Ok(f64s(&[4.75], &[])),
        ),
        (
            Op::Sub,
            (i32s(&[-1], &[]), f32s(&[-2.75, 9.5, 0.25, -2.0], &[2, 2])),
            Ok(f64s(&[1.75, -10.5, -1.25, 1.0], &[2, 2])),
        ),
        (
            Op::Sub,
            (i32s(&[], &[0, 3]), f32s1(&[-1.75, 4.0, 2.0])),
            Ok(f64s(&[], &[0, 3])),
        ),
        (
            Op::Sub,
            (i32s(&[], &[2, 0]), f32s1(&[-8.25])),
            Ok(f64s(&[], &[2, 0])),
        ),
        (Op::Sub, (i32s1(&[2]), f32s1(&[])), Ok(f64s1(&[]))),
        (
            Op::Sub,
            (
                i32s(&[2, 4, 2, -3, -2, 1, 1, 1], &[4, 1, 2]),
                f32s(&[9.0, -5.25, 10.75], &[3, 1]),
            ),
            Ok(f64s(
                &[
                    -7.0, -5.0, 7.25, 9.25, -8.75, -6.75, -7.0, -12.0, 7.25, 2.25, -8.75, -13.75,
                    -11.0, -8.0, 3.25, 6.25, -12.75, -9.75, -8.0, -8.0, 6.25, 6.25, -9.75, -9.75,
                ],
                &[4, 3, 2],
            )),
        ),
        (
            Op::Sub,
            (
                i32s(&[-5, -5, 4, 4, -3, -4], &[2, 3]),
                f32s1(&[-4.75, -11.5, 9.75, 4.0]),
            ),
            raises(
                ErrorKind::Value,
                "operands could not be broadcast together with shapes (2,3) (4,) ",
            ),
        ),
        (
            Op::Sub,
            (
                i32s(&[0, -3, -1, -4, 2, -1], &[2, 1, 3]),
                f32s(&[-11.75, -6.25, 5.0, 0.25, -3.25, -6.25], &[2, 3, 1]),
            ),
            Ok(f64s(
                &[
                    11.75, 8.75, 10.75, 6.25, 3.25, 5.25, -5.0, -8.0, -6.0, -4.25, 1.75, -1.25,
                    -0.75, 5.25, 2.25, 2.25, 8.25, 5.25,
                ],
                &[2, 3, 3],
            )),
        ),
        (
            Op::Sub,
            (i32s(&[-5], &[1, 1]), f32s1(&[2.5])),
            Ok(f64s(&[-7.5], &[1, 1])),
        ),
        (Op::Sub, (i32s1(&[]), f32s1(&[])), Ok(f64s1(&[]))),
        (
            Op::Sub,
            (i32s(&[1, 0, 4], &[3, 1]), f32s1(&[])),
            Ok(f64s(&[], &[3, 0])),
        ),
    ]);
}

#[test]
fn where_broadcasts_and_promotes() {
    let rows: Vec<((Tensor, Tensor, Tensor), Expected)> = vec![
        (
            (f64s1(&[1.5, 0.0, NAN]), i32s1(&[1]), f32s1(&[2.5])),
            Ok(f64s1(&[1.0, 2.5, 1.0])),
        ),
        (
            (
                bools(&[true, false], &[2, 1]),
                i64s1(&[1, 2, 3]),
                i64s(&[-1], &[]),
            ),
            Ok(i64s(&[1, 2, 3, -1, -1, -1], &[2, 3])),
        ),
        (
            (bools(&[true], &[]), i32s1(&[1, 2]), bools1(&[true, false])),
            Ok(i32s1(&[1, 2])),
        ),
        (
            (
                i64s1(&[0, 3, -1]),
                f64s(&[7.5], &[]),
                f64s1(&[1.0, 2.0, 3.0]),
            ),
            Ok(f64s1(&[1.0, 7.5, 7.5])),
        ),
        (
            (
                f64s1(&[0.0, 0.0]),
                f64s1(&[0.0, 0.0, 0.0]),
                f64s1(&[0.0, 0.0, 0.0, 0.0]),
            ),
            raises(
                ErrorKind::Value,
                "operands could not be broadcast together with shapes (2,) (3,) (4,) ",
            ),
        ),
    ];
    check_rows(rows.into_iter().map(|((c, x, y), want)| {
        (
            format!("where({c:?}, {x:?}, {y:?})"),
            Tensor::where_(&c, &x, &y),
            want,
        )
    }));
}

/// NEP 50: Python scalars adopt the tensor's dtype where they can.
#[test]
fn weak_python_scalars() {
    // (op, tensor, Python scalar, whether the scalar comes first, result)
    let rows: Vec<(Op, Tensor, Scalar, bool, Expected)> = vec![
        (
            Op::Add,
            bools1(&[true, false]),
            Scalar::Int(1),
            false,
            Ok(i64s1(&[2, 1])),
        ),
        (
            Op::Add,
            bools1(&[true, false]),
            Scalar::Bool(true),
            false,
            Ok(bools1(&[true, true])),
        ),
        (
            Op::Mul,
            bools1(&[true, false]),
            Scalar::Bool(true),
            false,
            Ok(bools1(&[true, false])),
        ),
        (
            Op::Add,
            bools1(&[true, false]),
            Scalar::Float(1.5),
            false,
            Ok(f64s1(&[2.5, 1.5])),
        ),
        (
            Op::Add,
            i32s1(&[1, -2]),
            Scalar::Int(2),
            false,
            Ok(i32s1(&[3, 0])),
        ),
        (
            Op::Add,
            i32s1(&[1, -2]),
            Scalar::Int(3000000000),
            false,
            raises(
                ErrorKind::Overflow,
                "Python integer 3000000000 out of bounds for int32",
            ),
        ),
        (
            Op::Sub,
            i32s1(&[1, -2]),
            Scalar::Bool(true),
            false,
            Ok(i32s1(&[0, -3])),
        ),
        (
            Op::Add,
            i64s1(&[1, -2]),
            Scalar::Float(2.5),
            false,
            Ok(f64s1(&[3.5, 0.5])),
        ),
        (
            Op::Add,
            i32s1(&[1, -2]),
            Scalar::Float(2.5),
            false,
            Ok(f64s1(&[3.5, 0.5])),
        ),
        (
            Op::Add,
            f32s1(&[1.5, -2.5]),
            Scalar::Int(2),
            false,
            Ok(f32s1(&[3.5, -0.5])),
        ),
        (
            Op::Add,
            f32s1(&[1.5, -2.5]),
            Scalar::Float(2.5),
            false,
            Ok(f32s1(&[4.0, 0.0])),
        ),
        (
            Op::Add,
            f32s1(&[0.1]),
            Scalar::Float(0.1),
            false,
            Ok(f32s1(&[0.2])),
        ),
        (
            Op::Add,
            f64s1(&[0.1]),
            Scalar::Float(0.1),
            false,
            Ok(f64s1(&[0.2])),
        ),
        (
            Op::Add,
            f32s1(&[1.0]),
            Scalar::Float(1e+300),
            false,
            Ok(f32s1(&[INF32])),
        ),
        (
            Op::Mul,
            i64s1(&[3]),
            Scalar::Int(-1099511627776),
            false,
            Ok(i64s1(&[-3298534883328])),
        ),
        (
            Op::Sub,
            i64s1(&[1, 5]),
            Scalar::Int(10),
            true,
            Ok(i64s1(&[9, 5])),
        ),
        (
            Op::Sub,
            f32s1(&[1.5]),
            Scalar::Int(1),
            true,
            Ok(f32s1(&[-0.5])),
        ),
        (
            Op::Div,
            i64s1(&[1, 2, 0]),
            Scalar::Int(2),
            true,
            Ok(f64s1(&[2.0, 1.0, INF])),
        ),
        (
            Op::Div,
            i32s1(&[4, -8]),
            Scalar::Int(2),
            false,
            Ok(f64s1(&[2.0, -4.0])),
        ),
        (
            Op::Div,
            i32s1(&[1, -2]),
            Scalar::Int(3000000000),
            false,
            Ok(f64s1(&[3.333333333333333e-10, -6.666666666666666e-10])),
        ),
        (
            Op::Div,
            f32s1(&[3.0]),
            Scalar::Int(2),
            false,
            Ok(f32s1(&[1.5])),
        ),
        (
            Op::Div,
            bools1(&[true, false]),
            Scalar::Int(3),
            true,
            Ok(f64s1(&[3.0, INF])),
        ),
        (
            Op::Pow,
            i64s1(&[1, 2, 3]),
            Scalar::Int(2),
            true,
            Ok(i64s1(&[2, 4, 8])),
        ),
        (
            Op::Pow,
            i64s1(&[1, 2, 3]),
            Scalar::Int(2),
            false,
            Ok(i64s1(&[1, 4, 9])),
        ),
        (
            Op::Pow,
            i32s1(&[1, -2]),
            Scalar::Int(-1),
            false,
            raises(
                ErrorKind::Value,
                "Integers to negative integer powers are not allowed.",
            ),
        ),
        (
            Op::Pow,
            i64s1(&[1, -2]),
            Scalar::Int(3),
            true,
            raises(
                ErrorKind::Value,
                "Integers to negative integer powers are not allowed.",
            ),
        ),
        (
            Op::Pow,
            f32s1(&[4.0, 0.25]),
            Scalar::Float(0.5),
            false,
            Ok(f32s1(&[2.0, 0.5])),
        ),
        // numpy gives int8 here; without int8 the result is int64.
        (
            Op::Pow,
            bools1(&[true, false]),
            Scalar::Bool(true),
            true,
            Ok(i64s1(&[1, 1])),
        ),
        (
            Op::Mod,
            i64s1(&[7, -7]),
            Scalar::Int(3),
            false,
            Ok(i64s1(&[1, 2])),
        ),
        (
            Op::Mod,
            i64s1(&[3, -3]),
            Scalar::Int(7),
            true,
            Ok(i64s1(&[1, -2])),
        ),
        (
            Op::FloorDiv,
            i64s1(&[7, -7]),
            Scalar::Int(-2),
            false,
            Ok(i64s1(&[-4, 3])),
        ),
        (
            Op::FloorDiv,
            f64s1(&[7.5, -7.5]),
            Scalar::Int(2),
            false,
            Ok(f64s1(&[3.0, -4.0])),
        ),
        (
            Op::Mod,
            f32s1(&[7.5, -7.5]),
            Scalar::Int(2),
            false,
            Ok(f32s1(&[1.5, 0.5])),
        ),
        (
            Op::Mod,
            f64s1(&[2.0, -3.0]),
            Scalar::Float(-7.5),
            true,
            Ok(f64s1(&[0.5, -1.5])),
        ),
        (
            Op::Lt,
            i32s1(&[1, -2]),
            Scalar::Int(3000000000),
            false,
            Ok(bools1(&[true, true])),
        ),
        (
            Op::Gt,
            i32s1(&[1, -2]),
            Scalar::Int(3000000000),
            true,
            Ok(bools1(&[true, true])),
        ),
        (
            Op::Eq,
            i32s1(&[1, -2]),
            Scalar::Int(-2),
            false,
            Ok(bools1(&[false, true])),
        ),
        (
            Op::Lt,
            bools1(&[true, false]),
            Scalar::Int(2),
            false,
            Ok(bools1(&[true, true])),
        ),
        (
            Op::Eq,
            bools1(&[true, false]),
            Scalar::Bool(true),
            false,
            Ok(bools1(&[true, false])),
        ),
        (
            Op::Eq,
            f32s1(&[1.6777216e+07]),
            Scalar::Int(16777217),
            false,
            Ok(bools1(&[true])),
        ),
        (
            Op::Eq,
            f32s1(&[0.1]),
            Scalar::Float(0.1),
            false,
            Ok(bools1(&[true])),
        ),
        (
            Op::Ge,
            f64s1(&[0.5, NAN]),
            Scalar::Float(0.5),
            true,
            Ok(bools1(&[true, false])),
        ),
        (
            Op::BitAnd,
            i64s1(&[6, 5]),
            Scalar::Int(3),
            false,
            Ok(i64s1(&[2, 1])),
        ),
        (
            Op::BitAnd,
            i64s1(&[6, 5]),
            Scalar::Float(1.0),
            false,
            unsupported("bitwise_and"),
        ),
        (
            Op::BitOr,
            bools1(&[true, false]),
            Scalar::Int(2),
            false,
            Ok(i64s1(&[3, 2])),
        ),
        (
            Op::BitXor,
            bools1(&[true, false]),
            Scalar::Bool(true),
            false,
            Ok(bools1(&[false, true])),
        ),
        (
            Op::LShift,
            i64s1(&[1, 2]),
            Scalar::Int(5),
            true,
            Ok(i64s1(&[10, 20])),
        ),
        (
            Op::RShift,
            i32s1(&[-8, 8]),
            Scalar::Int(1),
            false,
            Ok(i32s1(&[-4, 4])),
        ),
        (
            Op::Maximum,
            i32s1(&[1, -2]),
            Scalar::Int(0),
            false,
            Ok(i32s1(&[1, 0])),
        ),
        (
            Op::Minimum,
            f32s1(&[NAN32, 1.0]),
            Scalar::Float(0.5),
            false,
            Ok(f32s1(&[NAN32, 0.5])),
        ),
        (
            Op::Sub,
            bools1(&[true]),
            Scalar::Bool(true),
            false,
            raises(ErrorKind::Type, BOOL_SUBTRACT),
        ),
        (
            Op::Add,
            i32s1(&[2147483647]),
            Scalar::Int(1),
            false,
            Ok(i32s1(&[-2147483648])),
        ),
    ];
    check_rows(rows.into_iter().map(|(op, t, s, first, want)| {
        let got = Tensor::binary_scalar(op, &t, s, first);
        (
            format!("{op:?} of {t:?} and {s:?} (scalar first: {first})"),
            got,
            want,
        )
    }));
}

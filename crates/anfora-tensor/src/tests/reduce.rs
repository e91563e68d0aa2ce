//! Reductions.
//!
//! Each test is a table: inputs, each with the reductions to run on it (the op, the axes,
//! keepdims) and the expected tensor or error.

use super::*;
use crate::DType::{Bool, F32, F64, I32, I64};
use crate::ReduceOp as Op;

/// A reduction of a table row: the op, the axes, keepdims and what it gives.
type ReduceCase = (Op, Option<&'static [i64]>, bool, Expected);

/// Runs every reduction of every input.
#[track_caller]
fn check_reduce(inputs: Vec<(Tensor, Vec<ReduceCase>)>) {
    check_rows(inputs.into_iter().flat_map(|(x, rows)| {
        rows.into_iter().map(move |(op, axes, keepdims, want)| {
            let what = format!("{op:?} of {x:?} over {axes:?}, keepdims {keepdims}");
            (what, Tensor::reduce(op, &x, axes, keepdims), want)
        })
    }));
}

/// The 2×3 input of the per-dtype tables.
fn two_by_three(dtype: DType) -> Tensor {
    match dtype {
        Bool => bools(&[true, false, true, true, false, true], &[2, 3]),
        I32 => i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
        I64 => i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
        F32 => f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
        F64 => f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
        _ => unreachable!("no input of {dtype}"),
    }
}

/// Asserts float32 elements by bit pattern: `(flat index, f32 bits)`.
#[track_caller]
fn bits32(t: &Tensor, expected: &[(usize, u32)]) {
    let v = t.as_f32_slice().expect("float32 result");
    for &(i, bits) in expected {
        assert_eq!(
            v[i].to_bits(),
            bits,
            "element {i}: {} vs {}",
            v[i],
            f32::from_bits(bits)
        );
    }
}

#[test]
fn sum_axes_and_dtypes() {
    check_reduce(vec![
        (
            two_by_three(Bool),
            vec![
                (Op::Sum, None, false, Ok(i64s(&[4], &[]))),
                (Op::Sum, Some(&[0]), false, Ok(i64s1(&[2, 0, 2]))),
                (Op::Sum, Some(&[1]), true, Ok(i64s(&[2, 2], &[2, 1]))),
                (Op::Sum, Some(&[-1]), false, Ok(i64s1(&[2, 2]))),
                (Op::Sum, Some(&[0, 1]), true, Ok(i64s(&[4], &[1, 1]))),
                (
                    Op::Sum,
                    Some(&[]),
                    false,
                    Ok(i64s(&[1, 0, 1, 1, 0, 1], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(I32),
            vec![
                (Op::Sum, None, false, Ok(i64s(&[11], &[]))),
                (Op::Sum, Some(&[0]), false, Ok(i64s1(&[4, -6, 13]))),
                (Op::Sum, Some(&[1]), true, Ok(i64s(&[6, 5], &[2, 1]))),
                (Op::Sum, Some(&[-1]), false, Ok(i64s1(&[6, 5]))),
                (Op::Sum, Some(&[0, 1]), true, Ok(i64s(&[11], &[1, 1]))),
                (
                    Op::Sum,
                    Some(&[]),
                    false,
                    Ok(i64s(&[3, -1, 4, 1, -5, 9], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(I64),
            vec![
                (Op::Sum, None, false, Ok(i64s(&[11], &[]))),
                (Op::Sum, Some(&[0]), false, Ok(i64s1(&[4, -6, 13]))),
                (Op::Sum, Some(&[1]), true, Ok(i64s(&[6, 5], &[2, 1]))),
                (Op::Sum, Some(&[-1]), false, Ok(i64s1(&[6, 5]))),
                (Op::Sum, Some(&[0, 1]), true, Ok(i64s(&[11], &[1, 1]))),
                (
                    Op::Sum,
                    Some(&[]),
                    false,
                    Ok(i64s(&[3, -1, 4, 1, -5, 9], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(F32),
            vec![
                (Op::Sum, None, false, Ok(f32s(&[8.375], &[]))),
                (Op::Sum, Some(&[0]), false, Ok(f32s1(&[9.5, -3.5, 2.375]))),
                (Op::Sum, Some(&[1]), true, Ok(f32s(&[3.25, 5.125], &[2, 1]))),
                (Op::Sum, Some(&[-1]), false, Ok(f32s1(&[3.25, 5.125]))),
                (Op::Sum, Some(&[0, 1]), true, Ok(f32s(&[8.375], &[1, 1]))),
                (
                    Op::Sum,
                    Some(&[]),
                    false,
                    Ok(f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(F64),
            vec![
                (Op::Sum, None, false, Ok(f64s(&[8.375], &[]))),
                (Op::Sum, Some(&[0]), false, Ok(f64s1(&[9.5, -3.5, 2.375]))),
                (Op::Sum, Some(&[1]), true, Ok(f64s(&[3.25, 5.125], &[2, 1]))),
                (Op::Sum, Some(&[-1]), false, Ok(f64s1(&[3.25, 5.125]))),
                (Op::Sum, Some(&[0, 1]), true, Ok(f64s(&[8.375], &[1, 1]))),
                (
                    Op::Sum,
                    Some(&[]),
                    false,
                    Ok(f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3])),
                ),
            ],
        ),
    ]);
}

#[test]
fn mean_axes_and_dtypes() {
    check_reduce(vec![
        (
            two_by_three(Bool),
            vec![
                (Op::Mean, None, false, Ok(f64s(&[0.6666666666666666], &[]))),
                (Op::Mean, Some(&[0]), false, Ok(f64s1(&[1.0, 0.0, 1.0]))),
                (
                    Op::Mean,
                    Some(&[1]),
                    true,
                    Ok(f64s(&[0.6666666666666666, 0.6666666666666666], &[2, 1])),
                ),
                (
                    Op::Mean,
                    Some(&[-1]),
                    false,
                    Ok(f64s1(&[0.6666666666666666, 0.6666666666666666])),
                ),
                (
                    Op::Mean,
                    Some(&[0, 1]),
                    true,
                    Ok(f64s(&[0.6666666666666666], &[1, 1])),
                ),
                (
                    Op::Mean,
                    Some(&[]),
                    false,
                    Ok(f64s(&[1.0, 0.0, 1.0, 1.0, 0.0, 1.0], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(I32),
            vec![
                (Op::Mean, None, false, Ok(f64s(&[1.8333333333333333], &[]))),
                (Op::Mean, Some(&[0]), false, Ok(f64s1(&[2.0, -3.0, 6.5]))),
                (
                    Op::Mean,
                    Some(&[1]),
                    true,
                    Ok(f64s(&[2.0, 1.6666666666666667], &[2, 1])),
                ),
                (
                    Op::Mean,
                    Some(&[-1]),
                    false,
                    Ok(f64s1(&[2.0, 1.6666666666666667])),
                ),
                (
                    Op::Mean,
                    Some(&[0, 1]),
                    true,
                    Ok(f64s(&[1.8333333333333333], &[1, 1])),
                ),
                (
                    Op::Mean,
                    Some(&[]),
                    false,
                    Ok(f64s(&[3.0, -1.0, 4.0, 1.0, -5.0, 9.0], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(I64),
            vec![
                (Op::Mean, None, false, Ok(f64s(&[1.8333333333333333], &[]))),
                (Op::Mean, Some(&[0]), false, Ok(f64s1(&[2.0, -3.0, 6.5]))),
                (
                    Op::Mean,
                    Some(&[1]),
                    true,
                    Ok(f64s(&[2.0, 1.6666666666666667], &[2, 1])),
                ),
                (
                    Op::Mean,
                    Some(&[-1]),
                    false,
                    Ok(f64s1(&[2.0, 1.6666666666666667])),
                ),
                (
                    Op::Mean,
                    Some(&[0, 1]),
                    true,
                    Ok(f64s(&[1.8333333333333333], &[1, 1])),
                ),
                (
                    Op::Mean,
                    Some(&[]),
                    false,
                    Ok(f64s(&[3.0, -1.0, 4.0, 1.0, -5.0, 9.0], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(F32),
            vec![
                (Op::Mean, None, false, Ok(f32s(&[1.3958334], &[]))),
                (
                    Op::Mean,
                    Some(&[0]),
                    false,
                    Ok(f32s1(&[4.75, -1.75, 1.1875])),
                ),
                (
                    Op::Mean,
                    Some(&[1]),
                    true,
                    Ok(f32s(&[1.0833334, 1.7083334], &[2, 1])),
                ),
                (
                    Op::Mean,
                    Some(&[-1]),
                    false,
                    Ok(f32s1(&[1.0833334, 1.7083334])),
                ),
                (
                    Op::Mean,
                    Some(&[0, 1]),
                    true,
                    Ok(f32s(&[1.3958334], &[1, 1])),
                ),
                (
                    Op::Mean,
                    Some(&[]),
                    false,
                    Ok(f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(F64),
            vec![
                (Op::Mean, None, false, Ok(f64s(&[1.3958333333333333], &[]))),
                (
                    Op::Mean,
                    Some(&[0]),
                    false,
                    Ok(f64s1(&[4.75, -1.75, 1.1875])),
                ),
                (
                    Op::Mean,
                    Some(&[1]),
                    true,
                    Ok(f64s(&[1.0833333333333333, 1.7083333333333333], &[2, 1])),
                ),
                (
                    Op::Mean,
                    Some(&[-1]),
                    false,
                    Ok(f64s1(&[1.0833333333333333, 1.7083333333333333])),
                ),
                (
                    Op::Mean,
                    Some(&[0, 1]),
                    true,
                    Ok(f64s(&[1.3958333333333333], &[1, 1])),
                ),
                (
                    Op::Mean,
                    Some(&[]),
                    false,
                    Ok(f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3])),
                ),
            ],
        ),
    ]);
}

#[test]
fn max_axes_and_dtypes() {
    check_reduce(vec![
        (
            two_by_three(Bool),
            vec![
                (Op::Max, None, false, Ok(bools(&[true], &[]))),
                (Op::Max, Some(&[0]), false, Ok(bools1(&[true, false, true]))),
                (Op::Max, Some(&[1]), true, Ok(bools(&[true, true], &[2, 1]))),
                (Op::Max, Some(&[-1]), false, Ok(bools1(&[true, true]))),
                (Op::Max, Some(&[0, 1]), true, Ok(bools(&[true], &[1, 1]))),
                (
                    Op::Max,
                    Some(&[]),
                    false,
                    Ok(bools(&[true, false, true, true, false, true], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(I32),
            vec![
                (Op::Max, None, false, Ok(i32s(&[9], &[]))),
                (Op::Max, Some(&[0]), false, Ok(i32s1(&[3, -1, 9]))),
                (Op::Max, Some(&[1]), true, Ok(i32s(&[4, 9], &[2, 1]))),
                (Op::Max, Some(&[-1]), false, Ok(i32s1(&[4, 9]))),
                (Op::Max, Some(&[0, 1]), true, Ok(i32s(&[9], &[1, 1]))),
                (
                    Op::Max,
                    Some(&[]),
                    false,
                    Ok(i32s(&[3, -1, 4, 1, -5, 9], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(I64),
            vec![
                (Op::Max, None, false, Ok(i64s(&[9], &[]))),
                (Op::Max, Some(&[0]), false, Ok(i64s1(&[3, -1, 9]))),
                (Op::Max, Some(&[1]), true, Ok(i64s(&[4, 9], &[2, 1]))),
                (Op::Max, Some(&[-1]), false, Ok(i64s1(&[4, 9]))),
                (Op::Max, Some(&[0, 1]), true, Ok(i64s(&[9], &[1, 1]))),
                (
                    Op::Max,
                    Some(&[]),
                    false,
                    Ok(i64s(&[3, -1, 4, 1, -5, 9], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(F32),
            vec![
                (Op::Max, None, false, Ok(f32s(&[8.0], &[]))),
                (Op::Max, Some(&[0]), false, Ok(f32s1(&[8.0, -0.5, 2.25]))),
                (Op::Max, Some(&[1]), true, Ok(f32s(&[2.25, 8.0], &[2, 1]))),
                (Op::Max, Some(&[-1]), false, Ok(f32s1(&[2.25, 8.0]))),
                (Op::Max, Some(&[0, 1]), true, Ok(f32s(&[8.0], &[1, 1]))),
                (
                    Op::Max,
                    Some(&[]),
                    false,
                    Ok(f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(F64),
            vec![
                (Op::Max, None, false, Ok(f64s(&[8.0], &[]))),
                (Op::Max, Some(&[0]), false, Ok(f64s1(&[8.0, -0.5, 2.25]))),
                (Op::Max, Some(&[1]), true, Ok(f64s(&[2.25, 8.0], &[2, 1]))),
                (Op::Max, Some(&[-1]), false, Ok(f64s1(&[2.25, 8.0]))),
                (Op::Max, Some(&[0, 1]), true, Ok(f64s(&[8.0], &[1, 1]))),
                (
                    Op::Max,
                    Some(&[]),
                    false,
                    Ok(f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3])),
                ),
            ],
        ),
    ]);
}

#[test]
fn min_axes_and_dtypes() {
    check_reduce(vec![
        (
            two_by_three(Bool),
            vec![
                (Op::Min, None, false, Ok(bools(&[false], &[]))),
                (Op::Min, Some(&[0]), false, Ok(bools1(&[true, false, true]))),
                (
                    Op::Min,
                    Some(&[1]),
                    true,
                    Ok(bools(&[false, false], &[2, 1])),
                ),
                (Op::Min, Some(&[-1]), false, Ok(bools1(&[false, false]))),
                (Op::Min, Some(&[0, 1]), true, Ok(bools(&[false], &[1, 1]))),
                (
                    Op::Min,
                    Some(&[]),
                    false,
                    Ok(bools(&[true, false, true, true, false, true], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(I32),
            vec![
                (Op::Min, None, false, Ok(i32s(&[-5], &[]))),
                (Op::Min, Some(&[0]), false, Ok(i32s1(&[1, -5, 4]))),
                (Op::Min, Some(&[1]), true, Ok(i32s(&[-1, -5], &[2, 1]))),
                (Op::Min, Some(&[-1]), false, Ok(i32s1(&[-1, -5]))),
                (Op::Min, Some(&[0, 1]), true, Ok(i32s(&[-5], &[1, 1]))),
                (
                    Op::Min,
                    Some(&[]),
                    false,
                    Ok(i32s(&[3, -1, 4, 1, -5, 9], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(I64),
            vec![
                (Op::Min, None, false, Ok(i64s(&[-5], &[]))),
                (Op::Min, Some(&[0]), false, Ok(i64s1(&[1, -5, 4]))),
                (Op::Min, Some(&[1]), true, Ok(i64s(&[-1, -5], &[2, 1]))),
                (Op::Min, Some(&[-1]), false, Ok(i64s1(&[-1, -5]))),
                (Op::Min, Some(&[0, 1]), true, Ok(i64s(&[-5], &[1, 1]))),
                (
                    Op::Min,
                    Some(&[]),
                    false,
                    Ok(i64s(&[3, -1, 4, 1, -5, 9], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(F32),
            vec![
                (Op::Min, None, false, Ok(f32s(&[-3.0], &[]))),
                (Op::Min, Some(&[0]), false, Ok(f32s1(&[1.5, -3.0, 0.125]))),
                (Op::Min, Some(&[1]), true, Ok(f32s(&[-0.5, -3.0], &[2, 1]))),
                (Op::Min, Some(&[-1]), false, Ok(f32s1(&[-0.5, -3.0]))),
                (Op::Min, Some(&[0, 1]), true, Ok(f32s(&[-3.0], &[1, 1]))),
                (
                    Op::Min,
                    Some(&[]),
                    false,
                    Ok(f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(F64),
            vec![
                (Op::Min, None, false, Ok(f64s(&[-3.0], &[]))),
                (Op::Min, Some(&[0]), false, Ok(f64s1(&[1.5, -3.0, 0.125]))),
                (Op::Min, Some(&[1]), true, Ok(f64s(&[-0.5, -3.0], &[2, 1]))),
                (Op::Min, Some(&[-1]), false, Ok(f64s1(&[-0.5, -3.0]))),
                (Op::Min, Some(&[0, 1]), true, Ok(f64s(&[-3.0], &[1, 1]))),
                (
                    Op::Min,
                    Some(&[]),
                    false,
                    Ok(f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3])),
                ),
            ],
        ),
    ]);
}

#[test]
fn prod_axes_and_dtypes() {
    check_reduce(vec![
        (
            two_by_three(Bool),
            vec![
                (Op::Prod, None, false, Ok(i64s(&[0], &[]))),
                (Op::Prod, Some(&[0]), false, Ok(i64s1(&[1, 0, 1]))),
                (Op::Prod, Some(&[1]), true, Ok(i64s(&[0, 0], &[2, 1]))),
                (Op::Prod, Some(&[-1]), false, Ok(i64s1(&[0, 0]))),
                (Op::Prod, Some(&[0, 1]), true, Ok(i64s(&[0], &[1, 1]))),
                (
                    Op::Prod,
                    Some(&[]),
                    false,
                    Ok(i64s(&[1, 0, 1, 1, 0, 1], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(I32),
            vec![
                (Op::Prod, None, false, Ok(i64s(&[540], &[]))),
                (Op::Prod, Some(&[0]), false, Ok(i64s1(&[3, 5, 36]))),
                (Op::Prod, Some(&[1]), true, Ok(i64s(&[-12, -45], &[2, 1]))),
                (Op::Prod, Some(&[-1]), false, Ok(i64s1(&[-12, -45]))),
                (Op::Prod, Some(&[0, 1]), true, Ok(i64s(&[540], &[1, 1]))),
                (
                    Op::Prod,
                    Some(&[]),
                    false,
                    Ok(i64s(&[3, -1, 4, 1, -5, 9], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(I64),
            vec![
                (Op::Prod, None, false, Ok(i64s(&[540], &[]))),
                (Op::Prod, Some(&[0]), false, Ok(i64s1(&[3, 5, 36]))),
                (Op::Prod, Some(&[1]), true, Ok(i64s(&[-12, -45], &[2, 1]))),
                (Op::Prod, Some(&[-1]), false, Ok(i64s1(&[-12, -45]))),
                (Op::Prod, Some(&[0, 1]), true, Ok(i64s(&[540], &[1, 1]))),
                (
                    Op::Prod,
                    Some(&[]),
                    false,
                    Ok(i64s(&[3, -1, 4, 1, -5, 9], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(F32),
            vec![
                (Op::Prod, None, false, Ok(f32s(&[5.0625], &[]))),
                (
                    Op::Prod,
                    Some(&[0]),
                    false,
                    Ok(f32s1(&[12.0, 1.5, 0.28125])),
                ),
                (
                    Op::Prod,
                    Some(&[1]),
                    true,
                    Ok(f32s(&[-1.6875, -3.0], &[2, 1])),
                ),
                (Op::Prod, Some(&[-1]), false, Ok(f32s1(&[-1.6875, -3.0]))),
                (Op::Prod, Some(&[0, 1]), true, Ok(f32s(&[5.0625], &[1, 1]))),
                (
                    Op::Prod,
                    Some(&[]),
                    false,
                    Ok(f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3])),
                ),
            ],
        ),
        (
            two_by_three(F64),
            vec![
                (Op::Prod, None, false, Ok(f64s(&[5.0625], &[]))),
                (
                    Op::Prod,
                    Some(&[0]),
                    false,
                    Ok(f64s1(&[12.0, 1.5, 0.28125])),
                ),
                (
                    Op::Prod,
                    Some(&[1]),
                    true,
                    Ok(f64s(&[-1.6875, -3.0], &[2, 1])),
                ),
                (Op::Prod, Some(&[-1]), false, Ok(f64s1(&[-1.6875, -3.0]))),
                (Op::Prod, Some(&[0, 1]), true, Ok(f64s(&[5.0625], &[1, 1]))),
                (
                    Op::Prod,
                    Some(&[]),
                    false,
                    Ok(f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3])),
                ),
            ],
        ),
    ]);
}

#[test]
fn three_dim_axis_sets() {
    check_reduce(vec![(
        div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
        vec![
            (Op::Sum, Some(&[0, 2]), false, Ok(f64s1(&[7.5, 11.5, 15.5]))),
            (
                Op::Sum,
                Some(&[2, 0]),
                true,
                Ok(f64s(&[7.5, 11.5, 15.5], &[1, 3, 1])),
            ),
            (
                Op::Sum,
                Some(&[-3, -1]),
                false,
                Ok(f64s1(&[7.5, 11.5, 15.5])),
            ),
            (
                Op::Sum,
                Some(&[1]),
                false,
                Ok(f64s(
                    &[1.5, 1.875, 2.25, 2.625, 6.0, 6.375, 6.75, 7.125],
                    &[2, 4],
                )),
            ),
            (
                Op::Mean,
                Some(&[0, 2]),
                false,
                Ok(f64s1(&[0.9375, 1.4375, 1.9375])),
            ),
            (
                Op::Mean,
                Some(&[2, 0]),
                true,
                Ok(f64s(&[0.9375, 1.4375, 1.9375], &[1, 3, 1])),
            ),
            (
                Op::Mean,
                Some(&[-3, -1]),
                false,
                Ok(f64s1(&[0.9375, 1.4375, 1.9375])),
            ),
            (
                Op::Mean,
                Some(&[1]),
                false,
                Ok(f64s(
                    &[0.5, 0.625, 0.75, 0.875, 2.0, 2.125, 2.25, 2.375],
                    &[2, 4],
                )),
            ),
            (
                Op::Max,
                Some(&[0, 2]),
                false,
                Ok(f64s1(&[1.875, 2.375, 2.875])),
            ),
            (
                Op::Max,
                Some(&[2, 0]),
                true,
                Ok(f64s(&[1.875, 2.375, 2.875], &[1, 3, 1])),
            ),
            (
                Op::Max,
                Some(&[-3, -1]),
                false,
                Ok(f64s1(&[1.875, 2.375, 2.875])),
            ),
            (
                Op::Max,
                Some(&[1]),
                false,
                Ok(f64s(
                    &[1.0, 1.125, 1.25, 1.375, 2.5, 2.625, 2.75, 2.875],
                    &[2, 4],
                )),
            ),
            (Op::Min, Some(&[0, 2]), false, Ok(f64s1(&[0.0, 0.5, 1.0]))),
            (
                Op::Min,
                Some(&[2, 0]),
                true,
                Ok(f64s(&[0.0, 0.5, 1.0], &[1, 3, 1])),
            ),
            (Op::Min, Some(&[-3, -1]), false, Ok(f64s1(&[0.0, 0.5, 1.0]))),
            (
                Op::Min,
                Some(&[1]),
                false,
                Ok(f64s(
                    &[0.0, 0.125, 0.25, 0.375, 1.5, 1.625, 1.75, 1.875],
                    &[2, 4],
                )),
            ),
            (
                Op::Prod,
                Some(&[0, 2]),
                false,
                Ok(f64s1(&[0.0, 4.6575164794921875, 100.32405853271484])),
            ),
            (
                Op::Prod,
                Some(&[2, 0]),
                true,
                Ok(f64s(
                    &[0.0, 4.6575164794921875, 100.32405853271484],
                    &[1, 3, 1],
                )),
            ),
            (
                Op::Prod,
                Some(&[-3, -1]),
                false,
                Ok(f64s1(&[0.0, 4.6575164794921875, 100.32405853271484])),
            ),
            (
                Op::Prod,
                Some(&[1]),
                false,
                Ok(f64s(
                    &[
                        0.0,
                        0.087890625,
                        0.234375,
                        0.451171875,
                        7.5,
                        9.064453125,
                        10.828125,
                        12.802734375,
                    ],
                    &[2, 4],
                )),
            ),
        ],
    )]);
}

/// Sum/prod give their identity, mean is nan, max/min raise.
#[test]
fn empty_reductions() {
    check_reduce(vec![
        (
            f32s(&[], &[0, 3]),
            vec![
                (Op::Sum, None, false, Ok(f32s(&[0.0], &[]))),
                (Op::Sum, Some(&[0]), false, Ok(f32s1(&[0.0, 0.0, 0.0]))),
                (Op::Sum, Some(&[1]), false, Ok(f32s1(&[]))),
                (Op::Mean, None, false, Ok(f32s(&[NAN32], &[]))),
                (
                    Op::Mean,
                    Some(&[0]),
                    false,
                    Ok(f32s1(&[NAN32, NAN32, NAN32])),
                ),
                (Op::Mean, Some(&[1]), false, Ok(f32s1(&[]))),
                (
                    Op::Max,
                    None,
                    false,
                    raises(
                        ErrorKind::Value,
                        "zero-size array to reduction operation maximum which has no identity",
                    ),
                ),
                (
                    Op::Max,
                    Some(&[0]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "zero-size array to reduction operation maximum which has no identity",
                    ),
                ),
                (Op::Max, Some(&[1]), false, Ok(f32s1(&[]))),
                (
                    Op::Min,
                    None,
                    false,
                    raises(
                        ErrorKind::Value,
                        "zero-size array to reduction operation minimum which has no identity",
                    ),
                ),
                (
                    Op::Min,
                    Some(&[0]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "zero-size array to reduction operation minimum which has no identity",
                    ),
                ),
                (Op::Min, Some(&[1]), false, Ok(f32s1(&[]))),
                (Op::Prod, None, false, Ok(f32s(&[1.0], &[]))),
                (Op::Prod, Some(&[0]), false, Ok(f32s1(&[1.0, 1.0, 1.0]))),
                (Op::Prod, Some(&[1]), false, Ok(f32s1(&[]))),
            ],
        ),
        (
            f32s(&[], &[3, 0]),
            vec![
                (Op::Sum, Some(&[0]), false, Ok(f32s1(&[]))),
                (Op::Mean, Some(&[0]), false, Ok(f32s1(&[]))),
                (Op::Max, Some(&[0]), false, Ok(f32s1(&[]))),
                (Op::Min, Some(&[0]), false, Ok(f32s1(&[]))),
                (Op::Prod, Some(&[0]), false, Ok(f32s1(&[]))),
            ],
        ),
        (
            f32s(&[], &[0, 0]),
            vec![
                (Op::Sum, Some(&[0]), false, Ok(f32s1(&[]))),
                (Op::Mean, Some(&[0]), false, Ok(f32s1(&[]))),
                (
                    Op::Max,
                    Some(&[0]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "zero-size array to reduction operation maximum which has no identity",
                    ),
                ),
                (
                    Op::Min,
                    Some(&[0]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "zero-size array to reduction operation minimum which has no identity",
                    ),
                ),
                (Op::Prod, Some(&[0]), false, Ok(f32s1(&[]))),
            ],
        ),
        (
            f32s(&[], &[2, 0]),
            vec![
                (Op::Sum, Some(&[]), false, Ok(f32s(&[], &[2, 0]))),
                (Op::Mean, Some(&[]), false, Ok(f32s(&[], &[2, 0]))),
                (Op::Max, Some(&[]), false, Ok(f32s(&[], &[2, 0]))),
                (Op::Min, Some(&[]), false, Ok(f32s(&[], &[2, 0]))),
                (Op::Prod, Some(&[]), false, Ok(f32s(&[], &[2, 0]))),
            ],
        ),
        (
            i32s1(&[]),
            vec![
                (Op::Sum, None, false, Ok(i64s(&[0], &[]))),
                (Op::Mean, None, false, Ok(f64s(&[NAN], &[]))),
                (
                    Op::Max,
                    None,
                    false,
                    raises(
                        ErrorKind::Value,
                        "zero-size array to reduction operation maximum which has no identity",
                    ),
                ),
                (
                    Op::Min,
                    None,
                    false,
                    raises(
                        ErrorKind::Value,
                        "zero-size array to reduction operation minimum which has no identity",
                    ),
                ),
                (Op::Prod, None, false, Ok(i64s(&[1], &[]))),
            ],
        ),
    ]);
}

#[test]
fn axis_errors() {
    check_reduce(vec![
        (
            f64s(&[0.0; 4], &[2, 2]),
            vec![
                (
                    Op::Sum,
                    Some(&[0, 0]),
                    false,
                    raises(ErrorKind::Value, "duplicate value in 'axis'"),
                ),
                (
                    Op::Sum,
                    Some(&[1, -1]),
                    false,
                    raises(ErrorKind::Value, "duplicate value in 'axis'"),
                ),
                (
                    Op::Sum,
                    Some(&[2]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "axis 2 is out of bounds for array of dimension 2",
                    ),
                ),
                (
                    Op::Sum,
                    Some(&[-3]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "axis -3 is out of bounds for array of dimension 2",
                    ),
                ),
                (
                    Op::Sum,
                    Some(&[0, 0, 5]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "axis 5 is out of bounds for array of dimension 2",
                    ),
                ),
                (
                    Op::Sum,
                    Some(&[5, 0, 0]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "axis 5 is out of bounds for array of dimension 2",
                    ),
                ),
            ],
        ),
        (
            f64s(&[5.0], &[]),
            vec![
                // numpy lets a lone axis 0 or -1 through for 0-d arrays, except in mean.
                (Op::Sum, Some(&[0]), false, Ok(f64s(&[5.0], &[]))),
                (Op::Sum, Some(&[-1]), false, Ok(f64s(&[5.0], &[]))),
                (
                    Op::Sum,
                    Some(&[1]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "axis 1 is out of bounds for array of dimension 0",
                    ),
                ),
                (
                    Op::Mean,
                    Some(&[0]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "axis 0 is out of bounds for array of dimension 0",
                    ),
                ),
                (
                    Op::Mean,
                    Some(&[-1]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "axis -1 is out of bounds for array of dimension 0",
                    ),
                ),
                (
                    Op::Mean,
                    Some(&[1]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "axis 1 is out of bounds for array of dimension 0",
                    ),
                ),
                (Op::Max, Some(&[0]), false, Ok(f64s(&[5.0], &[]))),
                (Op::Max, Some(&[-1]), false, Ok(f64s(&[5.0], &[]))),
                (
                    Op::Max,
                    Some(&[1]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "axis 1 is out of bounds for array of dimension 0",
                    ),
                ),
                (Op::Min, Some(&[0]), false, Ok(f64s(&[5.0], &[]))),
                (Op::Min, Some(&[-1]), false, Ok(f64s(&[5.0], &[]))),
                (
                    Op::Min,
                    Some(&[1]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "axis 1 is out of bounds for array of dimension 0",
                    ),
                ),
                (Op::Prod, Some(&[0]), false, Ok(f64s(&[5.0], &[]))),
                (Op::Prod, Some(&[-1]), false, Ok(f64s(&[5.0], &[]))),
                (
                    Op::Prod,
                    Some(&[1]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "axis 1 is out of bounds for array of dimension 0",
                    ),
                ),
                (
                    Op::Sum,
                    Some(&[0, 0]),
                    false,
                    raises(
                        ErrorKind::Value,
                        "axis 0 is out of bounds for array of dimension 0",
                    ),
                ),
            ],
        ),
    ]);
}

#[test]
fn nan_signed_zero_and_wrapping() {
    check_reduce(vec![
        (
            f64s1(&[1.0, NAN, 3.0]),
            vec![
                (Op::Sum, None, false, Ok(f64s(&[NAN], &[]))),
                (Op::Mean, None, false, Ok(f64s(&[NAN], &[]))),
                (Op::Max, None, false, Ok(f64s(&[NAN], &[]))),
                (Op::Min, None, false, Ok(f64s(&[NAN], &[]))),
                (Op::Prod, None, false, Ok(f64s(&[NAN], &[]))),
            ],
        ),
        (
            f64s1(&[NAN, 1.0]),
            vec![
                (Op::Sum, None, false, Ok(f64s(&[NAN], &[]))),
                (Op::Mean, None, false, Ok(f64s(&[NAN], &[]))),
                (Op::Max, None, false, Ok(f64s(&[NAN], &[]))),
                (Op::Min, None, false, Ok(f64s(&[NAN], &[]))),
                (Op::Prod, None, false, Ok(f64s(&[NAN], &[]))),
            ],
        ),
        (
            f64s1(&[0.0, -0.0]),
            vec![
                (Op::Sum, None, false, Ok(f64s(&[0.0], &[]))),
                (Op::Mean, None, false, Ok(f64s(&[0.0], &[]))),
                (Op::Max, None, false, Ok(f64s(&[-0.0], &[]))),
                (Op::Min, None, false, Ok(f64s(&[-0.0], &[]))),
                (Op::Prod, None, false, Ok(f64s(&[-0.0], &[]))),
            ],
        ),
        (
            f64s1(&[-0.0, 0.0]),
            vec![
                (Op::Sum, None, false, Ok(f64s(&[0.0], &[]))),
                (Op::Mean, None, false, Ok(f64s(&[0.0], &[]))),
                (Op::Max, None, false, Ok(f64s(&[0.0], &[]))),
                (Op::Min, None, false, Ok(f64s(&[0.0], &[]))),
                (Op::Prod, None, false, Ok(f64s(&[-0.0], &[]))),
            ],
        ),
        (
            f64s1(&[-INF, INF]),
            vec![
                (Op::Sum, None, false, Ok(f64s(&[NAN], &[]))),
                (Op::Mean, None, false, Ok(f64s(&[NAN], &[]))),
                (Op::Max, None, false, Ok(f64s(&[INF], &[]))),
                (Op::Min, None, false, Ok(f64s(&[-INF], &[]))),
                (Op::Prod, None, false, Ok(f64s(&[-INF], &[]))),
            ],
        ),
        (
            f64s1(&[-0.0]),
            vec![
                (Op::Sum, None, false, Ok(f64s(&[0.0], &[]))),
                (Op::Mean, None, false, Ok(f64s(&[0.0], &[]))),
                (Op::Max, None, false, Ok(f64s(&[-0.0], &[]))),
                (Op::Min, None, false, Ok(f64s(&[-0.0], &[]))),
                (Op::Prod, None, false, Ok(f64s(&[-0.0], &[]))),
            ],
        ),
        (
            i64s1(&[
                4611686018427387904,
                4611686018427387904,
                4611686018427387904,
            ]),
            vec![
                // Integer sums wrap.
                (Op::Sum, None, false, Ok(i64s(&[-4611686018427387904], &[]))),
            ],
        ),
        (
            i32s1(&[65536, 65536, 65536]),
            vec![
                // int32 products accumulate in int64.
                (Op::Prod, None, false, Ok(i64s(&[281474976710656], &[]))),
            ],
        ),
    ]);
}

/// A row of a table of float32 bit patterns: the op, the axes, and `(flat index, bits)` pairs.
type BitsCase = (Op, Option<&'static [i64]>, &'static [(usize, u32)]);

#[test]
fn float32_pairwise_summation_matches_numpy_bits() {
    let x = div(&ar(100_000, DType::F32), 7)
        .reshape(&[100, 1000])
        .unwrap();
    let rows: [BitsCase; 8] = [
        // numpy sums floats pairwise along contiguous runs and sequentially across rows; the
        // float32 results below match it to the last bit (a naive loop would not).
        (Op::Sum, None, &[(0, 1311394843)]),
        (Op::Mean, None, &[(0, 1172256330)]),
        (
            Op::Sum,
            Some(&[0]),
            &[
                (0, 1227662446),
                (1, 1227662674),
                (500, 1227776731),
                (999, 1227890789),
            ],
        ),
        (
            Op::Mean,
            Some(&[0]),
            &[
                (0, 1172110190),
                (1, 1172110482),
                (500, 1172256475),
                (999, 1172402469),
            ],
        ),
        (
            Op::Sum,
            Some(&[1]),
            &[
                (0, 1200316050),
                (1, 1213280658),
                (50, 1255942412),
                (99, 1264116806),
            ],
        ),
        (
            Op::Mean,
            Some(&[1]),
            &[
                (0, 1116649179),
                (1, 1129723611),
                (50, 1172402614),
                (99, 1180571867),
            ],
        ),
        (Op::Sum, Some(&[0, 1]), &[(0, 1311394843)]),
        (Op::Mean, Some(&[0, 1]), &[(0, 1172256330)]),
    ];
    for (op, axes, bits) in rows {
        bits32(&Tensor::reduce(op, &x, axes, false).unwrap(), bits);
    }
    // Sequential float32 summation would give bits 1311394795 for the full sum instead.
}

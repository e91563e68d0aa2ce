//! Elementwise binary ops: promotion, NEP 50 scalars, broadcasting, per-op semantics.

use super::*;

/// numpy's result dtype for every pair of dtypes.
#[test]
fn add_promotion_table() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &bools(&[true, false], &[2]),
            &bools(&[true, true], &[2]),
        )
        .unwrap(),
        &bools(&[true, true], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &bools(&[true, false], &[2]),
            &i32s(&[1, 1], &[2]),
        )
        .unwrap(),
        &i32s(&[2, 1], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &bools(&[true, false], &[2]),
            &i64s(&[1, 1], &[2]),
        )
        .unwrap(),
        &i64s(&[2, 1], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &bools(&[true, false], &[2]),
            &f32s(&[1.0, 1.0], &[2]),
        )
        .unwrap(),
        &f32s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &bools(&[true, false], &[2]),
            &f64s(&[1.0, 1.0], &[2]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &i32s(&[1, 0], &[2]),
            &bools(&[true, true], &[2]),
        )
        .unwrap(),
        &i32s(&[2, 1], &[2]),
    );
    assert_tensor(
        &Tensor::binary(BinaryOp::Add, &i32s(&[1, 0], &[2]), &i32s(&[1, 1], &[2])).unwrap(),
        &i32s(&[2, 1], &[2]),
    );
    assert_tensor(
        &Tensor::binary(BinaryOp::Add, &i32s(&[1, 0], &[2]), &i64s(&[1, 1], &[2])).unwrap(),
        &i64s(&[2, 1], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &i32s(&[1, 0], &[2]),
            &f32s(&[1.0, 1.0], &[2]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &i32s(&[1, 0], &[2]),
            &f64s(&[1.0, 1.0], &[2]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &i64s(&[1, 0], &[2]),
            &bools(&[true, true], &[2]),
        )
        .unwrap(),
        &i64s(&[2, 1], &[2]),
    );
    assert_tensor(
        &Tensor::binary(BinaryOp::Add, &i64s(&[1, 0], &[2]), &i32s(&[1, 1], &[2])).unwrap(),
        &i64s(&[2, 1], &[2]),
    );
    assert_tensor(
        &Tensor::binary(BinaryOp::Add, &i64s(&[1, 0], &[2]), &i64s(&[1, 1], &[2])).unwrap(),
        &i64s(&[2, 1], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &i64s(&[1, 0], &[2]),
            &f32s(&[1.0, 1.0], &[2]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &i64s(&[1, 0], &[2]),
            &f64s(&[1.0, 1.0], &[2]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &f32s(&[1.0, 0.0], &[2]),
            &bools(&[true, true], &[2]),
        )
        .unwrap(),
        &f32s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &f32s(&[1.0, 0.0], &[2]),
            &i32s(&[1, 1], &[2]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &f32s(&[1.0, 0.0], &[2]),
            &i64s(&[1, 1], &[2]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &f32s(&[1.0, 0.0], &[2]),
            &f32s(&[1.0, 1.0], &[2]),
        )
        .unwrap(),
        &f32s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &f32s(&[1.0, 0.0], &[2]),
            &f64s(&[1.0, 1.0], &[2]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &f64s(&[1.0, 0.0], &[2]),
            &bools(&[true, true], &[2]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &f64s(&[1.0, 0.0], &[2]),
            &i32s(&[1, 1], &[2]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &f64s(&[1.0, 0.0], &[2]),
            &i64s(&[1, 1], &[2]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &f64s(&[1.0, 0.0], &[2]),
            &f32s(&[1.0, 1.0], &[2]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &f64s(&[1.0, 0.0], &[2]),
            &f64s(&[1.0, 1.0], &[2]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.0], &[2]),
    );
}

#[test]
fn add_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &bools(&[true, true, true, false], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i32s(&[9, -5, 5, -9, 3, 4, 2], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i64s(&[9, -5, 5, -9, 3, 4, 2], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f32s(
            &[
                8.0, -2.0, 2.0, -8.0, 3.0, 3.0, INF32, -INF32, NAN32, 2.5, 8.0,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Add,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f64s(
            &[8.0, -2.0, 2.0, -8.0, 3.0, 3.0, INF, -INF, NAN, 2.5, 8.0],
            &[11],
        ),
    );
}

#[test]
fn subtract_on_each_dtype() {
    assert_err(
        Tensor::binary(
            BinaryOp::Sub,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        ),
        ErrorKind::Type,
        "numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead.",
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Sub,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i32s(&[5, -9, 9, -5, -3, 6, -4], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Sub,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i64s(&[5, -9, 9, -5, -3, 6, -4], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Sub,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f32s(
            &[
                2.0, -8.0, 8.0, -2.0, -3.0, -3.0, INF32, NAN32, NAN32, 2.5, 7.0,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Sub,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f64s(
            &[2.0, -8.0, 8.0, -2.0, -3.0, -3.0, INF, NAN, NAN, 2.5, 7.0],
            &[11],
        ),
    );
}

#[test]
fn multiply_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Mul,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &bools(&[true, false, false, false], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Mul,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i32s(&[14, -14, -14, 14, 0, -5, -3], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Mul,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i64s(&[14, -14, -14, 14, 0, -5, -3], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Mul,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f32s(
            &[
                15.0, -15.0, -15.0, 15.0, 0.0, -0.0, INF32, INF32, NAN32, 0.0, 3.75,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Mul,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f64s(
            &[
                15.0, -15.0, -15.0, 15.0, 0.0, -0.0, INF, INF, NAN, 0.0, 3.75,
            ],
            &[11],
        ),
    );
}

#[test]
fn true_divide_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Div,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &f64s(&[1.0, INF, 0.0, NAN], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Div,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &f64s(
            &[3.5, -3.5, -3.5, 3.5, 0.0, -5.0, -0.3333333333333333],
            &[7],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Div,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &f64s(
            &[3.5, -3.5, -3.5, 3.5, 0.0, -5.0, -0.3333333333333333],
            &[7],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Div,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f32s(
            &[
                1.6666666, -1.6666666, -1.6666666, 1.6666666, 0.0, -0.0, INF32, NAN32, NAN32,
                INF32, 15.0,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Div,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f64s(
            &[
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
            ],
            &[11],
        ),
    );
}

#[test]
fn floor_divide_on_each_dtype() {
    // numpy gives int8 here; without int8 the result is int64.
    assert_tensor(
        &Tensor::binary(
            BinaryOp::FloorDiv,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, true, true, true], &[4]),
        )
        .unwrap(),
        &i64s(&[1, 1, 0, 0], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::FloorDiv,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i32s(&[3, -4, -4, 3, 0, -5, -1], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::FloorDiv,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i64s(&[3, -4, -4, 3, 0, -5, -1], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::FloorDiv,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f32s(
            &[
                1.0, -2.0, -2.0, 1.0, 0.0, -0.0, NAN32, NAN32, NAN32, INF32, 15.0,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::FloorDiv,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f64s(
            &[1.0, -2.0, -2.0, 1.0, 0.0, -0.0, NAN, NAN, NAN, INF, 15.0],
            &[11],
        ),
    );
}

#[test]
fn remainder_on_each_dtype() {
    // numpy gives int8 here; without int8 the result is int64.
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Mod,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, true, true, true], &[4]),
        )
        .unwrap(),
        &i64s(&[0, 0, 0, 0], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Mod,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i32s(&[1, 1, -1, -1, 0, 0, 2], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Mod,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i64s(&[1, 1, -1, -1, 0, 0, 2], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Mod,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f32s(
            &[
                2.0, 1.0, -1.0, -2.0, 0.0, 0.0, NAN32, NAN32, NAN32, NAN32, 0.0,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Mod,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f64s(
            &[2.0, 1.0, -1.0, -2.0, 0.0, 0.0, NAN, NAN, NAN, NAN, 0.0],
            &[11],
        ),
    );
}

#[test]
fn power_on_each_dtype() {
    // numpy gives int8 here; without int8 the result is int64.
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Pow,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &i64s(&[1, 1, 0, 1], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Pow,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 3, 0, 1, 5, 2, 7], &[7]),
        )
        .unwrap(),
        &i32s(&[49, -343, 1, -7, 0, 25, -1], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Pow,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 3, 0, 1, 5, 2, 7], &[7]),
        )
        .unwrap(),
        &i64s(&[49, -343, 1, -7, 0, 25, -1], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Pow,
            &f32s(&[2.0, -2.0, 4.0, 0.0, NAN32, 1.5, -0.5, 10.0], &[8]),
            &f32s(&[3.0, 2.0, 0.5, 0.0, 0.0, 2.0, -1.0, -2.0], &[8]),
        )
        .unwrap(),
        &f32s(&[8.0, 4.0, 2.0, 1.0, 1.0, 2.25, -2.0, 0.01], &[8]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Pow,
            &f64s(&[2.0, -2.0, 4.0, 0.0, NAN, 1.5, -0.5, 10.0], &[8]),
            &f64s(&[3.0, 2.0, 0.5, 0.0, 0.0, 2.0, -1.0, -2.0], &[8]),
        )
        .unwrap(),
        &f64s(&[8.0, 4.0, 2.0, 1.0, 1.0, 2.25, -2.0, 0.01], &[8]),
    );
}

#[test]
fn maximum_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Maximum,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &bools(&[true, true, true, false], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Maximum,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i32s(&[7, 2, 7, -2, 3, 5, 3], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Maximum,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i64s(&[7, 2, 7, -2, 3, 5, 3], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Maximum,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f32s(
            &[
                5.0, 3.0, 5.0, -3.0, 3.0, 3.0, INF32, -INF32, NAN32, 2.5, 7.5,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Maximum,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f64s(
            &[5.0, 3.0, 5.0, -3.0, 3.0, 3.0, INF, -INF, NAN, 2.5, 7.5],
            &[11],
        ),
    );
}

#[test]
fn minimum_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Minimum,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &bools(&[true, false, false, false], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Minimum,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i32s(&[2, -7, -2, -7, 0, -1, -1], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Minimum,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i64s(&[2, -7, -2, -7, 0, -1, -1], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Minimum,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f32s(
            &[
                3.0, -5.0, -3.0, -5.0, 0.0, -0.0, 3.0, -INF32, NAN32, 0.0, 0.5,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Minimum,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &f64s(
            &[3.0, -5.0, -3.0, -5.0, 0.0, -0.0, 3.0, -INF, NAN, 0.0, 0.5],
            &[11],
        ),
    );
}

#[test]
fn bitwise_and_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::BitAnd,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &bools(&[true, false, false, false], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::BitAnd,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i32s(&[2, 0, 6, -8, 0, 5, 3], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::BitAnd,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i64s(&[2, 0, 6, -8, 0, 5, 3], &[7]),
    );
    assert_err(
        Tensor::binary(
            BinaryOp::BitAnd,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        ),
        ErrorKind::Type,
        "ufunc 'bitwise_and' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
    assert_err(
        Tensor::binary(
            BinaryOp::BitAnd,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        ),
        ErrorKind::Type,
        "ufunc 'bitwise_and' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
}

#[test]
fn bitwise_or_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::BitOr,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &bools(&[true, true, true, false], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::BitOr,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i32s(&[7, -5, -1, -1, 3, -1, -1], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::BitOr,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i64s(&[7, -5, -1, -1, 3, -1, -1], &[7]),
    );
    assert_err(
        Tensor::binary(
            BinaryOp::BitOr,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        ),
        ErrorKind::Type,
        "ufunc 'bitwise_or' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
    assert_err(
        Tensor::binary(
            BinaryOp::BitOr,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        ),
        ErrorKind::Type,
        "ufunc 'bitwise_or' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
}

#[test]
fn bitwise_xor_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::BitXor,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &bools(&[false, true, true, false], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::BitXor,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i32s(&[5, -5, -7, 7, 3, -6, -4], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::BitXor,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &i64s(&[5, -5, -7, 7, 3, -6, -4], &[7]),
    );
    assert_err(
        Tensor::binary(
            BinaryOp::BitXor,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        ),
        ErrorKind::Type,
        "ufunc 'bitwise_xor' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
    assert_err(
        Tensor::binary(
            BinaryOp::BitXor,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        ),
        ErrorKind::Type,
        "ufunc 'bitwise_xor' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
}

#[test]
fn left_shift_on_each_dtype() {
    // numpy gives int8 here; without int8 the result is int64.
    assert_tensor(
        &Tensor::binary(
            BinaryOp::LShift,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &i64s(&[2, 1, 0, 0], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::LShift,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[1, 2, 0, 3, 31, 64, -1], &[7]),
        )
        .unwrap(),
        &i32s(&[14, -28, 7, -56, 0, 0, 0], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::LShift,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[1, 2, 0, 3, 31, 64, -1], &[7]),
        )
        .unwrap(),
        &i64s(&[14, -28, 7, -56, 0, 0, 0], &[7]),
    );
    assert_err(
        Tensor::binary(
            BinaryOp::LShift,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        ),
        ErrorKind::Type,
        "ufunc 'left_shift' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
    assert_err(
        Tensor::binary(
            BinaryOp::LShift,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        ),
        ErrorKind::Type,
        "ufunc 'left_shift' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
}

#[test]
fn right_shift_on_each_dtype() {
    // numpy gives int8 here; without int8 the result is int64.
    assert_tensor(
        &Tensor::binary(
            BinaryOp::RShift,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &i64s(&[0, 1, 0, 0], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::RShift,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[1, 2, 0, 3, 31, 64, -1], &[7]),
        )
        .unwrap(),
        &i32s(&[3, -2, 7, -1, 0, 0, -1], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::RShift,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[1, 2, 0, 3, 31, 64, -1], &[7]),
        )
        .unwrap(),
        &i64s(&[3, -2, 7, -1, 0, 0, -1], &[7]),
    );
    assert_err(
        Tensor::binary(
            BinaryOp::RShift,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        ),
        ErrorKind::Type,
        "ufunc 'right_shift' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
    assert_err(
        Tensor::binary(
            BinaryOp::RShift,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        ),
        ErrorKind::Type,
        "ufunc 'right_shift' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
}

#[test]
fn equal_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Eq,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &bools(&[true, false, false, true], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Eq,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &bools(&[false, false, false, false, false, false, false], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Eq,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &bools(&[false, false, false, false, false, false, false], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Eq,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &bools(
            &[
                false, false, false, false, false, false, false, true, false, false, false,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Eq,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &bools(
            &[
                false, false, false, false, false, false, false, true, false, false, false,
            ],
            &[11],
        ),
    );
}

#[test]
fn not_equal_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Ne,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &bools(&[false, true, true, false], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Ne,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &bools(&[true, true, true, true, true, true, true], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Ne,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &bools(&[true, true, true, true, true, true, true], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Ne,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &bools(
            &[
                true, true, true, true, true, true, true, false, true, true, true,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Ne,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &bools(
            &[
                true, true, true, true, true, true, true, false, true, true, true,
            ],
            &[11],
        ),
    );
}

#[test]
fn less_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Lt,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &bools(&[false, false, true, false], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Lt,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &bools(&[false, true, false, true, true, false, true], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Lt,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &bools(&[false, true, false, true, true, false, true], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Lt,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &bools(
            &[
                false, true, false, true, true, true, false, false, false, false, false,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Lt,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &bools(
            &[
                false, true, false, true, true, true, false, false, false, false, false,
            ],
            &[11],
        ),
    );
}

#[test]
fn less_equal_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Le,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &bools(&[true, false, true, true], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Le,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &bools(&[false, true, false, true, true, false, true], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Le,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &bools(&[false, true, false, true, true, false, true], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Le,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &bools(
            &[
                false, true, false, true, true, true, false, true, false, false, false,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Le,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &bools(
            &[
                false, true, false, true, true, true, false, true, false, false, false,
            ],
            &[11],
        ),
    );
}

#[test]
fn greater_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Gt,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &bools(&[false, true, false, false], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Gt,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &bools(&[true, false, true, false, false, true, false], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Gt,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &bools(&[true, false, true, false, false, true, false], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Gt,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &bools(
            &[
                true, false, true, false, false, false, true, false, false, true, true,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Gt,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &bools(
            &[
                true, false, true, false, false, false, true, false, false, true, true,
            ],
            &[11],
        ),
    );
}

#[test]
fn greater_equal_on_each_dtype() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Ge,
            &bools(&[true, true, false, false], &[4]),
            &bools(&[true, false, true, false], &[4]),
        )
        .unwrap(),
        &bools(&[true, true, false, true], &[4]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Ge,
            &i32s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i32s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &bools(&[true, false, true, false, false, true, false], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Ge,
            &i64s(&[7, -7, 7, -7, 0, 5, -1], &[7]),
            &i64s(&[2, 2, -2, -2, 3, -1, 3], &[7]),
        )
        .unwrap(),
        &bools(&[true, false, true, false, false, true, false], &[7]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Ge,
            &f32s(
                &[
                    5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF32, -INF32, NAN32, 2.5, 7.5,
                ],
                &[11],
            ),
            &f32s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF32, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &bools(
            &[
                true, false, true, false, false, false, true, true, false, true, true,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Ge,
            &f64s(
                &[5.0, -5.0, 5.0, -5.0, 0.0, -0.0, INF, -INF, NAN, 2.5, 7.5],
                &[11],
            ),
            &f64s(
                &[3.0, 3.0, -3.0, -3.0, 3.0, 3.0, 3.0, -INF, 1.0, 0.0, 0.5],
                &[11],
            ),
        )
        .unwrap(),
        &bools(
            &[
                true, false, true, false, false, false, true, true, false, true, true,
            ],
            &[11],
        ),
    );
}

#[test]
fn binary_errors() {
    // Deliberate deviation: numpy returns 0 with a warning.
    assert_err(
        Tensor::binary(
            BinaryOp::FloorDiv,
            &i32s(&[7, -7, 1], &[3]),
            &i32s(&[2, 0, 1], &[3]),
        ),
        ErrorKind::ZeroDivision,
        "integer division or modulo by zero",
    );
    assert_err(
        Tensor::binary(
            BinaryOp::FloorDiv,
            &i64s(&[7, -7, 1], &[3]),
            &i64s(&[2, 0, 1], &[3]),
        ),
        ErrorKind::ZeroDivision,
        "integer division or modulo by zero",
    );
    assert_err(
        Tensor::binary(
            BinaryOp::FloorDiv,
            &bools(&[true], &[1]),
            &bools(&[false], &[1]),
        ),
        ErrorKind::ZeroDivision,
        "integer division or modulo by zero",
    );
    assert_err(
        Tensor::binary(
            BinaryOp::Mod,
            &i32s(&[7, -7, 1], &[3]),
            &i32s(&[2, 0, 1], &[3]),
        ),
        ErrorKind::ZeroDivision,
        "integer division or modulo by zero",
    );
    assert_err(
        Tensor::binary(
            BinaryOp::Mod,
            &i64s(&[7, -7, 1], &[3]),
            &i64s(&[2, 0, 1], &[3]),
        ),
        ErrorKind::ZeroDivision,
        "integer division or modulo by zero",
    );
    assert_err(
        Tensor::binary(BinaryOp::Mod, &bools(&[true], &[1]), &bools(&[false], &[1])),
        ErrorKind::ZeroDivision,
        "integer division or modulo by zero",
    );
    // An empty result reads no divisor, so there is nothing to divide by zero.
    assert_tensor(
        &Tensor::binary(BinaryOp::FloorDiv, &i64s(&[], &[0]), &i64s(&[0], &[1])).unwrap(),
        &i64s(&[], &[0]),
    );
    assert_err(
        Tensor::binary(BinaryOp::Pow, &i32s(&[2, 3], &[2]), &i32s(&[1, -1], &[2])),
        ErrorKind::Value,
        "Integers to negative integer powers are not allowed.",
    );
    assert_err(
        Tensor::binary(BinaryOp::Pow, &i64s(&[2, 3], &[2]), &i64s(&[1, -1], &[2])),
        ErrorKind::Value,
        "Integers to negative integer powers are not allowed.",
    );
    assert_err(
        Tensor::binary(BinaryOp::BitAnd, &f64s(&[1.0], &[1]), &i32s(&[1], &[1])),
        ErrorKind::Type,
        "ufunc 'bitwise_and' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
    assert_err(
        Tensor::binary(BinaryOp::BitOr, &f64s(&[1.0], &[1]), &i32s(&[1], &[1])),
        ErrorKind::Type,
        "ufunc 'bitwise_or' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
    assert_err(
        Tensor::binary(BinaryOp::BitXor, &f64s(&[1.0], &[1]), &i32s(&[1], &[1])),
        ErrorKind::Type,
        "ufunc 'bitwise_xor' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
    assert_err(
        Tensor::binary(BinaryOp::LShift, &f64s(&[1.0], &[1]), &i32s(&[1], &[1])),
        ErrorKind::Type,
        "ufunc 'left_shift' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
    assert_err(
        Tensor::binary(BinaryOp::RShift, &f64s(&[1.0], &[1]), &i32s(&[1], &[1])),
        ErrorKind::Type,
        "ufunc 'right_shift' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
    assert_err(
        Tensor::binary(BinaryOp::Sub, &bools(&[true], &[1]), &bools(&[true], &[1])),
        ErrorKind::Type,
        "numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead.",
    );
    assert_err(
        Tensor::binary(
            BinaryOp::Add,
            &f64s(&[1.0, 2.0], &[2]),
            &f64s(&[1.0, 2.0, 3.0], &[3]),
        ),
        ErrorKind::Value,
        "operands could not be broadcast together with shapes (2,) (3,) ",
    );
}

/// int32 - float32 computes in float64; shapes broadcast as in numpy.
#[test]
fn broadcasting() {
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Sub,
            &i32s(&[3, -5, -4, -3, -4, 3], &[2, 3]),
            &f32s(&[9.0, 2.0, -11.75], &[3]),
        )
        .unwrap(),
        &f64s(&[-6.0, -7.0, 7.75, -12.0, -6.0, 14.75], &[2, 3]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Sub,
            &i32s(&[-5, -2], &[2, 1]),
            &f32s(&[-1.75, 3.0, -0.75], &[1, 3]),
        )
        .unwrap(),
        &f64s(&[-3.25, -8.0, -4.25, -0.25, -5.0, -1.25], &[2, 3]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Sub,
            &i32s(&[-3, -4, 1], &[3]),
            &f32s(&[5.75], &[]),
        )
        .unwrap(),
        &f64s(&[-8.75, -9.75, -4.75], &[3]),
    );
    assert_tensor(
        &Tensor::binary(BinaryOp::Sub, &i32s(&[-5], &[]), &f32s(&[-9.75], &[])).unwrap(),
        &f64s(&[4.75], &[]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Sub,
            &i32s(&[-1], &[]),
            &f32s(&[-2.75, 9.5, 0.25, -2.0], &[2, 2]),
        )
        .unwrap(),
        &f64s(&[1.75, -10.5, -1.25, 1.0], &[2, 2]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Sub,
            &i32s(&[], &[0, 3]),
            &f32s(&[-1.75, 4.0, 2.0], &[3]),
        )
        .unwrap(),
        &f64s(&[], &[0, 3]),
    );
    assert_tensor(
        &Tensor::binary(BinaryOp::Sub, &i32s(&[], &[2, 0]), &f32s(&[-8.25], &[1])).unwrap(),
        &f64s(&[], &[2, 0]),
    );
    assert_tensor(
        &Tensor::binary(BinaryOp::Sub, &i32s(&[2], &[1]), &f32s(&[], &[0])).unwrap(),
        &f64s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Sub,
            &i32s(&[2, 4, 2, -3, -2, 1, 1, 1], &[4, 1, 2]),
            &f32s(&[9.0, -5.25, 10.75], &[3, 1]),
        )
        .unwrap(),
        &f64s(
            &[
                -7.0, -5.0, 7.25, 9.25, -8.75, -6.75, -7.0, -12.0, 7.25, 2.25, -8.75, -13.75,
                -11.0, -8.0, 3.25, 6.25, -12.75, -9.75, -8.0, -8.0, 6.25, 6.25, -9.75, -9.75,
            ],
            &[4, 3, 2],
        ),
    );
    assert_err(
        Tensor::binary(
            BinaryOp::Sub,
            &i32s(&[-5, -5, 4, 4, -3, -4], &[2, 3]),
            &f32s(&[-4.75, -11.5, 9.75, 4.0], &[4]),
        ),
        ErrorKind::Value,
        "operands could not be broadcast together with shapes (2,3) (4,) ",
    );
    assert_tensor(
        &Tensor::binary(
            BinaryOp::Sub,
            &i32s(&[0, -3, -1, -4, 2, -1], &[2, 1, 3]),
            &f32s(&[-11.75, -6.25, 5.0, 0.25, -3.25, -6.25], &[2, 3, 1]),
        )
        .unwrap(),
        &f64s(
            &[
                11.75, 8.75, 10.75, 6.25, 3.25, 5.25, -5.0, -8.0, -6.0, -4.25, 1.75, -1.25, -0.75,
                5.25, 2.25, 2.25, 8.25, 5.25,
            ],
            &[2, 3, 3],
        ),
    );
    assert_tensor(
        &Tensor::binary(BinaryOp::Sub, &i32s(&[-5], &[1, 1]), &f32s(&[2.5], &[1])).unwrap(),
        &f64s(&[-7.5], &[1, 1]),
    );
    assert_tensor(
        &Tensor::binary(BinaryOp::Sub, &i32s(&[], &[0]), &f32s(&[], &[0])).unwrap(),
        &f64s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::binary(BinaryOp::Sub, &i32s(&[1, 0, 4], &[3, 1]), &f32s(&[], &[0])).unwrap(),
        &f64s(&[], &[3, 0]),
    );
    assert_err(
        Tensor::where_(
            &f64s(&[0.0, 0.0], &[2]),
            &f64s(&[0.0, 0.0, 0.0], &[3]),
            &f64s(&[0.0, 0.0, 0.0, 0.0], &[4]),
        ),
        ErrorKind::Value,
        "operands could not be broadcast together with shapes (2,) (3,) (4,) ",
    );
}

#[test]
fn where_broadcasts_and_promotes() {
    assert_tensor(
        &Tensor::where_(
            &f64s(&[1.5, 0.0, NAN], &[3]),
            &i32s(&[1], &[1]),
            &f32s(&[2.5], &[1]),
        )
        .unwrap(),
        &f64s(&[1.0, 2.5, 1.0], &[3]),
    );
    assert_tensor(
        &Tensor::where_(
            &bools(&[true, false], &[2, 1]),
            &i64s(&[1, 2, 3], &[3]),
            &i64s(&[-1], &[]),
        )
        .unwrap(),
        &i64s(&[1, 2, 3, -1, -1, -1], &[2, 3]),
    );
    assert_tensor(
        &Tensor::where_(
            &bools(&[true], &[]),
            &i32s(&[1, 2], &[2]),
            &bools(&[true, false], &[2]),
        )
        .unwrap(),
        &i32s(&[1, 2], &[2]),
    );
    assert_tensor(
        &Tensor::where_(
            &i64s(&[0, 3, -1], &[3]),
            &f64s(&[7.5], &[]),
            &f64s(&[1.0, 2.0, 3.0], &[3]),
        )
        .unwrap(),
        &f64s(&[1.0, 7.5, 7.5], &[3]),
    );
}

/// NEP 50: Python scalars adopt the tensor's dtype where they can.
#[test]
fn weak_python_scalars() {
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Add,
            &bools(&[true, false], &[2]),
            Scalar::Int(1),
            false,
        )
        .unwrap(),
        &i64s(&[2, 1], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Add,
            &bools(&[true, false], &[2]),
            Scalar::Bool(true),
            false,
        )
        .unwrap(),
        &bools(&[true, true], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Mul,
            &bools(&[true, false], &[2]),
            Scalar::Bool(true),
            false,
        )
        .unwrap(),
        &bools(&[true, false], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Add,
            &bools(&[true, false], &[2]),
            Scalar::Float(1.5),
            false,
        )
        .unwrap(),
        &f64s(&[2.5, 1.5], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(BinaryOp::Add, &i32s(&[1, -2], &[2]), Scalar::Int(2), false)
            .unwrap(),
        &i32s(&[3, 0], &[2]),
    );
    assert_err(
        Tensor::binary_scalar(
            BinaryOp::Add,
            &i32s(&[1, -2], &[2]),
            Scalar::Int(3000000000),
            false,
        ),
        ErrorKind::Overflow,
        "Python integer 3000000000 out of bounds for int32",
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Sub,
            &i32s(&[1, -2], &[2]),
            Scalar::Bool(true),
            false,
        )
        .unwrap(),
        &i32s(&[0, -3], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Add,
            &i64s(&[1, -2], &[2]),
            Scalar::Float(2.5),
            false,
        )
        .unwrap(),
        &f64s(&[3.5, 0.5], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Add,
            &i32s(&[1, -2], &[2]),
            Scalar::Float(2.5),
            false,
        )
        .unwrap(),
        &f64s(&[3.5, 0.5], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Add,
            &f32s(&[1.5, -2.5], &[2]),
            Scalar::Int(2),
            false,
        )
        .unwrap(),
        &f32s(&[3.5, -0.5], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Add,
            &f32s(&[1.5, -2.5], &[2]),
            Scalar::Float(2.5),
            false,
        )
        .unwrap(),
        &f32s(&[4.0, 0.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Add,
            &f32s(&[0.1], &[1]),
            Scalar::Float(0.1),
            false,
        )
        .unwrap(),
        &f32s(&[0.2], &[1]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Add,
            &f64s(&[0.1], &[1]),
            Scalar::Float(0.1),
            false,
        )
        .unwrap(),
        &f64s(&[0.2], &[1]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Add,
            &f32s(&[1.0], &[1]),
            Scalar::Float(1e+300),
            false,
        )
        .unwrap(),
        &f32s(&[INF32], &[1]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Mul,
            &i64s(&[3], &[1]),
            Scalar::Int(-1099511627776),
            false,
        )
        .unwrap(),
        &i64s(&[-3298534883328], &[1]),
    );
    assert_tensor(
        &Tensor::binary_scalar(BinaryOp::Sub, &i64s(&[1, 5], &[2]), Scalar::Int(10), true).unwrap(),
        &i64s(&[9, 5], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(BinaryOp::Sub, &f32s(&[1.5], &[1]), Scalar::Int(1), true).unwrap(),
        &f32s(&[-0.5], &[1]),
    );
    assert_tensor(
        &Tensor::binary_scalar(BinaryOp::Div, &i64s(&[1, 2, 0], &[3]), Scalar::Int(2), true)
            .unwrap(),
        &f64s(&[2.0, 1.0, INF], &[3]),
    );
    assert_tensor(
        &Tensor::binary_scalar(BinaryOp::Div, &i32s(&[4, -8], &[2]), Scalar::Int(2), false)
            .unwrap(),
        &f64s(&[2.0, -4.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Div,
            &i32s(&[1, -2], &[2]),
            Scalar::Int(3000000000),
            false,
        )
        .unwrap(),
        &f64s(&[3.333333333333333e-10, -6.666666666666666e-10], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(BinaryOp::Div, &f32s(&[3.0], &[1]), Scalar::Int(2), false).unwrap(),
        &f32s(&[1.5], &[1]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Div,
            &bools(&[true, false], &[2]),
            Scalar::Int(3),
            true,
        )
        .unwrap(),
        &f64s(&[3.0, INF], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(BinaryOp::Pow, &i64s(&[1, 2, 3], &[3]), Scalar::Int(2), true)
            .unwrap(),
        &i64s(&[2, 4, 8], &[3]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Pow,
            &i64s(&[1, 2, 3], &[3]),
            Scalar::Int(2),
            false,
        )
        .unwrap(),
        &i64s(&[1, 4, 9], &[3]),
    );
    assert_err(
        Tensor::binary_scalar(BinaryOp::Pow, &i32s(&[1, -2], &[2]), Scalar::Int(-1), false),
        ErrorKind::Value,
        "Integers to negative integer powers are not allowed.",
    );
    assert_err(
        Tensor::binary_scalar(BinaryOp::Pow, &i64s(&[1, -2], &[2]), Scalar::Int(3), true),
        ErrorKind::Value,
        "Integers to negative integer powers are not allowed.",
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Pow,
            &f32s(&[4.0, 0.25], &[2]),
            Scalar::Float(0.5),
            false,
        )
        .unwrap(),
        &f32s(&[2.0, 0.5], &[2]),
    );
    // numpy gives int8 here; without int8 the result is int64.
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Pow,
            &bools(&[true, false], &[2]),
            Scalar::Bool(true),
            true,
        )
        .unwrap(),
        &i64s(&[1, 1], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(BinaryOp::Mod, &i64s(&[7, -7], &[2]), Scalar::Int(3), false)
            .unwrap(),
        &i64s(&[1, 2], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(BinaryOp::Mod, &i64s(&[3, -3], &[2]), Scalar::Int(7), true).unwrap(),
        &i64s(&[1, -2], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::FloorDiv,
            &i64s(&[7, -7], &[2]),
            Scalar::Int(-2),
            false,
        )
        .unwrap(),
        &i64s(&[-4, 3], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::FloorDiv,
            &f64s(&[7.5, -7.5], &[2]),
            Scalar::Int(2),
            false,
        )
        .unwrap(),
        &f64s(&[3.0, -4.0], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Mod,
            &f32s(&[7.5, -7.5], &[2]),
            Scalar::Int(2),
            false,
        )
        .unwrap(),
        &f32s(&[1.5, 0.5], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Mod,
            &f64s(&[2.0, -3.0], &[2]),
            Scalar::Float(-7.5),
            true,
        )
        .unwrap(),
        &f64s(&[0.5, -1.5], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Lt,
            &i32s(&[1, -2], &[2]),
            Scalar::Int(3000000000),
            false,
        )
        .unwrap(),
        &bools(&[true, true], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Gt,
            &i32s(&[1, -2], &[2]),
            Scalar::Int(3000000000),
            true,
        )
        .unwrap(),
        &bools(&[true, true], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(BinaryOp::Eq, &i32s(&[1, -2], &[2]), Scalar::Int(-2), false)
            .unwrap(),
        &bools(&[false, true], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Lt,
            &bools(&[true, false], &[2]),
            Scalar::Int(2),
            false,
        )
        .unwrap(),
        &bools(&[true, true], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Eq,
            &bools(&[true, false], &[2]),
            Scalar::Bool(true),
            false,
        )
        .unwrap(),
        &bools(&[true, false], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Eq,
            &f32s(&[1.6777216e+07], &[1]),
            Scalar::Int(16777217),
            false,
        )
        .unwrap(),
        &bools(&[true], &[1]),
    );
    assert_tensor(
        &Tensor::binary_scalar(BinaryOp::Eq, &f32s(&[0.1], &[1]), Scalar::Float(0.1), false)
            .unwrap(),
        &bools(&[true], &[1]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Ge,
            &f64s(&[0.5, NAN], &[2]),
            Scalar::Float(0.5),
            true,
        )
        .unwrap(),
        &bools(&[true, false], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::BitAnd,
            &i64s(&[6, 5], &[2]),
            Scalar::Int(3),
            false,
        )
        .unwrap(),
        &i64s(&[2, 1], &[2]),
    );
    assert_err(
        Tensor::binary_scalar(
            BinaryOp::BitAnd,
            &i64s(&[6, 5], &[2]),
            Scalar::Float(1.0),
            false,
        ),
        ErrorKind::Type,
        "ufunc 'bitwise_and' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::BitOr,
            &bools(&[true, false], &[2]),
            Scalar::Int(2),
            false,
        )
        .unwrap(),
        &i64s(&[3, 2], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::BitXor,
            &bools(&[true, false], &[2]),
            Scalar::Bool(true),
            false,
        )
        .unwrap(),
        &bools(&[false, true], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(BinaryOp::LShift, &i64s(&[1, 2], &[2]), Scalar::Int(5), true)
            .unwrap(),
        &i64s(&[10, 20], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::RShift,
            &i32s(&[-8, 8], &[2]),
            Scalar::Int(1),
            false,
        )
        .unwrap(),
        &i32s(&[-4, 4], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Maximum,
            &i32s(&[1, -2], &[2]),
            Scalar::Int(0),
            false,
        )
        .unwrap(),
        &i32s(&[1, 0], &[2]),
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Minimum,
            &f32s(&[NAN32, 1.0], &[2]),
            Scalar::Float(0.5),
            false,
        )
        .unwrap(),
        &f32s(&[NAN32, 0.5], &[2]),
    );
    assert_err(
        Tensor::binary_scalar(
            BinaryOp::Sub,
            &bools(&[true], &[1]),
            Scalar::Bool(true),
            false,
        ),
        ErrorKind::Type,
        "numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead.",
    );
    assert_tensor(
        &Tensor::binary_scalar(
            BinaryOp::Add,
            &i32s(&[2147483647], &[1]),
            Scalar::Int(1),
            false,
        )
        .unwrap(),
        &i32s(&[-2147483648], &[1]),
    );
}

//! Construction, conversion and casts.

use super::*;

#[test]
fn from_nested() {
    assert_tensor(
        &Tensor::from_nested(
            &list(vec![list(vec![int(1), int(2)]), list(vec![int(3), int(4)])]),
            None,
        )
        .unwrap(),
        &i64s(&[1, 2, 3, 4], &[2, 2]),
    );
    // Deliberate deviation: float (and empty) literals default to float32.
    assert_tensor(
        &Tensor::from_nested(&list(vec![float(1.5), int(2)]), None).unwrap(),
        &f32s(&[1.5, 2.0], &[2]),
    );
    assert_tensor(
        &Tensor::from_nested(&list(vec![boolean(true), boolean(false)]), None).unwrap(),
        &bools(&[true, false], &[2]),
    );
    assert_tensor(
        &Tensor::from_nested(&list(vec![boolean(true), int(2)]), None).unwrap(),
        &i64s(&[1, 2], &[2]),
    );
    // Deliberate deviation: float (and empty) literals default to float32.
    assert_tensor(
        &Tensor::from_nested(&list(vec![boolean(true), float(2.5)]), None).unwrap(),
        &f32s(&[1.0, 2.5], &[2]),
    );
    // Deliberate deviation: float (and empty) literals default to float32.
    assert_tensor(
        &Tensor::from_nested(&list(vec![]), None).unwrap(),
        &f32s(&[], &[0]),
    );
    // Deliberate deviation: float (and empty) literals default to float32.
    assert_tensor(
        &Tensor::from_nested(&list(vec![list(vec![]), list(vec![])]), None).unwrap(),
        &f32s(&[], &[2, 0]),
    );
    assert_tensor(
        &Tensor::from_nested(&int(3), None).unwrap(),
        &i64s(&[3], &[]),
    );
    // Deliberate deviation: float (and empty) literals default to float32.
    assert_tensor(
        &Tensor::from_nested(&float(2.5), None).unwrap(),
        &f32s(&[2.5], &[]),
    );
    assert_tensor(
        &Tensor::from_nested(&boolean(true), None).unwrap(),
        &bools(&[true], &[]),
    );
    assert_tensor(
        &Tensor::from_nested(
            &list(vec![list(vec![list(vec![int(1)]), list(vec![int(2)])])]),
            None,
        )
        .unwrap(),
        &i64s(&[1, 2], &[1, 2, 1]),
    );
    assert_tensor(
        &Tensor::from_nested(&list(vec![float(1.5), float(-1.7)]), Some(DType::I64)).unwrap(),
        &i64s(&[1, -1], &[2]),
    );
    assert_tensor(
        &Tensor::from_nested(&list(vec![float(2.5)]), Some(DType::I32)).unwrap(),
        &i32s(&[2], &[1]),
    );
    assert_tensor(
        &Tensor::from_nested(&list(vec![float(-1.5), float(0.0)]), Some(DType::Bool)).unwrap(),
        &bools(&[true, false], &[2]),
    );
    assert_err(
        Tensor::from_nested(&list(vec![int(3000000000)]), Some(DType::I32)),
        ErrorKind::Overflow,
        "Python integer 3000000000 out of bounds for int32",
    );
    assert_err(
        Tensor::from_nested(&int(3000000000), Some(DType::I32)),
        ErrorKind::Overflow,
        "Python integer 3000000000 out of bounds for int32",
    );
    assert_err(
        Tensor::from_nested(&list(vec![float(NAN)]), Some(DType::I64)),
        ErrorKind::Value,
        "cannot convert float NaN to integer",
    );
    assert_err(
        Tensor::from_nested(&list(vec![float(INF)]), Some(DType::I32)),
        ErrorKind::Overflow,
        "cannot convert float infinity to integer",
    );
    assert_err(
        Tensor::from_nested(&list(vec![float(1e+30)]), Some(DType::I64)),
        ErrorKind::Overflow,
        "Python int too large to convert to C long",
    );
    assert_tensor(
        &Tensor::from_nested(&list(vec![int(4611686018427387904)]), Some(DType::F32)).unwrap(),
        &f32s(&[4.611686e+18], &[1]),
    );
    assert_tensor(
        &Tensor::from_nested(&list(vec![int(1), int(2)]), Some(DType::F64)).unwrap(),
        &f64s(&[1.0, 2.0], &[2]),
    );
    assert_tensor(
        &Tensor::from_nested(&list(vec![float(0.1)]), Some(DType::F64)).unwrap(),
        &f64s(&[0.1], &[1]),
    );
    assert_tensor(
        &Tensor::from_nested(&list(vec![boolean(true), boolean(false)]), Some(DType::F32)).unwrap(),
        &f32s(&[1.0, 0.0], &[2]),
    );
    assert_tensor(
        &Tensor::from_nested(
            &list(vec![int(-2147483648), int(2147483647)]),
            Some(DType::I32),
        )
        .unwrap(),
        &i32s(&[-2147483648, 2147483647], &[2]),
    );
    assert_err(
        Tensor::from_nested(
            &list(vec![list(vec![int(1), int(2)]), list(vec![int(3)])]),
            None,
        ),
        ErrorKind::Value,
        "setting an array element with a sequence. The requested array has an inhomogeneous shape after 1 dimensions. The detected shape was (2,) + inhomogeneous part.",
    );
    assert_err(
        Tensor::from_nested(&list(vec![int(1), list(vec![int(2), int(3)])]), None),
        ErrorKind::Value,
        "setting an array element with a sequence. The requested array has an inhomogeneous shape after 1 dimensions. The detected shape was (2,) + inhomogeneous part.",
    );
    assert_err(
        Tensor::from_nested(
            &list(vec![
                list(vec![int(1), int(2)]),
                list(vec![int(3), int(4), int(5)]),
            ]),
            None,
        ),
        ErrorKind::Value,
        "setting an array element with a sequence. The requested array has an inhomogeneous shape after 1 dimensions. The detected shape was (2,) + inhomogeneous part.",
    );
    assert_err(
        Tensor::from_nested(
            &list(vec![
                list(vec![list(vec![int(1)]), list(vec![int(2)])]),
                list(vec![list(vec![int(3)]), list(vec![int(4), int(5)])]),
            ]),
            None,
        ),
        ErrorKind::Value,
        "setting an array element with a sequence. The requested array has an inhomogeneous shape after 2 dimensions. The detected shape was (2, 2) + inhomogeneous part.",
    );
    assert_err(
        Tensor::from_nested(
            &list(vec![
                list(vec![int(1), list(vec![int(2)])]),
                list(vec![int(3), int(4)]),
            ]),
            None,
        ),
        ErrorKind::Value,
        "setting an array element with a sequence. The requested array has an inhomogeneous shape after 2 dimensions. The detected shape was (2, 2) + inhomogeneous part.",
    );
    assert_err(
        Tensor::from_nested(
            &list(vec![
                list(vec![int(1), int(2)]),
                list(vec![int(3), list(vec![int(4)])]),
            ]),
            None,
        ),
        ErrorKind::Value,
        "setting an array element with a sequence. The requested array has an inhomogeneous shape after 2 dimensions. The detected shape was (2, 2) + inhomogeneous part.",
    );
    assert_err(
        Tensor::from_nested(&list(vec![list(vec![]), list(vec![int(1)])]), None),
        ErrorKind::Value,
        "setting an array element with a sequence. The requested array has an inhomogeneous shape after 1 dimensions. The detected shape was (2,) + inhomogeneous part.",
    );
    assert_err(
        Tensor::from_nested(&list(vec![list(vec![int(1)]), list(vec![])]), None),
        ErrorKind::Value,
        "setting an array element with a sequence. The requested array has an inhomogeneous shape after 1 dimensions. The detected shape was (2,) + inhomogeneous part.",
    );
    assert_err(
        Tensor::from_nested(
            &list(vec![
                list(vec![list(vec![int(1), int(2)])]),
                list(vec![list(vec![int(3)])]),
            ]),
            None,
        ),
        ErrorKind::Value,
        "setting an array element with a sequence. The requested array has an inhomogeneous shape after 2 dimensions. The detected shape was (2, 1) + inhomogeneous part.",
    );
    assert_err(
        Tensor::from_nested(
            &list(vec![
                list(vec![list(vec![int(1), int(2)])]),
                list(vec![int(3)]),
            ]),
            None,
        ),
        ErrorKind::Value,
        "setting an array element with a sequence. The requested array has an inhomogeneous shape after 2 dimensions. The detected shape was (2, 1) + inhomogeneous part.",
    );
    assert_err(
        Tensor::from_nested(
            &list(vec![
                list(vec![int(1), int(2)]),
                list(vec![list(vec![int(3)]), list(vec![int(4)])]),
            ]),
            None,
        ),
        ErrorKind::Value,
        "setting an array element with a sequence. The requested array has an inhomogeneous shape after 2 dimensions. The detected shape was (2, 2) + inhomogeneous part.",
    );
    assert_err(
        Tensor::from_nested(&list(vec![list(vec![int(1)]), int(2)]), None),
        ErrorKind::Value,
        "setting an array element with a sequence. The requested array has an inhomogeneous shape after 1 dimensions. The detected shape was (2,) + inhomogeneous part.",
    );
}

/// numpy's length rule and fill: x[i] = x[0] + i * (x[1] - x[0]) in the result dtype.
#[test]
fn arange() {
    assert_tensor(
        &Tensor::arange(Scalar::Int(0), Scalar::Int(5), Scalar::Int(1), None).unwrap(),
        &i64s(&[0, 1, 2, 3, 4], &[5]),
    );
    assert_tensor(
        &Tensor::arange(Scalar::Int(0), Scalar::Int(10), Scalar::Int(3), None).unwrap(),
        &i64s(&[0, 3, 6, 9], &[4]),
    );
    assert_tensor(
        &Tensor::arange(Scalar::Int(10), Scalar::Int(0), Scalar::Int(-3), None).unwrap(),
        &i64s(&[10, 7, 4, 1], &[4]),
    );
    assert_tensor(
        &Tensor::arange(Scalar::Int(-3), Scalar::Int(3), Scalar::Int(2), None).unwrap(),
        &i64s(&[-3, -1, 1], &[3]),
    );
    assert_tensor(
        &Tensor::arange(Scalar::Int(5), Scalar::Int(1), Scalar::Int(1), None).unwrap(),
        &i64s(&[], &[0]),
    );
    assert_err(
        Tensor::arange(Scalar::Int(0), Scalar::Int(5), Scalar::Int(0), None),
        ErrorKind::ZeroDivision,
        "division by zero",
    );
    // Deliberate deviation: float arguments default to float32.
    assert_err(
        Tensor::arange(
            Scalar::Float(0.0),
            Scalar::Float(5.0),
            Scalar::Float(0.0),
            None,
        ),
        ErrorKind::ZeroDivision,
        "float division by zero",
    );
    // Deliberate deviation: float arguments default to float32.
    assert_tensor(
        &Tensor::arange(Scalar::Int(1), Scalar::Int(2), Scalar::Float(0.3), None).unwrap(),
        // float64 values cast to float32 (numpy's float32 arange would give 1.5999999).
        &f32s(&[1.0, 1.3, 1.6, 1.9], &[4]),
    );
    // Deliberate deviation: float arguments default to float32.
    assert_tensor(
        &Tensor::arange(Scalar::Int(0), Scalar::Int(1), Scalar::Float(0.1), None).unwrap(),
        &f32s(&[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], &[10]),
    );
    assert_tensor(
        &Tensor::arange(
            Scalar::Int(0),
            Scalar::Int(1),
            Scalar::Float(0.1),
            Some(DType::F64),
        )
        .unwrap(),
        &f64s(
            &[
                0.0,
                0.1,
                0.2,
                0.30000000000000004,
                0.4,
                0.5,
                0.6000000000000001,
                0.7000000000000001,
                0.8,
                0.9,
            ],
            &[10],
        ),
    );
    assert_tensor(
        &Tensor::arange(
            Scalar::Bool(true),
            Scalar::Int(3),
            Scalar::Int(1),
            Some(DType::I32),
        )
        .unwrap(),
        &i32s(&[1, 2], &[2]),
    );
    assert_tensor(
        &Tensor::arange(
            Scalar::Float(0.5),
            Scalar::Int(3),
            Scalar::Int(1),
            Some(DType::I64),
        )
        .unwrap(),
        &i64s(&[0, 1, 2], &[3]),
    );
    assert_tensor(
        &Tensor::arange(
            Scalar::Float(0.5),
            Scalar::Int(4),
            Scalar::Float(1.5),
            Some(DType::I64),
        )
        .unwrap(),
        // float64 values 0.5, 2.0, 3.5 truncated.
        &i64s(&[0, 2, 3], &[3]),
    );
    // Deliberate deviation: float arguments default to float32.
    assert_err(
        Tensor::arange(
            Scalar::Float(0.0),
            Scalar::Float(INF),
            Scalar::Float(1.0),
            None,
        ),
        ErrorKind::Value,
        "Maximum allowed size exceeded",
    );
    // Deliberate deviation: float arguments default to float32.
    assert_err(
        Tensor::arange(Scalar::Float(0.0), Scalar::Float(NAN), Scalar::Int(1), None),
        ErrorKind::Value,
        "arange: cannot compute length",
    );
    assert_tensor(
        &Tensor::arange(
            Scalar::Int(0),
            Scalar::Int(3),
            Scalar::Int(1),
            Some(DType::Bool),
        )
        .unwrap(),
        &bools(&[false, true, true], &[3]),
    );
    assert_tensor(
        &Tensor::arange(
            Scalar::Int(0),
            Scalar::Int(2),
            Scalar::Int(1),
            Some(DType::Bool),
        )
        .unwrap(),
        &bools(&[false, true], &[2]),
    );
    // Computed in int64, then cast (wrapping, as numpy's astype).
    assert_tensor(
        &Tensor::arange(
            Scalar::Int(0),
            Scalar::Int(4611686018427387904),
            Scalar::Int(2305843009213693952),
            Some(DType::I32),
        )
        .unwrap(),
        &i32s(&[0, 0], &[2]),
    );
    // Deliberate deviation: float arguments default to float32.
    assert_tensor(
        &Tensor::arange(Scalar::Int(0), Scalar::Int(10), Scalar::Float(3.0), None).unwrap(),
        &f32s(&[0.0, 3.0, 6.0, 9.0], &[4]),
    );
    assert_tensor(
        &Tensor::arange(
            Scalar::Float(2.5),
            Scalar::Int(-1),
            Scalar::Float(-0.5),
            Some(DType::F32),
        )
        .unwrap(),
        &f32s(&[2.5, 2.0, 1.5, 1.0, 0.5, 0.0, -0.5], &[7]),
    );
    assert_tensor(
        &Tensor::arange(
            Scalar::Int(0),
            Scalar::Int(1),
            Scalar::Float(0.1),
            Some(DType::F32),
        )
        .unwrap(),
        &f32s(&[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], &[10]),
    );
    assert_tensor(
        &Tensor::arange(Scalar::Int(1), Scalar::Int(1), Scalar::Int(1), None).unwrap(),
        &i64s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::arange(
            Scalar::Int(0),
            Scalar::Int(3),
            Scalar::Int(1),
            Some(DType::F32),
        )
        .unwrap(),
        &f32s(&[0.0, 1.0, 2.0], &[3]),
    );
}

#[test]
fn scalar_full_zeros_ones() {
    assert_err(
        Tensor::full(&[2], Scalar::Int(3000000000), DType::I32),
        ErrorKind::Overflow,
        "Python integer 3000000000 out of bounds for int32",
    );
    assert_err(
        Tensor::scalar(Scalar::Int(-3000000000), DType::I32),
        ErrorKind::Overflow,
        "Python integer -3000000000 out of bounds for int32",
    );
    assert_err(
        Tensor::full(&[], Scalar::Int(-3000000000), DType::I32),
        ErrorKind::Overflow,
        "Python integer -3000000000 out of bounds for int32",
    );
    assert_tensor(
        &Tensor::full(&[2, 2], Scalar::Float(2.7), DType::I32).unwrap(),
        &i32s(&[2, 2, 2, 2], &[2, 2]),
    );
    assert_tensor(
        &Tensor::scalar(Scalar::Float(-2.7), DType::I64).unwrap(),
        &i64s(&[-2], &[]),
    );
    assert_tensor(
        &Tensor::full(&[], Scalar::Float(-2.7), DType::I64).unwrap(),
        &i64s(&[-2], &[]),
    );
    assert_tensor(
        &Tensor::full(&[1], Scalar::Float(2.5), DType::Bool).unwrap(),
        &bools(&[true], &[1]),
    );
    assert_tensor(
        &Tensor::full(&[2], Scalar::Int(0), DType::Bool).unwrap(),
        &bools(&[false, false], &[2]),
    );
    assert_tensor(
        &Tensor::full(&[2], Scalar::Bool(true), DType::F32).unwrap(),
        &f32s(&[1.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::scalar(Scalar::Float(1e+40), DType::F32).unwrap(),
        &f32s(&[INF32], &[]),
    );
    assert_tensor(
        &Tensor::full(&[], Scalar::Float(1e+40), DType::F32).unwrap(),
        &f32s(&[INF32], &[]),
    );
    assert_tensor(
        &Tensor::scalar(Scalar::Float(0.1), DType::F32).unwrap(),
        &f32s(&[0.1], &[]),
    );
    assert_tensor(
        &Tensor::full(&[], Scalar::Float(0.1), DType::F32).unwrap(),
        &f32s(&[0.1], &[]),
    );
    assert_tensor(
        &Tensor::full(&[0, 2], Scalar::Int(7), DType::F64).unwrap(),
        &f64s(&[], &[0, 2]),
    );
    assert_err(
        Tensor::scalar(Scalar::Float(NAN), DType::I64),
        ErrorKind::Value,
        "cannot convert float NaN to integer",
    );
    assert_tensor(
        &Tensor::full(&[], Scalar::Float(NAN), DType::I64).unwrap(),
        &i64s(&[-9223372036854775808], &[]),
    );
    assert_tensor(
        &Tensor::full(&[1], Scalar::Float(-INF), DType::I64).unwrap(),
        &i64s(&[-9223372036854775808], &[1]),
    );
    assert_tensor(
        &Tensor::zeros(&[2, 1], DType::Bool).unwrap(),
        &bools(&[false, false], &[2, 1]),
    );
    assert_tensor(
        &Tensor::ones(&[3], DType::Bool).unwrap(),
        &bools(&[true, true, true], &[3]),
    );
    assert_tensor(
        &Tensor::zeros(&[2, 1], DType::I32).unwrap(),
        &i32s(&[0, 0], &[2, 1]),
    );
    assert_tensor(
        &Tensor::ones(&[3], DType::I32).unwrap(),
        &i32s(&[1, 1, 1], &[3]),
    );
    assert_tensor(
        &Tensor::zeros(&[2, 1], DType::I64).unwrap(),
        &i64s(&[0, 0], &[2, 1]),
    );
    assert_tensor(
        &Tensor::ones(&[3], DType::I64).unwrap(),
        &i64s(&[1, 1, 1], &[3]),
    );
    assert_tensor(
        &Tensor::zeros(&[2, 1], DType::F32).unwrap(),
        &f32s(&[0.0, 0.0], &[2, 1]),
    );
    assert_tensor(
        &Tensor::ones(&[3], DType::F32).unwrap(),
        &f32s(&[1.0, 1.0, 1.0], &[3]),
    );
    assert_tensor(
        &Tensor::zeros(&[2, 1], DType::F64).unwrap(),
        &f64s(&[0.0, 0.0], &[2, 1]),
    );
    assert_tensor(
        &Tensor::ones(&[3], DType::F64).unwrap(),
        &f64s(&[1.0, 1.0, 1.0], &[3]),
    );
}

/// C casts as numpy on x86: truncation toward zero, NaN and out-of-range floats give the integer minimum.
#[test]
fn cast_every_pair() {
    assert_tensor(
        &bools(&[true, false], &[2]).cast(DType::Bool),
        &bools(&[true, false], &[2]),
    );
    assert_tensor(
        &bools(&[true, false], &[2]).cast(DType::I32),
        &i32s(&[1, 0], &[2]),
    );
    assert_tensor(
        &bools(&[true, false], &[2]).cast(DType::I64),
        &i64s(&[1, 0], &[2]),
    );
    assert_tensor(
        &bools(&[true, false], &[2]).cast(DType::F32),
        &f32s(&[1.0, 0.0], &[2]),
    );
    assert_tensor(
        &bools(&[true, false], &[2]).cast(DType::F64),
        &f64s(&[1.0, 0.0], &[2]),
    );
    assert_tensor(
        &i32s(&[-2147483648, -1, 0, 7], &[4]).cast(DType::Bool),
        &bools(&[true, true, false, true], &[4]),
    );
    assert_tensor(
        &i32s(&[-2147483648, -1, 0, 7], &[4]).cast(DType::I32),
        &i32s(&[-2147483648, -1, 0, 7], &[4]),
    );
    assert_tensor(
        &i32s(&[-2147483648, -1, 0, 7], &[4]).cast(DType::I64),
        &i64s(&[-2147483648, -1, 0, 7], &[4]),
    );
    assert_tensor(
        &i32s(&[-2147483648, -1, 0, 7], &[4]).cast(DType::F32),
        &f32s(&[-2.1474836e+09, -1.0, 0.0, 7.0], &[4]),
    );
    assert_tensor(
        &i32s(&[-2147483648, -1, 0, 7], &[4]).cast(DType::F64),
        &f64s(&[-2147483648.0, -1.0, 0.0, 7.0], &[4]),
    );
    assert_tensor(
        &i64s(&[2147483653, -1099511627777, 0, 9007199254740993], &[4]).cast(DType::Bool),
        &bools(&[true, true, false, true], &[4]),
    );
    assert_tensor(
        &i64s(&[2147483653, -1099511627777, 0, 9007199254740993], &[4]).cast(DType::I32),
        &i32s(&[-2147483643, -1, 0, 1], &[4]),
    );
    assert_tensor(
        &i64s(&[2147483653, -1099511627777, 0, 9007199254740993], &[4]).cast(DType::I64),
        &i64s(&[2147483653, -1099511627777, 0, 9007199254740993], &[4]),
    );
    assert_tensor(
        &i64s(&[2147483653, -1099511627777, 0, 9007199254740993], &[4]).cast(DType::F32),
        &f32s(&[2.1474836e+09, -1.0995116e+12, 0.0, 9.007199e+15], &[4]),
    );
    assert_tensor(
        &i64s(&[2147483653, -1099511627777, 0, 9007199254740993], &[4]).cast(DType::F64),
        &f64s(
            &[2147483653.0, -1099511627777.0, 0.0, 9007199254740992.0],
            &[4],
        ),
    );
    assert_tensor(
        &f32s(&[-2.7, 2.7, 0.0, -0.0, NAN32, INF32, 3e+09, 1e+20], &[8]).cast(DType::Bool),
        &bools(&[true, true, false, false, true, true, true, true], &[8]),
    );
    assert_tensor(
        &f32s(&[-2.7, 2.7, 0.0, -0.0, NAN32, INF32, 3e+09, 1e+20], &[8]).cast(DType::I32),
        &i32s(
            &[
                -2,
                2,
                0,
                0,
                -2147483648,
                -2147483648,
                -2147483648,
                -2147483648,
            ],
            &[8],
        ),
    );
    assert_tensor(
        &f32s(&[-2.7, 2.7, 0.0, -0.0, NAN32, INF32, 3e+09, 1e+20], &[8]).cast(DType::I64),
        &i64s(
            &[
                -2,
                2,
                0,
                0,
                -9223372036854775808,
                -9223372036854775808,
                3000000000,
                -9223372036854775808,
            ],
            &[8],
        ),
    );
    assert_tensor(
        &f32s(&[-2.7, 2.7, 0.0, -0.0, NAN32, INF32, 3e+09, 1e+20], &[8]).cast(DType::F32),
        &f32s(&[-2.7, 2.7, 0.0, -0.0, NAN32, INF32, 3e+09, 1e+20], &[8]),
    );
    assert_tensor(
        &f32s(&[-2.7, 2.7, 0.0, -0.0, NAN32, INF32, 3e+09, 1e+20], &[8]).cast(DType::F64),
        &f64s(
            &[
                -2.700000047683716,
                2.700000047683716,
                0.0,
                -0.0,
                NAN,
                INF,
                3000000000.0,
                1.0000000200408773e+20,
            ],
            &[8],
        ),
    );
    assert_tensor(
        &f64s(
            &[
                -2.7,
                2.7,
                0.0,
                -0.0,
                NAN,
                INF,
                -INF,
                3000000000.0,
                -3000000000.0,
                1e+20,
                0.1,
            ],
            &[11],
        )
        .cast(DType::Bool),
        &bools(
            &[
                true, true, false, false, true, true, true, true, true, true, true,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &f64s(
            &[
                -2.7,
                2.7,
                0.0,
                -0.0,
                NAN,
                INF,
                -INF,
                3000000000.0,
                -3000000000.0,
                1e+20,
                0.1,
            ],
            &[11],
        )
        .cast(DType::I32),
        &i32s(
            &[
                -2,
                2,
                0,
                0,
                -2147483648,
                -2147483648,
                -2147483648,
                -2147483648,
                -2147483648,
                -2147483648,
                0,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &f64s(
            &[
                -2.7,
                2.7,
                0.0,
                -0.0,
                NAN,
                INF,
                -INF,
                3000000000.0,
                -3000000000.0,
                1e+20,
                0.1,
            ],
            &[11],
        )
        .cast(DType::I64),
        &i64s(
            &[
                -2,
                2,
                0,
                0,
                -9223372036854775808,
                -9223372036854775808,
                -9223372036854775808,
                3000000000,
                -3000000000,
                -9223372036854775808,
                0,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &f64s(
            &[
                -2.7,
                2.7,
                0.0,
                -0.0,
                NAN,
                INF,
                -INF,
                3000000000.0,
                -3000000000.0,
                1e+20,
                0.1,
            ],
            &[11],
        )
        .cast(DType::F32),
        &f32s(
            &[
                -2.7, 2.7, 0.0, -0.0, NAN32, INF32, -INF32, 3e+09, -3e+09, 1e+20, 0.1,
            ],
            &[11],
        ),
    );
    assert_tensor(
        &f64s(
            &[
                -2.7,
                2.7,
                0.0,
                -0.0,
                NAN,
                INF,
                -INF,
                3000000000.0,
                -3000000000.0,
                1e+20,
                0.1,
            ],
            &[11],
        )
        .cast(DType::F64),
        &f64s(
            &[
                -2.7,
                2.7,
                0.0,
                -0.0,
                NAN,
                INF,
                -INF,
                3000000000.0,
                -3000000000.0,
                1e+20,
                0.1,
            ],
            &[11],
        ),
    );
}

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
        &f32s(&[4.611686018427388e+18], &[1]),
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
        &f32s(
            &[
                1.0,
                1.2999999523162842,
                1.5999999046325684,
                1.8999998569488525,
            ],
            &[4],
        ),
    );
    // Deliberate deviation: float arguments default to float32.
    assert_tensor(
        &Tensor::arange(Scalar::Int(0), Scalar::Int(1), Scalar::Float(0.1), None).unwrap(),
        &f32s(
            &[
                0.0,
                0.10000000149011612,
                0.20000000298023224,
                0.30000001192092896,
                0.4000000059604645,
                0.5,
                0.6000000238418579,
                0.699999988079071,
                0.800000011920929,
                0.9000000357627869,
            ],
            &[10],
        ),
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
        &i64s(&[0, 2, 4], &[3]),
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
    assert_err(
        Tensor::arange(
            Scalar::Int(0),
            Scalar::Int(3),
            Scalar::Int(1),
            Some(DType::Bool),
        ),
        ErrorKind::Type,
        "arange() is only supported for booleans when the result has at most length 2.",
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
    assert_err(
        Tensor::arange(
            Scalar::Int(0),
            Scalar::Int(4611686018427387904),
            Scalar::Int(2305843009213693952),
            Some(DType::I32),
        ),
        ErrorKind::Overflow,
        "Python integer 2305843009213693952 out of bounds for int32",
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
        &f32s(
            &[
                0.0,
                0.10000000149011612,
                0.20000000298023224,
                0.30000001192092896,
                0.4000000059604645,
                0.5,
                0.6000000238418579,
                0.699999988079071,
                0.800000011920929,
                0.9000000357627869,
            ],
            &[10],
        ),
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
        &f32s(&[0.10000000149011612], &[]),
    );
    assert_tensor(
        &Tensor::full(&[], Scalar::Float(0.1), DType::F32).unwrap(),
        &f32s(&[0.10000000149011612], &[]),
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
        &Tensor::zeros(&[2, 1], DType::Bool),
        &bools(&[false, false], &[2, 1]),
    );
    assert_tensor(
        &Tensor::ones(&[3], DType::Bool),
        &bools(&[true, true, true], &[3]),
    );
    assert_tensor(&Tensor::zeros(&[2, 1], DType::I32), &i32s(&[0, 0], &[2, 1]));
    assert_tensor(&Tensor::ones(&[3], DType::I32), &i32s(&[1, 1, 1], &[3]));
    assert_tensor(&Tensor::zeros(&[2, 1], DType::I64), &i64s(&[0, 0], &[2, 1]));
    assert_tensor(&Tensor::ones(&[3], DType::I64), &i64s(&[1, 1, 1], &[3]));
    assert_tensor(
        &Tensor::zeros(&[2, 1], DType::F32),
        &f32s(&[0.0, 0.0], &[2, 1]),
    );
    assert_tensor(
        &Tensor::ones(&[3], DType::F32),
        &f32s(&[1.0, 1.0, 1.0], &[3]),
    );
    assert_tensor(
        &Tensor::zeros(&[2, 1], DType::F64),
        &f64s(&[0.0, 0.0], &[2, 1]),
    );
    assert_tensor(
        &Tensor::ones(&[3], DType::F64),
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
        &f32s(&[-2147483648.0, -1.0, 0.0, 7.0], &[4]),
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
        &f32s(
            &[2147483648.0, -1099511627776.0, 0.0, 9007199254740992.0],
            &[4],
        ),
    );
    assert_tensor(
        &i64s(&[2147483653, -1099511627777, 0, 9007199254740993], &[4]).cast(DType::F64),
        &f64s(
            &[2147483653.0, -1099511627777.0, 0.0, 9007199254740992.0],
            &[4],
        ),
    );
    assert_tensor(
        &f32s(
            &[
                -2.700000047683716,
                2.700000047683716,
                0.0,
                -0.0,
                NAN32,
                INF32,
                3000000000.0,
                1.0000000200408773e+20,
            ],
            &[8],
        )
        .cast(DType::Bool),
        &bools(&[true, true, false, false, true, true, true, true], &[8]),
    );
    assert_tensor(
        &f32s(
            &[
                -2.700000047683716,
                2.700000047683716,
                0.0,
                -0.0,
                NAN32,
                INF32,
                3000000000.0,
                1.0000000200408773e+20,
            ],
            &[8],
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
            ],
            &[8],
        ),
    );
    assert_tensor(
        &f32s(
            &[
                -2.700000047683716,
                2.700000047683716,
                0.0,
                -0.0,
                NAN32,
                INF32,
                3000000000.0,
                1.0000000200408773e+20,
            ],
            &[8],
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
                3000000000,
                -9223372036854775808,
            ],
            &[8],
        ),
    );
    assert_tensor(
        &f32s(
            &[
                -2.700000047683716,
                2.700000047683716,
                0.0,
                -0.0,
                NAN32,
                INF32,
                3000000000.0,
                1.0000000200408773e+20,
            ],
            &[8],
        )
        .cast(DType::F32),
        &f32s(
            &[
                -2.700000047683716,
                2.700000047683716,
                0.0,
                -0.0,
                NAN32,
                INF32,
                3000000000.0,
                1.0000000200408773e+20,
            ],
            &[8],
        ),
    );
    assert_tensor(
        &f32s(
            &[
                -2.700000047683716,
                2.700000047683716,
                0.0,
                -0.0,
                NAN32,
                INF32,
                3000000000.0,
                1.0000000200408773e+20,
            ],
            &[8],
        )
        .cast(DType::F64),
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
                -2.700000047683716,
                2.700000047683716,
                0.0,
                -0.0,
                NAN32,
                INF32,
                -INF32,
                3000000000.0,
                -3000000000.0,
                1.0000000200408773e+20,
                0.10000000149011612,
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

#[test]
fn item_truth_and_flat_access() {
    assert_eq!(f32s(&[2.5], &[1, 1]).item().unwrap(), Scalar::Float(2.5));
    assert_eq!(i32s(&[-4], &[]).item().unwrap(), Scalar::Int(-4));
    assert_eq!(bools(&[true], &[1]).item().unwrap(), Scalar::Bool(true));
    for t in [i64s(&[1, 2], &[2]), f64s(&[], &[0])] {
        assert_err(
            t.item(),
            ErrorKind::Value,
            "can only convert an array of size 1 to a Python scalar",
        );
    }
    assert_eq!(f64s(&[0.0], &[1, 1]).truth().unwrap(), false);
    assert_eq!(f64s(&[-0.0], &[]).truth().unwrap(), false);
    assert_eq!(f64s(&[NAN], &[]).truth().unwrap(), true);
    assert_eq!(i32s(&[-3], &[1]).truth().unwrap(), true);
    assert_eq!(bools(&[false], &[]).truth().unwrap(), false);
    assert_err(
        f32s(&[], &[0]).truth(),
        ErrorKind::Value,
        "The truth value of an empty array is ambiguous. Use `array.size > 0` to check that an \
         array is not empty.",
    );
    assert_err(
        i64s(&[1, 2], &[2]).truth(),
        ErrorKind::Value,
        "The truth value of an array with more than one element is ambiguous. Use a.any() or \
         a.all()",
    );
    let t = ar(6, DType::F32).reshape(&[2, 3]).unwrap();
    assert_eq!(t.get_flat(4), Scalar::Float(4.0));
    assert_eq!(t.to_f64_vec(), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(
        t.as_f32_slice(),
        Some(&[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0][..])
    );
    assert_eq!(t.as_f64_slice(), None);
    assert_eq!(
        bools(&[true, false], &[2]).to_scalars(),
        vec![Scalar::Bool(true), Scalar::Bool(false)]
    );
    assert_eq!((t.ndim(), t.numel(), t.dtype()), (2, 6, DType::F32));
}

#[test]
fn same_as_is_exact() {
    let a = f64s(&[1.0, NAN], &[2]);
    assert!(a.same_as(&f64s(&[1.0, NAN], &[2])));
    assert!(!a.same_as(&f64s(&[1.0, NAN], &[1, 2])));
    assert!(!a.same_as(&f32s(&[1.0, NAN32], &[2])));
    assert!(!f64s(&[0.0], &[1]).same_as(&f64s(&[-0.0], &[1])));
    assert!(i64s(&[], &[0, 3]).same_as(&i64s(&[], &[0, 3])));
    assert!(!i64s(&[], &[0, 3]).same_as(&i64s(&[], &[3, 0])));
}

#[test]
fn constructors_check_the_element_count() {
    assert_err(
        Tensor::from_f32(vec![1.0, 2.0, 3.0], &[2, 2]),
        ErrorKind::Value,
        "cannot reshape array of size 3 into shape (2,2)",
    );
    assert_err(
        Tensor::from_bool(vec![], &[1]),
        ErrorKind::Value,
        "cannot reshape array of size 0 into shape (1,)",
    );
    assert_eq!(
        Tensor::from_i64(vec![7], &[]).unwrap().shape(),
        &[] as &[usize]
    );
}

#[test]
fn cast_to_the_same_dtype_shares_storage() {
    let t = ar(4, DType::I32);
    assert!(t.cast(DType::I32).shares_storage(&t));
    assert!(!t.cast(DType::I64).shares_storage(&t));
}

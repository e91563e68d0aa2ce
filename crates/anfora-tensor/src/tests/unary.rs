//! Unary ops.

use super::*;

#[test]
fn negative_on_each_dtype() {
    assert_err(
        Tensor::unary(UnaryOp::Neg, &bools(&[true, false], &[2])),
        ErrorKind::Type,
        "The numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the logical_not function instead.",
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Neg, &i32s(&[0, 5, -7, -2147483648], &[4])).unwrap(),
        &i32s(&[0, -5, 7, -2147483648], &[4]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Neg, &i64s(&[0, 5, -7, -9223372036854775808], &[4])).unwrap(),
        &i64s(&[0, -5, 7, -9223372036854775808], &[4]),
    );
    assert_tensor(
        &Tensor::unary(
            UnaryOp::Neg,
            &f32s(&[0.0, -0.0, 1.5, -2.5, INF32, -INF32, NAN32], &[7]),
        )
        .unwrap(),
        &f32s(&[-0.0, 0.0, -1.5, 2.5, -INF32, INF32, NAN32], &[7]),
    );
    assert_tensor(
        &Tensor::unary(
            UnaryOp::Neg,
            &f64s(&[0.0, -0.0, 1.5, -2.5, INF, -INF, NAN], &[7]),
        )
        .unwrap(),
        &f64s(&[-0.0, 0.0, -1.5, 2.5, -INF, INF, NAN], &[7]),
    );
}

#[test]
fn positive_on_each_dtype() {
    assert_err(
        Tensor::unary(UnaryOp::Pos, &bools(&[true, false], &[2])),
        ErrorKind::Type,
        "ufunc 'positive' did not contain a loop with signature matching types <class 'numpy.dtypes.BoolDType'> -> None",
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Pos, &i32s(&[0, 5, -7, -2147483648], &[4])).unwrap(),
        &i32s(&[0, 5, -7, -2147483648], &[4]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Pos, &i64s(&[0, 5, -7, -9223372036854775808], &[4])).unwrap(),
        &i64s(&[0, 5, -7, -9223372036854775808], &[4]),
    );
    assert_tensor(
        &Tensor::unary(
            UnaryOp::Pos,
            &f32s(&[0.0, -0.0, 1.5, -2.5, INF32, -INF32, NAN32], &[7]),
        )
        .unwrap(),
        &f32s(&[0.0, -0.0, 1.5, -2.5, INF32, -INF32, NAN32], &[7]),
    );
    assert_tensor(
        &Tensor::unary(
            UnaryOp::Pos,
            &f64s(&[0.0, -0.0, 1.5, -2.5, INF, -INF, NAN], &[7]),
        )
        .unwrap(),
        &f64s(&[0.0, -0.0, 1.5, -2.5, INF, -INF, NAN], &[7]),
    );
}

#[test]
fn absolute_on_each_dtype() {
    assert_tensor(
        &Tensor::unary(UnaryOp::Abs, &bools(&[true, false], &[2])).unwrap(),
        &bools(&[true, false], &[2]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Abs, &i32s(&[0, 5, -7, -2147483648], &[4])).unwrap(),
        &i32s(&[0, 5, 7, -2147483648], &[4]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Abs, &i64s(&[0, 5, -7, -9223372036854775808], &[4])).unwrap(),
        &i64s(&[0, 5, 7, -9223372036854775808], &[4]),
    );
    assert_tensor(
        &Tensor::unary(
            UnaryOp::Abs,
            &f32s(&[0.0, -0.0, 1.5, -2.5, INF32, -INF32, NAN32], &[7]),
        )
        .unwrap(),
        &f32s(&[0.0, 0.0, 1.5, 2.5, INF32, INF32, NAN32], &[7]),
    );
    assert_tensor(
        &Tensor::unary(
            UnaryOp::Abs,
            &f64s(&[0.0, -0.0, 1.5, -2.5, INF, -INF, NAN], &[7]),
        )
        .unwrap(),
        &f64s(&[0.0, 0.0, 1.5, 2.5, INF, INF, NAN], &[7]),
    );
}

#[test]
fn invert_on_each_dtype() {
    assert_tensor(
        &Tensor::unary(UnaryOp::Invert, &bools(&[true, false], &[2])).unwrap(),
        &bools(&[false, true], &[2]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Invert, &i32s(&[0, 5, -7, -2147483648], &[4])).unwrap(),
        &i32s(&[-1, -6, 6, 2147483647], &[4]),
    );
    assert_tensor(
        &Tensor::unary(
            UnaryOp::Invert,
            &i64s(&[0, 5, -7, -9223372036854775808], &[4]),
        )
        .unwrap(),
        &i64s(&[-1, -6, 6, 9223372036854775807], &[4]),
    );
    assert_err(
        Tensor::unary(
            UnaryOp::Invert,
            &f32s(&[0.0, -0.0, 1.5, -2.5, INF32, -INF32, NAN32], &[7]),
        ),
        ErrorKind::Type,
        "ufunc 'invert' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
    assert_err(
        Tensor::unary(
            UnaryOp::Invert,
            &f64s(&[0.0, -0.0, 1.5, -2.5, INF, -INF, NAN], &[7]),
        ),
        ErrorKind::Type,
        "ufunc 'invert' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''",
    );
}

#[test]
fn logical_not_on_each_dtype() {
    assert_tensor(
        &Tensor::unary(UnaryOp::LogicalNot, &bools(&[true, false], &[2])).unwrap(),
        &bools(&[false, true], &[2]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::LogicalNot, &i32s(&[0, 5, -7, -2147483648], &[4])).unwrap(),
        &bools(&[true, false, false, false], &[4]),
    );
    assert_tensor(
        &Tensor::unary(
            UnaryOp::LogicalNot,
            &i64s(&[0, 5, -7, -9223372036854775808], &[4]),
        )
        .unwrap(),
        &bools(&[true, false, false, false], &[4]),
    );
    assert_tensor(
        &Tensor::unary(
            UnaryOp::LogicalNot,
            &f32s(&[0.0, -0.0, 1.5, -2.5, INF32, -INF32, NAN32], &[7]),
        )
        .unwrap(),
        &bools(&[true, true, false, false, false, false, false], &[7]),
    );
    assert_tensor(
        &Tensor::unary(
            UnaryOp::LogicalNot,
            &f64s(&[0.0, -0.0, 1.5, -2.5, INF, -INF, NAN], &[7]),
        )
        .unwrap(),
        &bools(&[true, true, false, false, false, false, false], &[7]),
    );
}

#[test]
fn float_functions_exact_cases() {
    assert_tensor(
        &Tensor::unary(UnaryOp::Exp, &f32s(&[0.0, -INF32, INF32, NAN32], &[4])).unwrap(),
        &f32s(&[1.0, 0.0, INF32, NAN32], &[4]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Exp, &f64s(&[0.0, -INF, INF, NAN], &[4])).unwrap(),
        &f64s(&[1.0, 0.0, INF, NAN], &[4]),
    );
    // Integer inputs compute in float64.
    assert_tensor(
        &Tensor::unary(UnaryOp::Exp, &i32s(&[0, 0], &[2])).unwrap(),
        &f64s(&[1.0, 1.0], &[2]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Log, &f32s(&[1.0, 0.0, -1.0, INF32], &[4])).unwrap(),
        &f32s(&[0.0, -INF32, NAN32, INF32], &[4]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Log, &f64s(&[1.0, 0.0, -1.0, INF], &[4])).unwrap(),
        &f64s(&[0.0, -INF, NAN, INF], &[4]),
    );
    // Integer inputs compute in float64.
    assert_tensor(
        &Tensor::unary(UnaryOp::Log, &i64s(&[1, 0], &[2])).unwrap(),
        &f64s(&[0.0, -INF], &[2]),
    );
    assert_tensor(
        &Tensor::unary(
            UnaryOp::Sqrt,
            &f32s(&[4.0, 2.0, 0.0, -0.0, -1.0, INF32, 0.25], &[7]),
        )
        .unwrap(),
        &f32s(&[2.0, 1.4142135, 0.0, -0.0, NAN32, INF32, 0.5], &[7]),
    );
    assert_tensor(
        &Tensor::unary(
            UnaryOp::Sqrt,
            &f64s(&[4.0, 2.0, 0.0, -0.0, -1.0, INF, 0.25], &[7]),
        )
        .unwrap(),
        &f64s(&[2.0, 1.4142135623730951, 0.0, -0.0, NAN, INF, 0.5], &[7]),
    );
    // Integer inputs compute in float64.
    assert_tensor(
        &Tensor::unary(UnaryOp::Sqrt, &i32s(&[1, 4, 0], &[3])).unwrap(),
        &f64s(&[1.0, 2.0, 0.0], &[3]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Tanh, &f32s(&[0.0, -0.0, INF32, -INF32], &[4])).unwrap(),
        &f32s(&[0.0, -0.0, 1.0, -1.0], &[4]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Tanh, &f64s(&[0.0, -0.0, INF, -INF], &[4])).unwrap(),
        &f64s(&[0.0, -0.0, 1.0, -1.0], &[4]),
    );
    // Integer inputs compute in float64.
    assert_tensor(
        &Tensor::unary(UnaryOp::Tanh, &i32s(&[0, 0], &[2])).unwrap(),
        &f64s(&[0.0, 0.0], &[2]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Sin, &f32s(&[0.0, -0.0, INF32], &[3])).unwrap(),
        &f32s(&[0.0, -0.0, NAN32], &[3]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Sin, &f64s(&[0.0, -0.0, INF], &[3])).unwrap(),
        &f64s(&[0.0, -0.0, NAN], &[3]),
    );
    // Integer inputs compute in float64.
    assert_tensor(
        &Tensor::unary(UnaryOp::Sin, &i32s(&[0, 0], &[2])).unwrap(),
        &f64s(&[0.0, 0.0], &[2]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Cos, &f32s(&[0.0, -INF32], &[2])).unwrap(),
        &f32s(&[1.0, NAN32], &[2]),
    );
    assert_tensor(
        &Tensor::unary(UnaryOp::Cos, &f64s(&[0.0, -INF], &[2])).unwrap(),
        &f64s(&[1.0, NAN], &[2]),
    );
    // Integer inputs compute in float64.
    assert_tensor(
        &Tensor::unary(UnaryOp::Cos, &i32s(&[0, 0], &[2])).unwrap(),
        &f64s(&[1.0, 1.0], &[2]),
    );
}

#[test]
fn float_functions_close_to_numpy() {
    // Away from exact cases libm and numpy's SIMD kernels may differ by an ulp: compare closely.
    close(
        &Tensor::unary(UnaryOp::Exp, &f32s(&[1.0, 2.0], &[2])).unwrap(),
        DType::F32,
        &[2.7182819843292236, 7.3890557289123535],
    );
    close(
        &Tensor::unary(UnaryOp::Log, &f32s(&[1.0, 2.0], &[2])).unwrap(),
        DType::F32,
        &[0.0, 0.6931471824645996],
    );
    close(
        &Tensor::unary(UnaryOp::Tanh, &f64s(&[0.0, -1.0, 1.0], &[3])).unwrap(),
        DType::F64,
        &[0.0, -0.7615941559557649, 0.7615941559557649],
    );
    close(
        &Tensor::unary(UnaryOp::Sin, &f64s(&[0.0, -1.0, 1.0], &[3])).unwrap(),
        DType::F64,
        &[0.0, -0.8414709848078965, 0.8414709848078965],
    );
    close(
        &Tensor::unary(UnaryOp::Cos, &f64s(&[0.0, -1.0, 1.0], &[3])).unwrap(),
        DType::F64,
        &[1.0, 0.5403023058681398, 0.5403023058681398],
    );
    close(
        &Tensor::unary(UnaryOp::Exp, &i64s(&[1, 2], &[2])).unwrap(),
        DType::F64,
        &[2.718281828459045, 7.38905609893065],
    );
}

#[track_caller]
fn close(t: &Tensor, dtype: DType, expected: &[f64]) {
    assert_eq!(t.dtype(), dtype);
    let got = t.to_f64_vec();
    assert_eq!(got.len(), expected.len());
    // One f32 ulp is about 1.2e-7 relative; f64 results must agree to ~1e-15.
    let tol = if dtype == DType::F32 { 2.5e-7 } else { 4e-16 };
    for (g, e) in got.iter().zip(expected) {
        assert!((g - e).abs() <= tol * e.abs().max(1e-300), "{g} vs {e}");
    }
}

#[test]
fn sigmoid_is_stable() {
    let x = f64s(&[0.0, 2.0, -2.0, 800.0, -800.0, INF, -INF, NAN], &[8]);
    let y = Tensor::unary(UnaryOp::Sigmoid, &x).unwrap();
    let expected = [
        0.5,
        0.8807970779778823,
        0.11920292202211755,
        1.0,
        0.0,
        1.0,
        0.0,
        f64::NAN,
    ];
    let got = y.as_f64_slice().unwrap();
    // Within 2 ulp of numpy (anfora's own sigmoid gives the correctly rounded
    // 0.8807970779778824 at 2, where numpy's is 1.2 ulp off).
    for (g, e) in got.iter().zip(&expected) {
        assert!(
            (g - e).abs() <= 2.3e-16 || (g.is_nan() && e.is_nan()),
            "{g} vs {e}"
        );
    }
    // float32 stays float32 and saturates without overflow.
    let y = Tensor::unary(UnaryOp::Sigmoid, &f32s(&[0.0, -200.0, 200.0, -100.0], &[4])).unwrap();
    // e**-100 is a float32 subnormal, about 3.7835e-44.
    assert_tensor(&y, &f32s(&[0.5, 0.0, 1.0, f32::from_bits(27)], &[4]));
    // Integers compute in float64.
    let y = Tensor::unary(UnaryOp::Sigmoid, &i32s(&[0], &[1])).unwrap();
    assert_tensor(&y, &f64s(&[0.5], &[1]));
}

#[test]
fn relu_keeps_dtype() {
    let y = Tensor::unary(UnaryOp::Relu, &i32s(&[-3, 0, 7], &[3])).unwrap();
    assert_tensor(&y, &i32s(&[0, 0, 7], &[3]));
    // np.maximum(x, 0): NaN propagates and -0.0 becomes 0.0.
    let y = Tensor::unary(
        UnaryOp::Relu,
        &f32s(&[-1.5, -0.0, 2.5, NAN32, -INF32], &[5]),
    )
    .unwrap();
    assert_tensor(&y, &f32s(&[0.0, 0.0, 2.5, NAN32, 0.0], &[5]));
    let y = Tensor::unary(UnaryOp::Relu, &i64s(&[-1, 2, -3, 4], &[2, 2])).unwrap();
    assert_tensor(&y, &i64s(&[0, 2, 0, 4], &[2, 2]));
    assert_err(
        Tensor::unary(UnaryOp::Relu, &bools(&[true], &[1])),
        ErrorKind::Type,
        "relu is not supported for boolean tensors",
    );
}

#[test]
fn bool_inputs_to_float_functions_give_float64() {
    // Deliberate deviation: numpy picks float16, which anfora does not have.
    let y = Tensor::unary(UnaryOp::Sqrt, &bools(&[true, false], &[2])).unwrap();
    assert_tensor(&y, &f64s(&[1.0, 0.0], &[2]));
}

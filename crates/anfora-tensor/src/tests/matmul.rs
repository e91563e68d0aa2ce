//! matmul.

use super::*;

#[test]
fn shapes_dtypes_and_values() {
    assert_tensor(
        &Tensor::matmul(
            &f64s(&[-3.0, -3.0, 3.0], &[3]),
            &f64s(&[0.0, 1.0, 1.0], &[3]),
        )
        .unwrap(),
        &f64s(&[0.0], &[]),
    );
    assert_tensor(
        &Tensor::matmul(
            &f32s(&[2.0, -4.0, 0.0, -3.0, -1.0, 4.0], &[2, 3]),
            &f32s(&[0.0, -4.0, 0.0], &[3]),
        )
        .unwrap(),
        &f32s(&[16.0, 4.0], &[2]),
    );
    assert_tensor(
        &Tensor::matmul(
            &f64s(&[-3.0, 2.0, 4.0], &[3]),
            &f64s(&[4.0, 1.0, 3.0, -1.0, -3.0, 0.0], &[3, 2]),
        )
        .unwrap(),
        &f64s(&[-18.0, -5.0], &[2]),
    );
    assert_tensor(
        &Tensor::matmul(
            &f32s(&[-1.0, 1.0, 4.0, -2.0, 3.0, -3.0], &[2, 3]),
            &f32s(
                &[-1.0, 3.0, -2.0, 2.0, 0.0, 0.0, 4.0, 3.0, 3.0, 0.0, 4.0, 4.0],
                &[3, 4],
            ),
        )
        .unwrap(),
        &f32s(&[13.0, -3.0, 22.0, 17.0, -7.0, -6.0, 4.0, -7.0], &[2, 4]),
    );
    assert_tensor(
        &Tensor::matmul(
            &f64s(
                &[
                    -3.0, -3.0, -2.0, 0.0, 3.0, 0.0, 4.0, -1.0, 4.0, 1.0, 2.0, -2.0,
                ],
                &[2, 2, 3],
            ),
            &f64s(&[1.0, 3.0, 3.0, 3.0, 4.0, -3.0], &[3, 2]),
        )
        .unwrap(),
        &f64s(
            &[-20.0, -12.0, 9.0, 9.0, 17.0, -3.0, -1.0, 15.0],
            &[2, 2, 2],
        ),
    );
    assert_tensor(
        &Tensor::matmul(
            &f32s(
                &[
                    3.0, 0.0, 2.0, -2.0, -4.0, -4.0, 4.0, 4.0, -2.0, -1.0, -2.0, -3.0,
                ],
                &[2, 1, 2, 3],
            ),
            &f32s(
                &[
                    3.0, 2.0, -4.0, -3.0, 1.0, 4.0, 4.0, -3.0, 1.0, -4.0, -3.0, -3.0, -1.0, -1.0,
                    2.0, 0.0, -1.0, 4.0,
                ],
                &[3, 3, 2],
            ),
        )
        .unwrap(),
        &f32s(
            &[
                11.0, 14.0, 6.0, -8.0, 6.0, -15.0, 0.0, 34.0, -5.0, 5.0, -2.0, -14.0, -6.0, -12.0,
                2.0, -8.0, 26.0, -22.0, 3.0, 20.0, 6.0, -12.0, 0.0, -11.0,
            ],
            &[2, 3, 2, 2],
        ),
    );
    assert_tensor(
        &Tensor::matmul(
            &f64s(&[1.0, 2.0, 2.0, -1.0, 4.0, -4.0], &[1, 2, 3]),
            &f64s(
                &[
                    -2.0, -3.0, -4.0, 4.0, -4.0, 0.0, 3.0, 2.0, 3.0, -4.0, 0.0, -4.0,
                ],
                &[4, 3, 1],
            ),
        )
        .unwrap(),
        &f64s(
            &[-16.0, 6.0, -4.0, -20.0, 13.0, -7.0, -12.0, 20.0],
            &[4, 2, 1],
        ),
    );
    assert_tensor(
        &Tensor::matmul(
            &i32s(&[-3, 3, -4, 1, -4, -2], &[2, 3]),
            &i32s(&[4, -2, -2, -4, 2, -3], &[3, 2]),
        )
        .unwrap(),
        &i32s(&[-26, 6, 8, 20], &[2, 2]),
    );
    assert_tensor(
        &Tensor::matmul(
            &i64s(&[0, -4, -4, 3, -4, 0], &[2, 3]),
            &i64s(&[-1, -3, 1, 2, 4, -3], &[3, 2]),
        )
        .unwrap(),
        &i64s(&[-20, 4, -7, -17], &[2, 2]),
    );
    assert_tensor(
        &Tensor::matmul(
            &i32s(&[4, -4, -3, 1, 3, 4], &[2, 3]),
            &f32s(&[2.0, -4.0, -1.0], &[3]),
        )
        .unwrap(),
        &f64s(&[27.0, -14.0], &[2]),
    );
    assert_tensor(
        &Tensor::matmul(&i32s(&[3, 0, -3], &[3]), &i32s(&[2, -4, 2], &[3])).unwrap(),
        &i32s(&[0], &[]),
    );
    assert_tensor(
        &Tensor::matmul(
            &bools(&[true, true, true, true], &[2, 2]),
            &bools(&[true, true, false, true], &[2, 2]),
        )
        .unwrap(),
        &bools(&[true, true, true, true], &[2, 2]),
    );
    assert_tensor(
        &Tensor::matmul(
            &bools(&[true, true, true], &[3]),
            &bools(&[true, true, false], &[3]),
        )
        .unwrap(),
        &bools(&[true], &[]),
    );
    assert_tensor(
        &Tensor::matmul(
            &bools(&[true, true, true, true], &[2, 2]),
            &i32s(&[4, 0, -1, 4], &[2, 2]),
        )
        .unwrap(),
        &i32s(&[3, 4, 3, 4], &[2, 2]),
    );
    assert_tensor(
        &Tensor::matmul(&f64s(&[], &[2, 0]), &f64s(&[], &[0, 3])).unwrap(),
        &f64s(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], &[2, 3]),
    );
    assert_tensor(
        &Tensor::matmul(
            &f32s(&[], &[0, 3]),
            &f32s(&[-1.0, 2.0, -2.0, 4.0, 2.0, 3.0], &[3, 2]),
        )
        .unwrap(),
        &f32s(&[], &[0, 2]),
    );
    assert_tensor(
        &Tensor::matmul(&i64s(&[], &[3, 0]), &i64s(&[], &[0])).unwrap(),
        &i64s(&[0, 0, 0], &[3]),
    );
    assert_tensor(
        &Tensor::matmul(&f64s(&[], &[0, 2, 3]), &f64s(&[-4.0, -4.0, -4.0], &[3, 1])).unwrap(),
        &f64s(&[], &[0, 2, 1]),
    );
    assert_tensor(
        &Tensor::matmul(
            &f32s(&[0.0, -1.0], &[2]),
            &f32s(&[4.0, -2.0, -3.0, 3.0, -2.0, 2.0], &[1, 2, 3]),
        )
        .unwrap(),
        &f32s(&[-3.0, 2.0, -2.0], &[1, 3]),
    );
    // int32 products wrap.
    assert_tensor(
        &Tensor::matmul(&i32s(&[2147483647, 2], &[1, 2]), &i32s(&[2, 1], &[2, 1])).unwrap(),
        &i32s(&[0], &[1, 1]),
    );
    // Sums start from +0.0.
    assert_tensor(
        &Tensor::matmul(&f64s(&[0.0], &[1]), &f64s(&[-4.0, 0.0], &[1, 2])).unwrap(),
        &f64s(&[0.0, 0.0], &[2]),
    );
}

#[test]
fn errors() {
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[2, 4], DType::F64).unwrap(),
            &Tensor::zeros(&[5, 3], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 5 is different from 4)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[4], DType::F64).unwrap(),
            &Tensor::zeros(&[5], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 5 is different from 4)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[3, 4], DType::F64).unwrap(),
            &Tensor::zeros(&[5], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 5 is different from 4)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[3], DType::F64).unwrap(),
            &Tensor::zeros(&[4, 5], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 4 is different from 3)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[], DType::F64).unwrap(),
            &Tensor::zeros(&[3], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 0 does not have enough dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[3], DType::F64).unwrap(),
            &Tensor::zeros(&[], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 1 does not have enough dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[2, 3, 4], DType::F64).unwrap(),
            &Tensor::zeros(&[5, 4, 2], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "operands could not be broadcast together with remapped shapes [original->remapped]: (2,3,4)->(2,newaxis,newaxis) (5,4,2)->(5,newaxis,newaxis)  and requested shape (3,2)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[2, 1, 3, 4], DType::F64).unwrap(),
            &Tensor::zeros(&[5, 3, 4, 2], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "operands could not be broadcast together with remapped shapes [original->remapped]: (2,1,3,4)->(2,1,newaxis,newaxis) (5,3,4,2)->(5,3,newaxis,newaxis)  and requested shape (3,2)",
    );
    assert_err(
        Tensor::matmul(
            &Tensor::zeros(&[2, 3, 4], DType::F64).unwrap(),
            &Tensor::zeros(&[5, 5, 2], DType::F64).unwrap(),
        ),
        ErrorKind::Value,
        "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 5 is different from 4)",
    );
}

#[test]
fn large_matrices() {
    // Large enough for the multi-threaded path; small integers keep float sums exact.
    let a = Tensor::binary_scalar(
        BinaryOp::Sub,
        &Tensor::binary_scalar(BinaryOp::Mod, &ar(6400, DType::F32), Scalar::Int(7), false)
            .unwrap(),
        Scalar::Int(3),
        false,
    )
    .unwrap()
    .reshape(&[80, 80])
    .unwrap();
    let b = Tensor::binary_scalar(
        BinaryOp::Sub,
        &Tensor::binary_scalar(BinaryOp::Mod, &ar(6400, DType::F32), Scalar::Int(5), false)
            .unwrap(),
        Scalar::Int(2),
        false,
    )
    .unwrap()
    .reshape(&[80, 80])
    .unwrap();
    let c = Tensor::matmul(&a, &b).unwrap();
    assert_eq!(c.shape(), &[80, 80]);
    assert_eq!(c.as_f32_slice().unwrap()[0], 12.0);
    assert_eq!(c.as_f32_slice().unwrap()[1], 6.0);
    assert_eq!(c.as_f32_slice().unwrap()[1402], 0.0);
    assert_eq!(c.as_f32_slice().unwrap()[6399], -4.0);
    assert_eq!(c.as_f32_slice().unwrap()[3203], -3.0);
    assert_eq!(
        Tensor::reduce(ReduceOp::Sum, &c, None, false)
            .unwrap()
            .item()
            .unwrap(),
        Scalar::Float(0.0)
    );
}

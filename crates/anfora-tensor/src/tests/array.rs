//! numpy's array functions: expected values and messages from numpy 2.4.

use super::*;

#[test]
fn argmax_and_argmin() {
    let x = f64s(
        &[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 9.0],
        &[3, 4],
    );
    assert_tensor(&Tensor::argmax(&x, None, false).unwrap(), &i64s(&[5], &[]));
    assert_tensor(&Tensor::argmin(&x, None, false).unwrap(), &i64s(&[1], &[]));
    assert_tensor(
        &Tensor::argmax(&x, Some(0), false).unwrap(),
        &i64s(&[1, 1, 2, 2], &[4]),
    );
    assert_tensor(
        &Tensor::argmax(&x, Some(1), false).unwrap(),
        &i64s(&[2, 1, 3], &[3]),
    );
    assert_tensor(
        &Tensor::argmin(&x, Some(0), false).unwrap(),
        &i64s(&[0, 0, 1, 0], &[4]),
    );
    assert_tensor(
        &Tensor::argmin(&x, Some(-1), true).unwrap(),
        &i64s(&[1, 2, 1], &[3, 1]),
    );
    assert_tensor(
        &Tensor::argmax(&x, None, true).unwrap(),
        &i64s(&[5], &[1, 1]),
    );
    // The first NaN wins both; bools compare False < True; ints keep exact order.
    let y = f64s(&[1.0, NAN, 3.0, NAN], &[4]);
    assert_tensor(&Tensor::argmax(&y, None, false).unwrap(), &i64s(&[1], &[]));
    assert_tensor(&Tensor::argmin(&y, None, false).unwrap(), &i64s(&[1], &[]));
    let b = bools(&[false, true, true], &[3]);
    assert_tensor(&Tensor::argmax(&b, None, false).unwrap(), &i64s(&[1], &[]));
    assert_tensor(&Tensor::argmin(&b, None, false).unwrap(), &i64s(&[0], &[]));
    let big = i64s(&[i64::MAX - 1, i64::MAX, i64::MIN], &[3]);
    assert_tensor(
        &Tensor::argmax(&big, Some(0), false).unwrap(),
        &i64s(&[1], &[]),
    );
    // Empty sequences.
    assert_err(
        Tensor::argmax(&Tensor::zeros(&[0, 3], DType::F32).unwrap(), Some(0), false),
        ErrorKind::Value,
        "attempt to get argmax of an empty sequence",
    );
    assert_eq!(
        Tensor::argmax(&Tensor::zeros(&[0, 3], DType::F32).unwrap(), Some(1), false)
            .unwrap()
            .shape(),
        &[0]
    );
    assert_err(
        Tensor::argmin(&x, Some(2), false),
        ErrorKind::Value,
        "axis 2 is out of bounds for array of dimension 2",
    );
}

#[test]
fn one_hot_rows() {
    let idx = i64s(&[0, 2, -1, 3, 1, 5], &[2, 3]);
    let got = Tensor::one_hot(&idx, 4, DType::F32).unwrap();
    assert_eq!(got.shape(), &[2, 3, 4]);
    // Indices outside [0, depth) give rows of zeros.
    assert_tensor(
        &got,
        &f32s(
            &[
                1., 0., 0., 0., 0., 0., 1., 0., 0., 0., 0., 0., //
                0., 0., 0., 1., 0., 1., 0., 0., 0., 0., 0., 0.,
            ],
            &[2, 3, 4],
        ),
    );
    assert_tensor(
        &Tensor::one_hot(&i32s(&[1], &[1]), 2, DType::Bool).unwrap(),
        &bools(&[false, true], &[1, 2]),
    );
    assert_eq!(
        Tensor::one_hot(&i64s(&[1, 2], &[2]), 0, DType::I64)
            .unwrap()
            .shape(),
        &[2, 0]
    );
    assert_err(
        Tensor::one_hot(&f32s(&[1.0], &[1]), 2, DType::F32),
        ErrorKind::Type,
        "one_hot: indices must be an integer tensor, got float32",
    );
    assert_err(
        Tensor::one_hot(&i64s(&[1], &[1]), -2, DType::F32),
        ErrorKind::Value,
        "one_hot: depth must be non-negative, got -2",
    );
}

#[test]
fn squeeze_expand_dims_and_broadcast_to() {
    let x = ar(6, DType::F32).reshape(&[1, 3, 1, 2]).unwrap();
    assert_eq!(x.squeeze(None).unwrap().shape(), &[3, 2]);
    assert_eq!(x.squeeze(Some(&[0, -2])).unwrap().shape(), &[3, 2]);
    assert_eq!(x.squeeze(Some(&[2])).unwrap().shape(), &[1, 3, 2]);
    assert!(x.squeeze(None).unwrap().shares_storage(&x));
    assert_err(
        x.squeeze(Some(&[1])),
        ErrorKind::Value,
        "cannot select an axis to squeeze out which has size not equal to one",
    );
    assert_err(x.squeeze(Some(&[0, 0])), ErrorKind::Value, "repeated axis");
    let y = ar(6, DType::I64).reshape(&[3, 2]).unwrap();
    assert_eq!(y.expand_dims(&[0, 3]).unwrap().shape(), &[1, 3, 2, 1]);
    assert_eq!(y.expand_dims(&[-1]).unwrap().shape(), &[3, 2, 1]);
    assert_err(
        y.expand_dims(&[3]),
        ErrorKind::Value,
        "axis 3 is out of bounds for array of dimension 3",
    );
    assert_err(y.expand_dims(&[1, -3]), ErrorKind::Value, "repeated axis");
    let row = i64s(&[1, 2, 3], &[3]);
    assert_tensor(
        &row.broadcast_to(&[2, 3]).unwrap(),
        &i64s(&[1, 2, 3, 1, 2, 3], &[2, 3]),
    );
    assert_tensor(
        &i64s(&[1, 2], &[2, 1]).broadcast_to(&[2, 2]).unwrap(),
        &i64s(&[1, 1, 2, 2], &[2, 2]),
    );
    assert_err(
        row.broadcast_to(&[2, 4]),
        ErrorKind::Value,
        "operands could not be broadcast together with remapped shapes [original->remapped]: \
         (3,)  and requested shape (2,4)",
    );
    assert_err(
        y.broadcast_to(&[3]),
        ErrorKind::Value,
        "input operand has more dimensions than allowed by the axis remapping",
    );
}

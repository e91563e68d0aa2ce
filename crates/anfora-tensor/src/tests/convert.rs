//! Conversions out of a tensor, exact comparison and the checked constructors.

use super::*;

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
    assert!(!f64s(&[0.0], &[1, 1]).truth().unwrap());
    assert!(!f64s(&[-0.0], &[]).truth().unwrap());
    assert!(f64s(&[NAN], &[]).truth().unwrap());
    assert!(i32s(&[-3], &[1]).truth().unwrap());
    assert!(!bools(&[false], &[]).truth().unwrap());
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
    assert_eq!(format!("{t}"), "[[0. 1. 2.]\n [3. 4. 5.]]");
    assert_eq!(
        format!("{t:?}"),
        "array([[0., 1., 2.],\n       [3., 4., 5.]], dtype=float32)"
    );
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

#[test]
fn result_dtype_helpers_agree_with_the_kernels() {
    use crate::{binary_result_dtype, binary_scalar_result_dtype, promote_types};
    assert_eq!(promote_types(DType::I32, DType::F32), DType::F64);
    assert_eq!(
        binary_result_dtype(BinaryOp::Div, DType::I32, DType::I32),
        Ok(DType::F64)
    );
    assert_eq!(
        binary_scalar_result_dtype(BinaryOp::Add, DType::F32, Scalar::Float(0.5)),
        Ok(DType::F32)
    );
    assert_eq!(
        crate::unary_result_dtype(UnaryOp::Exp, DType::I64),
        Ok(DType::F64)
    );
    assert_eq!(
        crate::reduce_result_dtype(ReduceOp::Sum, DType::I32),
        DType::I64
    );
    assert_eq!(crate::broadcast_shapes(&[2, 1], &[3]).unwrap(), vec![2, 3]);
}

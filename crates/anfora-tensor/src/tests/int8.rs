//! int8 and uint8: stored in 8 bits, computed in int32, wrapping and promoting as numpy's
//! 8-bit loops do (expected values and texts are numpy 2.4's).

use super::*;
use crate::promote_types;

fn i8s(v: &[i8]) -> Tensor {
    Tensor::from_i8(v.to_vec(), &[v.len()]).unwrap()
}

fn u8s(v: &[u8]) -> Tensor {
    Tensor::from_u8(v.to_vec(), &[v.len()]).unwrap()
}

fn ints(t: &Tensor) -> Vec<i64> {
    t.to_scalars()
        .into_iter()
        .map(|s| match s {
            Scalar::Int(i) => i,
            other => panic!("{other:?} is not an int"),
        })
        .collect()
}

#[test]
fn promotion_follows_numpy() {
    use DType::*;
    for (a, b, want) in [
        (I8, I8, I8),
        (U8, U8, U8),
        (I8, Bool, I8),
        (I8, I32, I32),
        (U8, I64, I64),
        (I8, F16, F16),
        (U8, F32, F32),
        (I8, F64, F64),
    ] {
        assert_eq!(promote_types(a, b), want, "{a} {b}");
        assert_eq!(promote_types(b, a), want, "{b} {a}");
        let (x, y) = (
            Tensor::ones(&[1], a).unwrap(),
            Tensor::ones(&[1], b).unwrap(),
        );
        assert_eq!(Tensor::binary(BinaryOp::Add, &x, &y).unwrap().dtype(), want);
    }
    let e = Tensor::binary(BinaryOp::Add, &i8s(&[1]), &u8s(&[1])).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Type);
    assert!(e.message.contains("int16"), "{}", e.message);
}

#[test]
fn arithmetic_wraps_as_numpy() {
    let a = i8s(&[1, -128, 127]);
    let u = u8s(&[1, 200, 255]);
    let r = Tensor::unary(UnaryOp::Neg, &a).unwrap();
    assert_eq!((r.dtype(), ints(&r)), (DType::I8, vec![-1, -128, -127]));
    let r = Tensor::unary(UnaryOp::Abs, &a).unwrap();
    assert_eq!(ints(&r), vec![1, -128, 127]);
    let r = Tensor::binary_scalar(BinaryOp::Mul, &u, Scalar::Int(2), false).unwrap();
    assert_eq!((r.dtype(), ints(&r)), (DType::U8, vec![2, 144, 254]));
    let r = Tensor::binary_scalar(BinaryOp::RShift, &a, Scalar::Int(1), false).unwrap();
    assert_eq!(ints(&r), vec![0, -64, 63]);
    let r = Tensor::matmul(&a, &a).unwrap();
    assert_eq!((r.dtype(), ints(&r)), (DType::I8, vec![2]));
    // Division, floats and float functions leave the 8-bit dtypes as numpy's do.
    assert_eq!(
        Tensor::binary(BinaryOp::Div, &a, &a).unwrap().dtype(),
        DType::F64
    );
    let r = Tensor::binary_scalar(BinaryOp::Add, &u, Scalar::Float(1.5), false).unwrap();
    assert_eq!(
        (r.dtype(), r.to_f64_vec()),
        (DType::F64, vec![2.5, 201.5, 256.5])
    );
    assert_eq!(
        Tensor::unary(UnaryOp::Sqrt, &u).unwrap().dtype(),
        DType::F16
    );
    let c = Tensor::binary_scalar(BinaryOp::Lt, &a, Scalar::Int(300), false).unwrap();
    assert_eq!(c.dtype(), DType::Bool);
    let e = Tensor::binary_scalar(BinaryOp::Add, &a, Scalar::Int(300), false).unwrap_err();
    assert_eq!(
        (e.kind, e.message.as_str()),
        (
            ErrorKind::Overflow,
            "Python integer 300 out of bounds for int8"
        )
    );
}

#[test]
fn reductions_and_data_movement_keep_or_widen_as_numpy() {
    let a = i8s(&[1, -128, 127]);
    let sum = Tensor::reduce(ReduceOp::Sum, &a, None, false).unwrap();
    assert_eq!((sum.dtype(), ints(&sum)), (DType::I64, vec![0]));
    let max = Tensor::reduce(ReduceOp::Max, &a, None, false).unwrap();
    assert_eq!((max.dtype(), ints(&max)), (DType::I8, vec![127]));
    let mean = Tensor::reduce(ReduceOp::Mean, &a, None, false).unwrap();
    assert_eq!(mean.dtype(), DType::F64);
    let e = Tensor::reduce(ReduceOp::Sum, &u8s(&[1]), None, false).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Type);
    let t = a.reshape(&[3, 1]).unwrap().transpose(None).unwrap();
    assert_eq!(
        (t.dtype(), ints(&t.contiguous())),
        (DType::I8, vec![1, -128, 127])
    );
    let c = Tensor::concat(&[a.clone(), a.clone()], 0).unwrap();
    assert_eq!((c.dtype(), c.shape().to_vec()), (DType::I8, vec![6]));
    let i = Tensor::from_i64(vec![2, 0], &[2]).unwrap();
    let taken = Tensor::take(&a, &i, None).unwrap();
    assert_eq!((taken.dtype(), ints(&taken)), (DType::I8, vec![127, 1]));
}

#[test]
fn casts_and_bytes_follow_numpy() {
    let f = Tensor::from_f64(vec![300.7, -1.5, f64::NAN, 1e10], &[4]).unwrap();
    assert_eq!(ints(&f.cast(DType::I8)), vec![44, -1, 0, 0]);
    let i = Tensor::from_i64(vec![300, -1], &[2]).unwrap();
    assert_eq!(ints(&i.cast(DType::U8)), vec![44, 255]);
    let u = u8s(&[0, 7, 255]);
    assert_eq!(u.cast(DType::F32).to_f64_vec(), vec![0.0, 7.0, 255.0]);
    assert_eq!(u.cast(DType::F16).to_f64_vec(), vec![0.0, 7.0, 255.0]);
    let back = Tensor::from_le_bytes(DType::U8, &[3], &u.to_le_bytes()).unwrap();
    assert!(back.same_as(&u));
    let a = i8s(&[-1, 5]);
    let back = Tensor::from_le_bytes(DType::I8, &[2], &a.to_le_bytes()).unwrap();
    assert!(back.same_as(&a) && !back.same_as(&u));
    let e = Tensor::full(&[2], Scalar::Int(256), DType::U8).unwrap_err();
    assert_eq!(e.message, "Python integer 256 out of bounds for uint8");
    assert_eq!(
        ints(&Tensor::full(&[2], Scalar::Int(-3), DType::I8).unwrap()),
        vec![-3, -3]
    );
}

#[test]
fn printing_follows_numpy() {
    assert_eq!(
        i8s(&[1, -128, 127]).repr(),
        "array([   1, -128,  127], dtype=int8)"
    );
    assert_eq!(
        u8s(&[1, 200, 255]).repr(),
        "array([  1, 200, 255], dtype=uint8)"
    );
    assert_eq!(i8s(&[-5]).reshape(&[]).unwrap().to_str(), "-5");
}

//! float16 and bfloat16: stored in 16 bits, computed in float32, printed and promoted as numpy
//! prints and promotes float16 (expected strings are numpy 2.4's).

use super::*;
use crate::promote_types;
use ::half::{bf16, f16};

fn h(v: &[f64], shape: &[usize]) -> Tensor {
    f64s(v, shape).cast(DType::F16)
}

fn b16(v: &[f64], shape: &[usize]) -> Tensor {
    f64s(v, shape).cast(DType::BF16)
}

#[test]
fn promotion_follows_numpy_for_float16_and_ml_dtypes_for_bfloat16() {
    use DType::*;
    for (a, b, want) in [
        (F16, F16, F16),
        (F16, Bool, F16),
        (F16, F32, F32),
        (F16, F64, F64),
        (F16, I32, F64),
        (F16, I64, F64),
        (BF16, BF16, BF16),
        (BF16, F16, F32),
        (BF16, F32, F32),
        (BF16, I64, F64),
    ] {
        assert_eq!(promote_types(a, b), want, "{a} {b}");
        assert_eq!(promote_types(b, a), want, "{b} {a}");
        let (x, y) = (
            Tensor::ones(&[1], a).unwrap(),
            Tensor::ones(&[1], b).unwrap(),
        );
        assert_eq!(Tensor::binary(BinaryOp::Add, &x, &y).unwrap().dtype(), want);
        assert_eq!(
            crate::binary_result_dtype(BinaryOp::Add, a, b).unwrap(),
            want
        );
    }
}

#[test]
fn arithmetic_computes_in_float32_and_rounds_once_to_float16() {
    let a = h(&[0.1, 0.2, 1000.0, -3.5], &[4]);
    let b = h(&[0.3, 0.7, 0.001, 2.0], &[4]);
    let op = |o| Tensor::binary(o, &a, &b).unwrap().tensor_repr();
    assert_eq!(
        op(BinaryOp::Add),
        "Tensor([ 3.999e-01,  9.004e-01,  1.000e+03, -1.500e+00], dtype=float16)"
    );
    assert_eq!(
        op(BinaryOp::Mul),
        "Tensor([ 0.03,  0.14,  1.  , -7.  ], dtype=float16)"
    );
    assert_eq!(
        op(BinaryOp::Div),
        "Tensor([ 0.3333,  0.2856,     inf, -1.75  ], dtype=float16)"
    );
    assert_eq!(
        Tensor::unary(UnaryOp::Exp, &b).unwrap().repr(),
        "array([1.35 , 2.014, 1.001, 7.39 ], dtype=float16)"
    );
    assert_eq!(
        Tensor::binary_scalar(BinaryOp::Mul, &a, Scalar::Float(2.5), false)
            .unwrap()
            .repr(),
        "array([ 2.50e-01,  5.00e-01,  2.50e+03, -8.75e+00], dtype=float16)"
    );
    let sum = Tensor::reduce(ReduceOp::Sum, &a, None, false).unwrap();
    assert_eq!(sum.repr(), "array(997., dtype=float16)");
    let mean = Tensor::reduce(ReduceOp::Mean, &a, None, false).unwrap();
    assert_eq!(mean.repr(), "array(249.2, dtype=float16)");
    // The owned variants take the same path.
    let owned = Tensor::binary_owned(BinaryOp::Add, a.clone(), &b).unwrap();
    assert!(owned.same_as(&Tensor::binary(BinaryOp::Add, &a, &b).unwrap()));
    let cmp = Tensor::binary(BinaryOp::Lt, &a, &b).unwrap();
    assert_eq!(cmp.repr(), "array([ True,  True, False,  True])");
    let mixed = Tensor::binary(BinaryOp::Add, &a, &i64s(&[1], &[1])).unwrap();
    assert_eq!(
        mixed.repr(),
        "array([   1.09997559,    1.19995117, 1001.        ,   -2.5       ])"
    );
}

#[test]
fn data_movement_and_matmul_keep_float16() {
    let a = h(&[0.1, 0.2, 1000.0, -3.5], &[2, 2]);
    assert_eq!(
        a.transpose(None).unwrap().repr(),
        "array([[ 1.0e-01,  1.0e+03],\n       [ 2.0e-01, -3.5e+00]], dtype=float16)"
    );
    let m = h(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let v = h(&[0.5, 0.25], &[2, 1]);
    assert_eq!(
        Tensor::matmul(&m, &v).unwrap().repr(),
        "array([[1. ],\n       [2.5]], dtype=float16)"
    );
    let g = Tensor::gemm(&m, &v, None, true, false).unwrap();
    assert_eq!(g.dtype(), DType::F16);
    let c = Tensor::concat(&[a.clone(), m.clone()], 0).unwrap();
    assert_eq!((c.dtype(), c.shape()), (DType::F16, &[4usize, 2][..]));
    assert_eq!(
        Tensor::concat(&[a.clone(), f32s(&[1.0, 2.0], &[1, 2])], 0)
            .unwrap()
            .dtype(),
        DType::F32
    );
    assert_eq!(Tensor::argmax(&a, None, false).unwrap().repr(), "array(2)");
    let picked = Tensor::take(&a, &i64s(&[1, 0], &[2]), Some(0)).unwrap();
    assert_eq!(picked.dtype(), DType::F16);
    assert!(picked.same_as(&h(&[1000.0, -3.5, 0.1, 0.2], &[2, 2])));
    let updated = a
        .scatter_update(&i64s(&[0], &[1]), &f32s(&[7.0, 8.0], &[1, 2]))
        .unwrap();
    assert!(updated.same_as(&h(&[7.0, 8.0, 1000.0, -3.5], &[2, 2])));
    let w = Tensor::where_(
        &bools(&[true, false], &[2]),
        &h(&[1.0, 2.0], &[2]),
        &h(&[3.0, 4.0], &[2]),
    );
    assert!(w.unwrap().same_as(&h(&[1.0, 4.0], &[2])));
    assert!(
        a.index(&[IndexItem::Int(1)])
            .unwrap()
            .same_as(&h(&[1000.0, -3.5], &[2]))
    );
    assert_eq!(a.reshape(&[4]).unwrap().dtype(), DType::F16);
}

#[test]
fn casts_round_once_and_read_back_exactly() {
    // Just above the midpoint of 1 and the next float16: float32 would first round it onto the
    // midpoint, and ties-to-even would then give 1 (numpy converts float64 directly).
    let x = f64s(&[1.0 + 2f64.powi(-11) + 2f64.powi(-40)], &[1]);
    assert_eq!(x.cast(DType::F16).to_f64_vec(), vec![1.0 + 2f64.powi(-10)]);
    assert_eq!(x.cast(DType::F16).repr(), "array([1.001], dtype=float16)");
    let t = h(&[0.1, -2.5, 65504.0, 1e6], &[4]);
    assert_eq!(
        t.to_f64_vec(),
        vec![0.0999755859375, -2.5, 65504.0, f64::INFINITY]
    );
    assert_eq!(t.get_flat(0), Scalar::Float(0.0999755859375));
    assert_eq!(
        t.cast(DType::I32).as_i32_slice().unwrap(),
        &[0, -2, 65504, i32::MIN]
    );
    assert_eq!(t.cast(DType::Bool).as_bool_slice().unwrap(), &[true; 4]);
    assert_eq!(
        b16(&[0.1], &[1]).as_half_bits().unwrap(),
        &[bf16::from_f64(0.1).to_bits()]
    );
    assert_eq!(
        h(&[0.1], &[1]).as_half_bits().unwrap(),
        &[f16::from_f64(0.1).to_bits()]
    );
    let back = Tensor::from_half_bits(t.as_half_bits().unwrap(), &[2, 2], DType::F16).unwrap();
    assert!(back.same_as(&t.reshape(&[2, 2]).unwrap()));
    assert!(!t.same_as(&t.cast(DType::F32)));
    let e = Tensor::from_half_bits(&[1, 2, 3], &[2, 2], DType::F16).unwrap_err();
    assert_eq!(
        e.message,
        "cannot make a float16 tensor of shape (2,2) from 3 values"
    );
    assert!(h(&[0.0], &[]).truth().is_ok_and(|b| !b));
}

#[test]
fn creation_in_a_half_dtype() {
    assert_eq!(
        Tensor::full(&[2], Scalar::Float(0.1), DType::F16)
            .unwrap()
            .repr(),
        "array([0.1, 0.1], dtype=float16)"
    );
    assert_eq!(
        Tensor::zeros(&[2], DType::BF16).unwrap().repr(),
        "array([0., 0.], dtype=bfloat16)"
    );
    assert_eq!(
        Tensor::scalar(Scalar::Int(3), DType::F16).unwrap().repr(),
        "array(3., dtype=float16)"
    );
    let n = Nested::List(vec![
        Nested::Scalar(Scalar::Float(0.1)),
        Nested::Scalar(Scalar::Int(2)),
    ]);
    assert_eq!(
        Tensor::from_nested(&n, Some(DType::F16)).unwrap().repr(),
        "array([0.1, 2. ], dtype=float16)"
    );
    let one_hot = Tensor::one_hot(&i64s(&[1], &[1]), 2, DType::F16).unwrap();
    assert_eq!(one_hot.repr(), "array([[0., 1.]], dtype=float16)");
}

#[test]
fn printing_uses_the_shortest_float16_digits_and_numpy_s_float16_cutoffs() {
    for (v, s, r) in [
        (1000.0, "1e+03", "array(1.e+03, dtype=float16)"),
        (999.0, "999.0", "array(999., dtype=float16)"),
        (0.1, "0.1", "array(0.1, dtype=float16)"),
        (1e-4, "0.0001", "array(0.0001, dtype=float16)"),
        (1.5e-5, "1.5e-05", "array(1.5e-05, dtype=float16)"),
        (65504.0, "6.55e+04", "array(6.55e+04, dtype=float16)"),
        (2049.0, "2.048e+03", "array(2.048e+03, dtype=float16)"),
    ] {
        let t = h(&[v], &[]);
        assert_eq!(t.to_str(), s, "{v}");
        assert_eq!(t.repr(), r, "{v}");
    }
    assert_eq!(h(&[0.1, 1000.0], &[2]).to_str(), "[1.e-01 1.e+03]");
    assert_eq!(
        h(&[f64::NAN, f64::NEG_INFINITY, 1.0], &[3]).repr(),
        "array([ nan, -inf,   1.], dtype=float16)"
    );
    assert_eq!(
        h(&[1e-3, 0.2, 3000.0], &[3]).repr(),
        "array([1.e-03, 2.e-01, 3.e+03], dtype=float16)"
    );
    // bfloat16 keeps 8 significant bits: 0.1 is 0.10009765625, shortest "0.1".
    assert_eq!(
        b16(&[0.1, 3.0], &[2]).tensor_repr(),
        "Tensor([0.1, 3. ], dtype=bfloat16)"
    );
}

#[test]
fn fused_kernels_refuse_half_inputs() {
    use crate::fused::{FusedKernel, FusedOp};
    let e = FusedKernel::new(&[DType::F16], vec![FusedOp::Unary(UnaryOp::Exp, 0)]).unwrap_err();
    assert_eq!(e.message, "fused kernels do not take float16 inputs");
}

#[test]
fn every_cast_from_float64_is_the_nearest_float16_ties_to_even() {
    let all: Vec<f64> = (0..=u16::MAX)
        .map(f16::from_bits)
        .filter(|x| x.is_finite())
        .map(f16::to_f64)
        .collect();
    // Midpoints (the hard cases), points just beside them, and overflow boundaries.
    let mut values = vec![
        65504.0,
        65519.99,
        65520.0,
        65536.0,
        -65520.0,
        1e-8,
        2.9802322e-8,
    ];
    let mut sorted = all.clone();
    sorted.sort_by(f64::total_cmp);
    for w in sorted.windows(2).step_by(97) {
        let mid = (w[0] + w[1]) / 2.0;
        values.extend([mid, mid + mid.abs() * 1e-12, mid - mid.abs() * 1e-12]);
    }
    let got = f64s(&values, &[values.len()]).cast(DType::F16);
    for (&v, &g) in values.iter().zip(got.as_half_bits().unwrap()) {
        let g = f16::from_bits(g);
        let best = all
            .iter()
            .copied()
            .min_by(|a, b| (a - v).abs().total_cmp(&(b - v).abs()))
            .unwrap();
        if v.abs() >= 65520.0 {
            assert!(g.is_infinite(), "{v}");
        } else if (best - v).abs() < (g.to_f64() - v).abs() {
            panic!("{v}: got {g}, nearest {best}");
        } else if (best - v).abs() == (g.to_f64() - v).abs() && best != g.to_f64() {
            // A tie: the even one.
            assert_eq!(g.to_bits() & 1, 0, "{v}");
        }
    }
}

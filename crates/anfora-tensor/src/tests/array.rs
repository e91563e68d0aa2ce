//! numpy's array functions: expected values and messages from numpy 2.4.

use super::*;
use crate::{PadMode, pad_widths};

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

#[test]
fn concat_stack_and_split() {
    let a = ar(6, DType::I32).reshape(&[2, 3]).unwrap();
    let b = f64s(&[0.5, 1.5], &[2, 1]);
    // Promotion, and joining along the last axis.
    assert_tensor(
        &Tensor::concat(&[a.clone(), b.clone()], -1).unwrap(),
        &f64s(&[0., 1., 2., 0.5, 3., 4., 5., 1.5], &[2, 4]),
    );
    assert_tensor(
        &Tensor::concat(&[a.clone(), a.clone()], 0).unwrap(),
        &i32s(&[0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5], &[4, 3]),
    );
    assert_err(
        Tensor::concat(&[a.clone(), b.clone()], 0),
        ErrorKind::Value,
        "all the input array dimensions except for the concatenation axis must match exactly, \
         but along dimension 1, the array at index 0 has size 3 and the array at index 1 has \
         size 1",
    );
    assert_err(
        Tensor::concat(&[a.clone(), i32s(&[1, 2, 3], &[3])], 0),
        ErrorKind::Value,
        "all the input arrays must have same number of dimensions, but the array at index 0 \
         has 2 dimension(s) and the array at index 1 has 1 dimension(s)",
    );
    assert_err(
        Tensor::concat(&[i64s(&[1], &[]), i64s(&[1], &[])], 0),
        ErrorKind::Value,
        "zero-dimensional arrays cannot be concatenated",
    );
    assert_err(
        Tensor::concat(&[], 0),
        ErrorKind::Value,
        "need at least one array to concatenate",
    );
    assert_err(
        Tensor::concat(std::slice::from_ref(&a), 2),
        ErrorKind::Value,
        "axis 2 is out of bounds for array of dimension 2",
    );
    // np.stack([arange(3), arange(3)], axis=-1) == [[0, 0], [1, 1], [2, 2]]
    let r = ar(3, DType::I64);
    assert_tensor(
        &Tensor::stack(&[r.clone(), r.clone()], -1).unwrap(),
        &i64s(&[0, 0, 1, 1, 2, 2], &[3, 2]),
    );
    assert_eq!(
        Tensor::stack(&[a.clone(), a.clone(), a.clone()], 1)
            .unwrap()
            .shape(),
        &[2, 3, 3]
    );
    assert_err(
        Tensor::stack(&[a.clone(), b], 0),
        ErrorKind::Value,
        "all input arrays must have the same shape",
    );
    assert_err(
        Tensor::stack(&[], 0),
        ErrorKind::Value,
        "need at least one array to stack",
    );
    // np.split(arange(6), [2, -1, 10]) == [[0, 1], [2, 3, 4], [5], []];
    // np.split(arange(6), [4, 2]) == [[0, 1, 2, 3], [], [2, 3, 4, 5]].
    let six = ar(6, DType::I64);
    let parts = |spec: SplitSpec| -> Vec<Vec<f64>> {
        six.split(&spec, 0)
            .unwrap()
            .iter()
            .map(Tensor::to_f64_vec)
            .collect()
    };
    assert_eq!(
        parts(SplitSpec::Indices(vec![2, -1, 10])),
        vec![vec![0., 1.], vec![2., 3., 4.], vec![5.], vec![]]
    );
    assert_eq!(
        parts(SplitSpec::Indices(vec![4, 2])),
        vec![vec![0., 1., 2., 3.], vec![], vec![2., 3., 4., 5.]]
    );
    assert_eq!(
        parts(SplitSpec::Sections(3)),
        vec![vec![0., 1.], vec![2., 3.], vec![4., 5.]]
    );
    let cols = a.split(&SplitSpec::Sections(3), 1).unwrap();
    assert_tensor(&cols[1], &i32s(&[1, 4], &[2, 1]));
    assert_err(
        ar(5, DType::I64).split(&SplitSpec::Sections(2), 0),
        ErrorKind::Value,
        "array split does not result in an equal division",
    );
    assert_err(
        six.split(&SplitSpec::Sections(0), 0),
        ErrorKind::ZeroDivision,
        "integer modulo by zero",
    );
    // numpy: np.split(np.arange(6), -2) passes `6 % -2 == 0`, then refuses the sign;
    // np.split(np.arange(6), -4) fails the division first (6 % -4 == -2).
    assert_err(
        six.split(&SplitSpec::Sections(-2), 0),
        ErrorKind::Value,
        "number sections must be larger than 0.",
    );
    assert_err(
        six.split(&SplitSpec::Sections(-4), 0),
        ErrorKind::Value,
        "array split does not result in an equal division",
    );
}

#[test]
fn take_follows_numpy() {
    // a = arange(6).reshape(2, 3)
    let a = ar(6, DType::I64).reshape(&[2, 3]).unwrap();
    // np.take(a, [[0, 2]], axis=1) == [[[0, 2]], [[3, 5]]]
    assert_tensor(
        &Tensor::take(&a, &i64s(&[0, 2], &[1, 2]), Some(1)).unwrap(),
        &i64s(&[0, 2, 3, 5], &[2, 1, 2]),
    );
    // np.take(a, 4) == 4; np.take(a, [-1, 0]) == [5, 0]
    assert_tensor(
        &Tensor::take(&a, &i64s(&[4], &[]), None).unwrap(),
        &i64s(&[4], &[]),
    );
    assert_tensor(
        &Tensor::take(&a, &i32s(&[-1, 0], &[2]), None).unwrap(),
        &i64s(&[5, 0], &[2]),
    );
    assert_tensor(
        &Tensor::take(&a, &i64s(&[1, 1, 0], &[3]), Some(0)).unwrap(),
        &i64s(&[3, 4, 5, 3, 4, 5, 0, 1, 2], &[3, 3]),
    );
    assert_err(
        Tensor::take(&a, &i64s(&[7], &[1]), None),
        ErrorKind::Index,
        "index 7 is out of bounds for axis 0 with size 6",
    );
    assert_err(
        Tensor::take(&a, &i64s(&[-4], &[1]), Some(1)),
        ErrorKind::Index,
        "index -4 is out of bounds for axis 1 with size 3",
    );
    assert_err(
        Tensor::take(&a, &f64s(&[1.0], &[1]), None),
        ErrorKind::Type,
        "Cannot cast array data from dtype('float64') to dtype('int64') according to the rule \
         'same_kind'",
    );
    // A non-empty take from an empty axis (or an empty flattened tensor) is numpy's own
    // IndexError, before any index is checked; taking nothing from it is an empty tensor.
    let empty = ar(0, DType::I64).reshape(&[2, 0]).unwrap();
    for axis in [None, Some(1), Some(-1)] {
        assert_err(
            Tensor::take(&empty, &i64s(&[0, -1], &[2]), axis),
            ErrorKind::Index,
            "cannot do a non-empty take from an empty axes.",
        );
    }
    assert_tensor(
        &Tensor::take(&empty, &i64s(&[], &[0]), Some(1)).unwrap(),
        &i64s(&[], &[2, 0]),
    );
    // numpy checks an index only when it reads it: nothing is read when the axes before
    // `axis` hold no element (np.take(zeros((0, 3)), [5], axis=1) is empty), but an empty
    // inner block is still read (np.take(zeros((2, 3, 0)), [5], axis=1) raises).
    let e03 = ar(0, DType::I64).reshape(&[0, 3]).unwrap();
    assert_tensor(
        &Tensor::take(&e03, &i64s(&[5, -9], &[2]), Some(1)).unwrap(),
        &i64s(&[], &[0, 2]),
    );
    assert_err(
        Tensor::take(
            &ar(0, DType::I64).reshape(&[2, 3, 0]).unwrap(),
            &i64s(&[5], &[1]),
            Some(1),
        ),
        ErrorKind::Index,
        "index 5 is out of bounds for axis 1 with size 3",
    );
    // An empty result from an empty axis checks its indices as usual
    // (np.take(zeros((0, 5, 0)), [0], axis=0)), unless nothing is read (axis=2).
    let e050 = ar(0, DType::I64).reshape(&[0, 5, 0]).unwrap();
    assert_err(
        Tensor::take(&e050, &i64s(&[0], &[1]), Some(0)),
        ErrorKind::Index,
        "index 0 is out of bounds for axis 0 with size 0",
    );
    assert_tensor(
        &Tensor::take(&e050, &i64s(&[0], &[1]), Some(-1)).unwrap(),
        &i64s(&[], &[0, 5, 1]),
    );
    // The gradient adds the sensitivity at each index read (twice for a repeated index).
    let d = f64s(&[1., 2., 3., 4., 5., 6., 7., 8., 9.], &[3, 3]);
    assert_tensor(
        &Tensor::take_grad(&d, &[2, 3], &i64s(&[1, 1, 0], &[3]), Some(0)).unwrap(),
        &f64s(&[7., 8., 9., 5., 7., 9.], &[2, 3]),
    );
}

#[test]
fn pad_follows_numpy() {
    let a = ar(6, DType::I64).reshape(&[2, 3]).unwrap();
    // np.pad(a, 1, constant_values=9)
    assert_tensor(
        &a.pad(
            &pad_widths(&[vec![1]], 2).unwrap(),
            PadMode::Constant,
            Scalar::Int(9),
        )
        .unwrap(),
        &i64s(
            &[9, 9, 9, 9, 9, 9, 0, 1, 2, 9, 9, 3, 4, 5, 9, 9, 9, 9, 9, 9],
            &[4, 5],
        ),
    );
    // np.pad(a, ((0, 1), (2, 0)))
    assert_tensor(
        &a.pad(
            &pad_widths(&[vec![0, 1], vec![2, 0]], 2).unwrap(),
            PadMode::Constant,
            Scalar::Int(0),
        )
        .unwrap(),
        &i64s(&[0, 0, 0, 1, 2, 0, 0, 3, 4, 5, 0, 0, 0, 0, 0], &[3, 5]),
    );
    // np.pad(arange(3), 1, constant_values=1.7) == [1, 0, 1, 2, 1] (cast to int).
    assert_tensor(
        &ar(3, DType::I64)
            .pad(
                &pad_widths(&[vec![1]], 1).unwrap(),
                PadMode::Constant,
                Scalar::Float(1.7),
            )
            .unwrap(),
        &i64s(&[1, 0, 1, 2, 1], &[5]),
    );
    assert_eq!(pad_widths(&[vec![1, 2]], 2).unwrap(), vec![[1, 2], [1, 2]]);
    assert_eq!(
        pad_widths(&[vec![1], vec![3]], 2).unwrap(),
        vec![[1, 1], [3, 3]]
    );
    assert_err(
        pad_widths(&[vec![1, 2, 3]], 2),
        ErrorKind::Value,
        "operands could not be broadcast together with remapped shapes [original->remapped]: \
         (3,)  and requested shape (2,2)",
    );
    assert_err(
        pad_widths(&[vec![1, 2], vec![3, 4], vec![5, 6]], 2),
        ErrorKind::Value,
        "operands could not be broadcast together with remapped shapes [original->remapped]: \
         (3,2)  and requested shape (2,2)",
    );
    assert_err(
        pad_widths(&[vec![-1]], 2),
        ErrorKind::Value,
        "index can't contain negative values",
    );
    // An empty pad_width (`()`, `((), ())`) is a float64 array to numpy: a TypeError, for a
    // 0-d tensor as for any other (found by tests/python/test_ops_random.py).
    for (width, ndim) in [(vec![vec![]], 0), (vec![vec![], vec![]], 2)] {
        assert_err(
            pad_widths(&width, ndim),
            ErrorKind::Type,
            "`pad_width` must be of integral type.",
        );
    }
    // The gradient is the interior.
    let widths = pad_widths(&[vec![0, 1], vec![2, 0]], 2).unwrap();
    let padded = a
        .cast(DType::F64)
        .pad(&widths, PadMode::Constant, Scalar::Int(0))
        .unwrap();
    assert_tensor(
        &Tensor::pad_grad(&padded, &[2, 3], &widths, PadMode::Constant).unwrap(),
        &a.cast(DType::F64),
    );
}

/// `x` padded by `widths` (numpy's pad_width rows) in `mode`.
fn padded(x: &Tensor, widths: &[Vec<i64>], mode: PadMode) -> crate::Result<Tensor> {
    x.pad(&pad_widths(widths, x.ndim()).unwrap(), mode, Scalar::Int(0))
}

#[test]
fn pad_modes_follow_numpy() {
    let a = ar(6, DType::I64).reshape(&[2, 3]).unwrap();
    let w = [vec![1, 2], vec![2, 3]];
    // np.pad(a, ((1, 2), (2, 3)), mode)
    assert_tensor(
        &padded(&a, &w, PadMode::Reflect).unwrap(),
        &i64s(
            &[
                5, 4, 3, 4, 5, 4, 3, 4, 2, 1, 0, 1, 2, 1, 0, 1, 5, 4, 3, 4, 5, 4, 3, 4, 2, 1, 0, 1,
                2, 1, 0, 1, 5, 4, 3, 4, 5, 4, 3, 4,
            ],
            &[5, 8],
        ),
    );
    assert_tensor(
        &padded(&a, &w, PadMode::Symmetric).unwrap(),
        &i64s(
            &[
                1, 0, 0, 1, 2, 2, 1, 0, 1, 0, 0, 1, 2, 2, 1, 0, 4, 3, 3, 4, 5, 5, 4, 3, 4, 3, 3, 4,
                5, 5, 4, 3, 1, 0, 0, 1, 2, 2, 1, 0,
            ],
            &[5, 8],
        ),
    );
    assert_tensor(
        &padded(&a, &w, PadMode::Edge).unwrap(),
        &i64s(
            &[
                0, 0, 0, 1, 2, 2, 2, 2, 0, 0, 0, 1, 2, 2, 2, 2, 3, 3, 3, 4, 5, 5, 5, 5, 3, 3, 3, 4,
                5, 5, 5, 5, 3, 3, 3, 4, 5, 5, 5, 5,
            ],
            &[5, 8],
        ),
    );
    // Widths beyond the axis reflect again and again.
    let r = ar(3, DType::I64);
    assert_tensor(
        &padded(&r, &[vec![7, 5]], PadMode::Reflect).unwrap(),
        &i64s(&[1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1], &[15]),
    );
    assert_tensor(
        &padded(&r, &[vec![8, 4]], PadMode::Symmetric).unwrap(),
        &i64s(&[1, 0, 0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0], &[15]),
    );
    // A single element reflects onto itself (numpy extends it as 'edge' does).
    let col = i64s(&[5, 6], &[2, 1]);
    for mode in [PadMode::Reflect, PadMode::Symmetric, PadMode::Edge] {
        assert_tensor(
            &padded(&col, &[vec![0, 0], vec![2, 1]], mode).unwrap(),
            &i64s(&[5, 5, 5, 5, 6, 6, 6, 6], &[2, 4]),
        );
        // A 0-d tensor has no axis to pad; every dtype keeps its values.
        assert_tensor(
            &padded(&i64s(&[5], &[]), &[vec![3]], mode).unwrap(),
            &i64s(&[5], &[]),
        );
        assert_tensor(
            &padded(&f64s(&[0.5, -1.5], &[2]), &[vec![1, 0]], mode).unwrap(),
            &f64s(
                &[if mode == PadMode::Reflect { -1.5 } else { 0.5 }, 0.5, -1.5],
                &[3],
            ),
        );
        // An empty axis cannot be extended, but other axes of an empty tensor can.
        let empty = Tensor::zeros(&[0, 2], DType::F32).unwrap();
        assert_err(
            padded(&empty, &[vec![1, 0], vec![0, 0]], mode),
            ErrorKind::Value,
            "can't extend empty axis 0 using modes other than 'constant' or 'empty'",
        );
        assert_eq!(
            padded(&empty, &[vec![0, 0], vec![1, 1]], mode)
                .unwrap()
                .shape(),
            &[0, 4]
        );
    }
    // A result larger than memory is a MemoryError before anything is allocated (numpy's
    // order: the size first, then the empty axis).
    for mode in [PadMode::Reflect, PadMode::Edge, PadMode::Constant] {
        let r = padded(&ar(3, DType::I64), &[vec![1 << 40, 0]], mode);
        assert_eq!(r.unwrap_err().kind, ErrorKind::Memory);
        let empty = Tensor::zeros(&[0, 2], DType::F32).unwrap();
        let r = padded(&empty, &[vec![1 << 40, 0], vec![0, 0]], mode);
        assert_eq!(r.unwrap_err().kind, ErrorKind::Memory);
    }
    assert_eq!(PadMode::from_name("symmetric"), Some(PadMode::Symmetric));
    assert_eq!(PadMode::from_name("wrap"), None);
    assert_eq!(PadMode::Edge.name(), "edge");
}

#[test]
fn pad_gradients_add_up_where_elements_are_copied() {
    // np.add.at(g, np.pad(arange(n), w, mode), arange(1, len + 1))
    let d = |len: usize| f64s(&(1..=len).map(|i| i as f64).collect::<Vec<_>>(), &[len]);
    for (w, mode, want) in [
        ([2, 2], PadMode::Reflect, [10.0, 12.0, 6.0]),
        ([4, 1], PadMode::Symmetric, [9.0, 9.0, 18.0]),
        ([2, 3], PadMode::Edge, [6.0, 4.0, 26.0]),
    ] {
        let g = Tensor::pad_grad(&d(3 + w[0] + w[1]), &[3], &[w], mode).unwrap();
        assert_tensor(&g, &f64s(&want, &[3]));
    }
    // The adjoint of pad: <pad(x), d> == <x, pad_grad(d)> for every mode, in 3-D.
    let x = f64s(
        &(0..24)
            .map(|i| (i * 7 % 11) as f64 - 5.0)
            .collect::<Vec<_>>(),
        &[2, 3, 4],
    );
    let widths = pad_widths(&[vec![1, 3], vec![4, 0], vec![2, 5]], 3).unwrap();
    for mode in [
        PadMode::Constant,
        PadMode::Reflect,
        PadMode::Symmetric,
        PadMode::Edge,
    ] {
        let y = x.pad(&widths, mode, Scalar::Int(0)).unwrap();
        let n = y.numel();
        let dv: Vec<f64> = (0..n)
            .map(|i| ((i * 13) % 17) as f64 * 0.25 - 2.0)
            .collect();
        let dt = f64s(&dv, y.shape());
        let g = Tensor::pad_grad(&dt, x.shape(), &widths, mode).unwrap();
        let lhs: f64 = y.to_f64_vec().iter().zip(&dv).map(|(a, b)| a * b).sum();
        let rhs: f64 = x
            .to_f64_vec()
            .iter()
            .zip(g.to_f64_vec())
            .map(|(a, b)| a * b)
            .sum();
        assert!((lhs - rhs).abs() < 1e-9, "{mode:?}: {lhs} vs {rhs}");
    }
    // A sensitivity of the wrong shape, or not a float, is refused.
    assert_err(
        Tensor::pad_grad(&d(4), &[3], &[[1, 1]], PadMode::Edge),
        ErrorKind::Value,
        "pad_grad: the sensitivity of shape (4,) does not hold a padded (3,)",
    );
    assert_err(
        Tensor::pad_grad(
            &i64s(&[1, 2, 3, 4, 5], &[5]),
            &[3],
            &[[1, 1]],
            PadMode::Edge,
        ),
        ErrorKind::Type,
        "pad_grad: expected a float sensitivity, got int64",
    );
}

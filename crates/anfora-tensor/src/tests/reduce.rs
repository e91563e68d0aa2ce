//! Reductions.

use super::*;

/// Asserts float32 elements by bit pattern: `(flat index, f32 bits)`.
#[track_caller]
fn bits32(t: &Tensor, expected: &[(usize, u32)]) {
    let v = t.as_f32_slice().expect("float32 result");
    for &(i, bits) in expected {
        assert_eq!(
            v[i].to_bits(),
            bits,
            "element {i}: {} vs {}",
            v[i],
            f32::from_bits(bits)
        );
    }
}

#[test]
fn sum_axes_and_dtypes() {
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &i64s(&[4], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &i64s(&[2, 0, 2], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &i64s(&[2, 2], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &i64s(&[2, 2], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &i64s(&[4], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &i64s(&[1, 0, 1, 1, 0, 1], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &i64s(&[11], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &i64s(&[4, -6, 13], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &i64s(&[6, 5], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &i64s(&[6, 5], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &i64s(&[11], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &i64s(&[11], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &i64s(&[4, -6, 13], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &i64s(&[6, 5], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &i64s(&[6, 5], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &i64s(&[11], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &f32s(&[8.375], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &f32s(&[9.5, -3.5, 2.375], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &f32s(&[3.25, 5.125], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &f32s(&[3.25, 5.125], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &f32s(&[8.375], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &f64s(&[8.375], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &f64s(&[9.5, -3.5, 2.375], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &f64s(&[3.25, 5.125], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &f64s(&[3.25, 5.125], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &f64s(&[8.375], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
    );
}

#[test]
fn mean_axes_and_dtypes() {
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &f64s(&[0.6666666666666666], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &f64s(&[1.0, 0.0, 1.0], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &f64s(&[0.6666666666666666, 0.6666666666666666], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &f64s(&[0.6666666666666666, 0.6666666666666666], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &f64s(&[0.6666666666666666], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &f64s(&[1.0, 0.0, 1.0, 1.0, 0.0, 1.0], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &f64s(&[1.8333333333333333], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &f64s(&[2.0, -3.0, 6.5], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &f64s(&[2.0, 1.6666666666666667], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &f64s(&[2.0, 1.6666666666666667], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &f64s(&[1.8333333333333333], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &f64s(&[3.0, -1.0, 4.0, 1.0, -5.0, 9.0], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &f64s(&[1.8333333333333333], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &f64s(&[2.0, -3.0, 6.5], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &f64s(&[2.0, 1.6666666666666667], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &f64s(&[2.0, 1.6666666666666667], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &f64s(&[1.8333333333333333], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &f64s(&[3.0, -1.0, 4.0, 1.0, -5.0, 9.0], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &f32s(&[1.3958334], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &f32s(&[4.75, -1.75, 1.1875], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &f32s(&[1.0833334, 1.7083334], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &f32s(&[1.0833334, 1.7083334], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &f32s(&[1.3958334], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &f64s(&[1.3958333333333333], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &f64s(&[4.75, -1.75, 1.1875], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &f64s(&[1.0833333333333333, 1.7083333333333333], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &f64s(&[1.0833333333333333, 1.7083333333333333], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &f64s(&[1.3958333333333333], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
    );
}

#[test]
fn max_axes_and_dtypes() {
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &bools(&[true], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &bools(&[true, false, true], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &bools(&[true, true], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &bools(&[true, true], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &bools(&[true], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &bools(&[true, false, true, true, false, true], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &i32s(&[9], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &i32s(&[3, -1, 9], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &i32s(&[4, 9], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &i32s(&[4, 9], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &i32s(&[9], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &i64s(&[9], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &i64s(&[3, -1, 9], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &i64s(&[4, 9], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &i64s(&[4, 9], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &i64s(&[9], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &f32s(&[8.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &f32s(&[8.0, -0.5, 2.25], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &f32s(&[2.25, 8.0], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &f32s(&[2.25, 8.0], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &f32s(&[8.0], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &f64s(&[8.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &f64s(&[8.0, -0.5, 2.25], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &f64s(&[2.25, 8.0], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &f64s(&[2.25, 8.0], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &f64s(&[8.0], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
    );
}

#[test]
fn min_axes_and_dtypes() {
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &bools(&[false], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &bools(&[true, false, true], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &bools(&[false, false], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &bools(&[false, false], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &bools(&[false], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &bools(&[true, false, true, true, false, true], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &i32s(&[-5], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &i32s(&[1, -5, 4], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &i32s(&[-1, -5], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &i32s(&[-1, -5], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &i32s(&[-5], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &i64s(&[-5], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &i64s(&[1, -5, 4], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &i64s(&[-1, -5], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &i64s(&[-1, -5], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &i64s(&[-5], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &f32s(&[-3.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &f32s(&[1.5, -3.0, 0.125], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &f32s(&[-0.5, -3.0], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &f32s(&[-0.5, -3.0], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &f32s(&[-3.0], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &f64s(&[-3.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &f64s(&[1.5, -3.0, 0.125], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &f64s(&[-0.5, -3.0], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &f64s(&[-0.5, -3.0], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &f64s(&[-3.0], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
    );
}

#[test]
fn prod_axes_and_dtypes() {
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &i64s(&[0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &i64s(&[1, 0, 1], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &i64s(&[0, 0], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &i64s(&[0, 0], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &i64s(&[0], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &bools(&[true, false, true, true, false, true], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &i64s(&[1, 0, 1, 1, 0, 1], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &i64s(&[540], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &i64s(&[3, 5, 36], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &i64s(&[-12, -45], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &i64s(&[-12, -45], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &i64s(&[540], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &i32s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &i64s(&[540], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &i64s(&[3, 5, 36], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &i64s(&[-12, -45], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &i64s(&[-12, -45], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &i64s(&[540], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &i64s(&[3, -1, 4, 1, -5, 9], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &f32s(&[5.0625], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &f32s(&[12.0, 1.5, 0.28125], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &f32s(&[-1.6875, -3.0], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &f32s(&[-1.6875, -3.0], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &f32s(&[5.0625], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &f32s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            None,
            false,
        )
        .unwrap(),
        &f64s(&[5.0625], &[]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &f64s(&[12.0, 1.5, 0.28125], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[1]),
            true,
        )
        .unwrap(),
        &f64s(&[-1.6875, -3.0], &[2, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[-1]),
            false,
        )
        .unwrap(),
        &f64s(&[-1.6875, -3.0], &[2]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[0, 1]),
            true,
        )
        .unwrap(),
        &f64s(&[5.0625], &[1, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
            Some(&[]),
            false,
        )
        .unwrap(),
        &f64s(&[1.5, -0.5, 2.25, 8.0, -3.0, 0.125], &[2, 3]),
    );
}

#[test]
fn three_dim_axis_sets() {
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[0, 2]),
            false,
        )
        .unwrap(),
        &f64s(&[7.5, 11.5, 15.5], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[2, 0]),
            true,
        )
        .unwrap(),
        &f64s(&[7.5, 11.5, 15.5], &[1, 3, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[-3, -1]),
            false,
        )
        .unwrap(),
        &f64s(&[7.5, 11.5, 15.5], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[1]),
            false,
        )
        .unwrap(),
        &f64s(&[1.5, 1.875, 2.25, 2.625, 6.0, 6.375, 6.75, 7.125], &[2, 4]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[0, 2]),
            false,
        )
        .unwrap(),
        &f64s(&[0.9375, 1.4375, 1.9375], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[2, 0]),
            true,
        )
        .unwrap(),
        &f64s(&[0.9375, 1.4375, 1.9375], &[1, 3, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[-3, -1]),
            false,
        )
        .unwrap(),
        &f64s(&[0.9375, 1.4375, 1.9375], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Mean,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[1]),
            false,
        )
        .unwrap(),
        &f64s(&[0.5, 0.625, 0.75, 0.875, 2.0, 2.125, 2.25, 2.375], &[2, 4]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[0, 2]),
            false,
        )
        .unwrap(),
        &f64s(&[1.875, 2.375, 2.875], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[2, 0]),
            true,
        )
        .unwrap(),
        &f64s(&[1.875, 2.375, 2.875], &[1, 3, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[-3, -1]),
            false,
        )
        .unwrap(),
        &f64s(&[1.875, 2.375, 2.875], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Max,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[1]),
            false,
        )
        .unwrap(),
        &f64s(&[1.0, 1.125, 1.25, 1.375, 2.5, 2.625, 2.75, 2.875], &[2, 4]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[0, 2]),
            false,
        )
        .unwrap(),
        &f64s(&[0.0, 0.5, 1.0], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[2, 0]),
            true,
        )
        .unwrap(),
        &f64s(&[0.0, 0.5, 1.0], &[1, 3, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[-3, -1]),
            false,
        )
        .unwrap(),
        &f64s(&[0.0, 0.5, 1.0], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Min,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[1]),
            false,
        )
        .unwrap(),
        &f64s(&[0.0, 0.125, 0.25, 0.375, 1.5, 1.625, 1.75, 1.875], &[2, 4]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[0, 2]),
            false,
        )
        .unwrap(),
        &f64s(&[0.0, 4.6575164794921875, 100.32405853271484], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[2, 0]),
            true,
        )
        .unwrap(),
        &f64s(&[0.0, 4.6575164794921875, 100.32405853271484], &[1, 3, 1]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[-3, -1]),
            false,
        )
        .unwrap(),
        &f64s(&[0.0, 4.6575164794921875, 100.32405853271484], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &div(&ar(24, DType::F64), 8).reshape(&[2, 3, 4]).unwrap(),
            Some(&[1]),
            false,
        )
        .unwrap(),
        &f64s(
            &[
                0.0,
                0.087890625,
                0.234375,
                0.451171875,
                7.5,
                9.064453125,
                10.828125,
                12.802734375,
            ],
            &[2, 4],
        ),
    );
}

/// Sum/prod give their identity, mean is nan, max/min raise.
#[test]
fn empty_reductions() {
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f32s(&[], &[0, 3]), None, false).unwrap(),
        &f32s(&[0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f32s(&[], &[0, 3]), Some(&[0]), false).unwrap(),
        &f32s(&[0.0, 0.0, 0.0], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f32s(&[], &[0, 3]), Some(&[1]), false).unwrap(),
        &f32s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f32s(&[], &[3, 0]), Some(&[0]), false).unwrap(),
        &f32s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f32s(&[], &[0, 0]), Some(&[0]), false).unwrap(),
        &f32s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f32s(&[], &[2, 0]), Some(&[]), false).unwrap(),
        &f32s(&[], &[2, 0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &i32s(&[], &[0]), None, false).unwrap(),
        &i64s(&[0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Mean, &f32s(&[], &[0, 3]), None, false).unwrap(),
        &f32s(&[NAN32], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Mean, &f32s(&[], &[0, 3]), Some(&[0]), false).unwrap(),
        &f32s(&[NAN32, NAN32, NAN32], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Mean, &f32s(&[], &[0, 3]), Some(&[1]), false).unwrap(),
        &f32s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Mean, &f32s(&[], &[3, 0]), Some(&[0]), false).unwrap(),
        &f32s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Mean, &f32s(&[], &[0, 0]), Some(&[0]), false).unwrap(),
        &f32s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Mean, &f32s(&[], &[2, 0]), Some(&[]), false).unwrap(),
        &f32s(&[], &[2, 0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Mean, &i32s(&[], &[0]), None, false).unwrap(),
        &f64s(&[NAN], &[]),
    );
    assert_err(
        Tensor::reduce(ReduceOp::Max, &f32s(&[], &[0, 3]), None, false),
        ErrorKind::Value,
        "zero-size array to reduction operation maximum which has no identity",
    );
    assert_err(
        Tensor::reduce(ReduceOp::Max, &f32s(&[], &[0, 3]), Some(&[0]), false),
        ErrorKind::Value,
        "zero-size array to reduction operation maximum which has no identity",
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Max, &f32s(&[], &[0, 3]), Some(&[1]), false).unwrap(),
        &f32s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Max, &f32s(&[], &[3, 0]), Some(&[0]), false).unwrap(),
        &f32s(&[], &[0]),
    );
    assert_err(
        Tensor::reduce(ReduceOp::Max, &f32s(&[], &[0, 0]), Some(&[0]), false),
        ErrorKind::Value,
        "zero-size array to reduction operation maximum which has no identity",
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Max, &f32s(&[], &[2, 0]), Some(&[]), false).unwrap(),
        &f32s(&[], &[2, 0]),
    );
    assert_err(
        Tensor::reduce(ReduceOp::Max, &i32s(&[], &[0]), None, false),
        ErrorKind::Value,
        "zero-size array to reduction operation maximum which has no identity",
    );
    assert_err(
        Tensor::reduce(ReduceOp::Min, &f32s(&[], &[0, 3]), None, false),
        ErrorKind::Value,
        "zero-size array to reduction operation minimum which has no identity",
    );
    assert_err(
        Tensor::reduce(ReduceOp::Min, &f32s(&[], &[0, 3]), Some(&[0]), false),
        ErrorKind::Value,
        "zero-size array to reduction operation minimum which has no identity",
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Min, &f32s(&[], &[0, 3]), Some(&[1]), false).unwrap(),
        &f32s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Min, &f32s(&[], &[3, 0]), Some(&[0]), false).unwrap(),
        &f32s(&[], &[0]),
    );
    assert_err(
        Tensor::reduce(ReduceOp::Min, &f32s(&[], &[0, 0]), Some(&[0]), false),
        ErrorKind::Value,
        "zero-size array to reduction operation minimum which has no identity",
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Min, &f32s(&[], &[2, 0]), Some(&[]), false).unwrap(),
        &f32s(&[], &[2, 0]),
    );
    assert_err(
        Tensor::reduce(ReduceOp::Min, &i32s(&[], &[0]), None, false),
        ErrorKind::Value,
        "zero-size array to reduction operation minimum which has no identity",
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f32s(&[], &[0, 3]), None, false).unwrap(),
        &f32s(&[1.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f32s(&[], &[0, 3]), Some(&[0]), false).unwrap(),
        &f32s(&[1.0, 1.0, 1.0], &[3]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f32s(&[], &[0, 3]), Some(&[1]), false).unwrap(),
        &f32s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f32s(&[], &[3, 0]), Some(&[0]), false).unwrap(),
        &f32s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f32s(&[], &[0, 0]), Some(&[0]), false).unwrap(),
        &f32s(&[], &[0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f32s(&[], &[2, 0]), Some(&[]), false).unwrap(),
        &f32s(&[], &[2, 0]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &i32s(&[], &[0]), None, false).unwrap(),
        &i64s(&[1], &[]),
    );
}

#[test]
fn axis_errors() {
    assert_err(
        Tensor::reduce(
            ReduceOp::Sum,
            &f64s(&[0.0; 4], &[2, 2]),
            Some(&[0, 0]),
            false,
        ),
        ErrorKind::Value,
        "duplicate value in 'axis'",
    );
    assert_err(
        Tensor::reduce(
            ReduceOp::Sum,
            &f64s(&[0.0; 4], &[2, 2]),
            Some(&[1, -1]),
            false,
        ),
        ErrorKind::Value,
        "duplicate value in 'axis'",
    );
    assert_err(
        Tensor::reduce(ReduceOp::Sum, &f64s(&[0.0; 4], &[2, 2]), Some(&[2]), false),
        ErrorKind::Value,
        "axis 2 is out of bounds for array of dimension 2",
    );
    assert_err(
        Tensor::reduce(ReduceOp::Sum, &f64s(&[0.0; 4], &[2, 2]), Some(&[-3]), false),
        ErrorKind::Value,
        "axis -3 is out of bounds for array of dimension 2",
    );
    assert_err(
        Tensor::reduce(
            ReduceOp::Sum,
            &f64s(&[0.0; 4], &[2, 2]),
            Some(&[0, 0, 5]),
            false,
        ),
        ErrorKind::Value,
        "axis 5 is out of bounds for array of dimension 2",
    );
    assert_err(
        Tensor::reduce(
            ReduceOp::Sum,
            &f64s(&[0.0; 4], &[2, 2]),
            Some(&[5, 0, 0]),
            false,
        ),
        ErrorKind::Value,
        "axis 5 is out of bounds for array of dimension 2",
    );
    // numpy lets a lone axis 0 or -1 through for 0-d arrays, except in mean.
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f64s(&[5.0], &[]), Some(&[0]), false).unwrap(),
        &f64s(&[5.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f64s(&[5.0], &[]), Some(&[-1]), false).unwrap(),
        &f64s(&[5.0], &[]),
    );
    assert_err(
        Tensor::reduce(ReduceOp::Sum, &f64s(&[5.0], &[]), Some(&[1]), false),
        ErrorKind::Value,
        "axis 1 is out of bounds for array of dimension 0",
    );
    assert_err(
        Tensor::reduce(ReduceOp::Mean, &f64s(&[5.0], &[]), Some(&[0]), false),
        ErrorKind::Value,
        "axis 0 is out of bounds for array of dimension 0",
    );
    assert_err(
        Tensor::reduce(ReduceOp::Mean, &f64s(&[5.0], &[]), Some(&[-1]), false),
        ErrorKind::Value,
        "axis -1 is out of bounds for array of dimension 0",
    );
    assert_err(
        Tensor::reduce(ReduceOp::Mean, &f64s(&[5.0], &[]), Some(&[1]), false),
        ErrorKind::Value,
        "axis 1 is out of bounds for array of dimension 0",
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Max, &f64s(&[5.0], &[]), Some(&[0]), false).unwrap(),
        &f64s(&[5.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Max, &f64s(&[5.0], &[]), Some(&[-1]), false).unwrap(),
        &f64s(&[5.0], &[]),
    );
    assert_err(
        Tensor::reduce(ReduceOp::Max, &f64s(&[5.0], &[]), Some(&[1]), false),
        ErrorKind::Value,
        "axis 1 is out of bounds for array of dimension 0",
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Min, &f64s(&[5.0], &[]), Some(&[0]), false).unwrap(),
        &f64s(&[5.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Min, &f64s(&[5.0], &[]), Some(&[-1]), false).unwrap(),
        &f64s(&[5.0], &[]),
    );
    assert_err(
        Tensor::reduce(ReduceOp::Min, &f64s(&[5.0], &[]), Some(&[1]), false),
        ErrorKind::Value,
        "axis 1 is out of bounds for array of dimension 0",
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f64s(&[5.0], &[]), Some(&[0]), false).unwrap(),
        &f64s(&[5.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f64s(&[5.0], &[]), Some(&[-1]), false).unwrap(),
        &f64s(&[5.0], &[]),
    );
    assert_err(
        Tensor::reduce(ReduceOp::Prod, &f64s(&[5.0], &[]), Some(&[1]), false),
        ErrorKind::Value,
        "axis 1 is out of bounds for array of dimension 0",
    );
    assert_err(
        Tensor::reduce(ReduceOp::Sum, &f64s(&[5.0], &[]), Some(&[0, 0]), false),
        ErrorKind::Value,
        "axis 0 is out of bounds for array of dimension 0",
    );
}

#[test]
fn nan_signed_zero_and_wrapping() {
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f64s(&[1.0, NAN, 3.0], &[3]), None, false).unwrap(),
        &f64s(&[NAN], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Mean, &f64s(&[1.0, NAN, 3.0], &[3]), None, false).unwrap(),
        &f64s(&[NAN], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Max, &f64s(&[1.0, NAN, 3.0], &[3]), None, false).unwrap(),
        &f64s(&[NAN], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Min, &f64s(&[1.0, NAN, 3.0], &[3]), None, false).unwrap(),
        &f64s(&[NAN], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f64s(&[1.0, NAN, 3.0], &[3]), None, false).unwrap(),
        &f64s(&[NAN], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f64s(&[NAN, 1.0], &[2]), None, false).unwrap(),
        &f64s(&[NAN], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Mean, &f64s(&[NAN, 1.0], &[2]), None, false).unwrap(),
        &f64s(&[NAN], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Max, &f64s(&[NAN, 1.0], &[2]), None, false).unwrap(),
        &f64s(&[NAN], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Min, &f64s(&[NAN, 1.0], &[2]), None, false).unwrap(),
        &f64s(&[NAN], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f64s(&[NAN, 1.0], &[2]), None, false).unwrap(),
        &f64s(&[NAN], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f64s(&[0.0, -0.0], &[2]), None, false).unwrap(),
        &f64s(&[0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Mean, &f64s(&[0.0, -0.0], &[2]), None, false).unwrap(),
        &f64s(&[0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Max, &f64s(&[0.0, -0.0], &[2]), None, false).unwrap(),
        &f64s(&[-0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Min, &f64s(&[0.0, -0.0], &[2]), None, false).unwrap(),
        &f64s(&[-0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f64s(&[0.0, -0.0], &[2]), None, false).unwrap(),
        &f64s(&[-0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f64s(&[-0.0, 0.0], &[2]), None, false).unwrap(),
        &f64s(&[0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Mean, &f64s(&[-0.0, 0.0], &[2]), None, false).unwrap(),
        &f64s(&[0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Max, &f64s(&[-0.0, 0.0], &[2]), None, false).unwrap(),
        &f64s(&[0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Min, &f64s(&[-0.0, 0.0], &[2]), None, false).unwrap(),
        &f64s(&[0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f64s(&[-0.0, 0.0], &[2]), None, false).unwrap(),
        &f64s(&[-0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f64s(&[-INF, INF], &[2]), None, false).unwrap(),
        &f64s(&[NAN], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Mean, &f64s(&[-INF, INF], &[2]), None, false).unwrap(),
        &f64s(&[NAN], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Max, &f64s(&[-INF, INF], &[2]), None, false).unwrap(),
        &f64s(&[INF], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Min, &f64s(&[-INF, INF], &[2]), None, false).unwrap(),
        &f64s(&[-INF], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f64s(&[-INF, INF], &[2]), None, false).unwrap(),
        &f64s(&[-INF], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Sum, &f64s(&[-0.0], &[1]), None, false).unwrap(),
        &f64s(&[0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Mean, &f64s(&[-0.0], &[1]), None, false).unwrap(),
        &f64s(&[0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Max, &f64s(&[-0.0], &[1]), None, false).unwrap(),
        &f64s(&[-0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Min, &f64s(&[-0.0], &[1]), None, false).unwrap(),
        &f64s(&[-0.0], &[]),
    );
    assert_tensor(
        &Tensor::reduce(ReduceOp::Prod, &f64s(&[-0.0], &[1]), None, false).unwrap(),
        &f64s(&[-0.0], &[]),
    );
    // Integer sums wrap.
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Sum,
            &i64s(
                &[
                    4611686018427387904,
                    4611686018427387904,
                    4611686018427387904,
                ],
                &[3],
            ),
            None,
            false,
        )
        .unwrap(),
        &i64s(&[-4611686018427387904], &[]),
    );
    // int32 products accumulate in int64.
    assert_tensor(
        &Tensor::reduce(
            ReduceOp::Prod,
            &i32s(&[65536, 65536, 65536], &[3]),
            None,
            false,
        )
        .unwrap(),
        &i64s(&[281474976710656], &[]),
    );
}

#[test]
fn float32_pairwise_summation_matches_numpy_bits() {
    // numpy sums floats pairwise along contiguous runs and sequentially across rows; the
    // float32 results below match it to the last bit (a naive loop would not).
    bits32(
        &Tensor::reduce(
            ReduceOp::Sum,
            &div(&ar(100_000, DType::F32), 7)
                .reshape(&[100, 1000])
                .unwrap(),
            None,
            false,
        )
        .unwrap(),
        &[(0, 1311394843)],
    );
    bits32(
        &Tensor::reduce(
            ReduceOp::Mean,
            &div(&ar(100_000, DType::F32), 7)
                .reshape(&[100, 1000])
                .unwrap(),
            None,
            false,
        )
        .unwrap(),
        &[(0, 1172256330)],
    );
    bits32(
        &Tensor::reduce(
            ReduceOp::Sum,
            &div(&ar(100_000, DType::F32), 7)
                .reshape(&[100, 1000])
                .unwrap(),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &[
            (0, 1227662446),
            (1, 1227662674),
            (500, 1227776731),
            (999, 1227890789),
        ],
    );
    bits32(
        &Tensor::reduce(
            ReduceOp::Mean,
            &div(&ar(100_000, DType::F32), 7)
                .reshape(&[100, 1000])
                .unwrap(),
            Some(&[0]),
            false,
        )
        .unwrap(),
        &[
            (0, 1172110190),
            (1, 1172110482),
            (500, 1172256475),
            (999, 1172402469),
        ],
    );
    bits32(
        &Tensor::reduce(
            ReduceOp::Sum,
            &div(&ar(100_000, DType::F32), 7)
                .reshape(&[100, 1000])
                .unwrap(),
            Some(&[1]),
            false,
        )
        .unwrap(),
        &[
            (0, 1200316050),
            (1, 1213280658),
            (50, 1255942412),
            (99, 1264116806),
        ],
    );
    bits32(
        &Tensor::reduce(
            ReduceOp::Mean,
            &div(&ar(100_000, DType::F32), 7)
                .reshape(&[100, 1000])
                .unwrap(),
            Some(&[1]),
            false,
        )
        .unwrap(),
        &[
            (0, 1116649179),
            (1, 1129723611),
            (50, 1172402614),
            (99, 1180571867),
        ],
    );
    bits32(
        &Tensor::reduce(
            ReduceOp::Sum,
            &div(&ar(100_000, DType::F32), 7)
                .reshape(&[100, 1000])
                .unwrap(),
            Some(&[0, 1]),
            false,
        )
        .unwrap(),
        &[(0, 1311394843)],
    );
    bits32(
        &Tensor::reduce(
            ReduceOp::Mean,
            &div(&ar(100_000, DType::F32), 7)
                .reshape(&[100, 1000])
                .unwrap(),
            Some(&[0, 1]),
            false,
        )
        .unwrap(),
        &[(0, 1172256330)],
    );
    // Sequential float32 summation would give bits 1311394795 for the full sum instead.
}

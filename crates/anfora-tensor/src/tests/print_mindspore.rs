//! MindSpore's layout of a tensor (`mindspore_repr`): the cases of MindSpore's documentation
//! (`ops.Print` of int32 tensors, the repr of a float64 vector) and its rules for widths,
//! summaries and line breaks.

use crate::{DType, Tensor, mindspore_print, mindspore_repr};

fn ints(v: Vec<i64>, shape: &[usize], dtype: DType) -> Tensor {
    Tensor::from_i64(v, shape).unwrap().try_cast(dtype).unwrap()
}

#[test]
fn the_documented_prints() {
    let ones = ints(vec![1, 1], &[2, 1], DType::I32);
    assert_eq!(
        mindspore_repr(&ones),
        "Tensor(shape=[2, 1], dtype=Int32, value=\n[[1],\n [1]])"
    );
    let square = ints(vec![1, 1, 1, 1], &[2, 2], DType::I32);
    assert_eq!(
        mindspore_repr(&square),
        "Tensor(shape=[2, 2], dtype=Int32, value=\n[[1, 1],\n [1, 1]])"
    );
    let f = Tensor::from_f64(vec![1.0, 4.0, 9.0], &[3]).unwrap();
    assert_eq!(
        mindspore_repr(&f),
        "Tensor(shape=[3], dtype=Float64, value= [ 1.00000000e+00,  4.00000000e+00,  9.00000000e+00])"
    );
}

#[test]
fn scalars_use_the_streams_general_form() {
    let cases: [(f64, &str); 8] = [
        (0.1, "0.1"),
        (1.0, "1"),
        (-2.5, "-2.5"),
        (1e-5, "1e-05"),
        (123456789.0, "1.23457e+08"),
        (100000.0, "100000"),
        (f64::INFINITY, "inf"),
        (f64::NAN, "nan"),
    ];
    for (x, text) in cases {
        let t = Tensor::from_f32(vec![x as f32], &[]).unwrap();
        assert_eq!(
            mindspore_repr(&t),
            format!("Tensor(shape=[], dtype=Float32, value= {text})"),
            "{x}"
        );
    }
    let b = Tensor::from_bool(vec![true], &[]).unwrap();
    assert_eq!(
        mindspore_repr(&b),
        "Tensor(shape=[], dtype=Bool, value= True)"
    );
    let i = ints(vec![-7], &[], DType::I64);
    assert_eq!(
        mindspore_repr(&i),
        "Tensor(shape=[], dtype=Int64, value= -7)"
    );
}

#[test]
fn integers_align_to_the_widest_bools_to_five_floats_to_fifteen() {
    let t = ints(vec![1, -20, 300, 4], &[2, 2], DType::I64);
    assert_eq!(
        mindspore_repr(&t),
        "Tensor(shape=[2, 2], dtype=Int64, value=\n[[  1, -20],\n [300,   4]])"
    );
    let b = Tensor::from_bool(vec![true, false], &[2]).unwrap();
    assert_eq!(
        mindspore_repr(&b),
        "Tensor(shape=[2], dtype=Bool, value= [ True, False])"
    );
    let f = Tensor::from_f32(vec![-1.5, 0.0, f32::INFINITY], &[3]).unwrap();
    assert_eq!(
        mindspore_repr(&f),
        format!(
            "Tensor(shape=[3], dtype=Float32, value= [-1.50000000e+00,  0.00000000e+00, {:>15}])",
            "inf"
        )
    );
    let h = Tensor::from_f32(vec![0.5, 0.25], &[2])
        .unwrap()
        .try_cast(DType::F16)
        .unwrap();
    assert_eq!(
        mindspore_repr(&h),
        "Tensor(shape=[2], dtype=Float16, value= [ 5.0000e-01,  2.5000e-01])"
    );
    let u = ints(vec![255, 7], &[2], DType::U8);
    assert_eq!(
        mindspore_repr(&u),
        "Tensor(shape=[2], dtype=UInt8, value= [255,   7])"
    );
}

#[test]
fn long_dimensions_are_summarized_and_long_vectors_break_lines() {
    // 8 rows: the first and last 3 around "...", the comma before "..." and none after it.
    let t = ints((0..16).collect(), &[8, 2], DType::I32);
    assert_eq!(
        mindspore_repr(&t),
        "Tensor(shape=[8, 2], dtype=Int32, value=\n[[ 0,  1],\n [ 2,  3],\n [ 4,  5],\n ...\n [10, 11],\n [12, 13],\n [14, 15]])"
    );
    // A row of 8: 3 ... 3. Widths count only what is shown.
    let r = ints((0..8).map(|i| i * 100).collect(), &[1, 8], DType::I32);
    assert_eq!(
        mindspore_repr(&r),
        "Tensor(shape=[1, 8], dtype=Int32, value=\n[[  0, 100, 200 ... 500, 600, 700]])"
    );
    // Four rows: no summary, each row after a comma.
    let four = ints((0..4).collect(), &[4, 1], DType::I32);
    assert_eq!(
        mindspore_repr(&four),
        "Tensor(shape=[4, 1], dtype=Int32, value=\n[[0],\n [1],\n [2],\n [3]])"
    );
    // 3-D: the indent grows with the depth.
    let cube = ints((0..8).collect(), &[2, 2, 2], DType::I32);
    assert_eq!(
        mindspore_repr(&cube),
        "Tensor(shape=[2, 2, 2], dtype=Int32, value=\n[[[0, 1],\n  [2, 3]],\n [[4, 5],\n  [6, 7]]])"
    );
    // A 1-D float vector breaks after every 12 items (then ", " ends the line).
    let v = Tensor::from_f32(vec![1.0; 13], &[13]).unwrap();
    let text = mindspore_repr(&v);
    let first = text.lines().next().unwrap();
    assert_eq!(first.matches("e+00").count(), 12);
    assert!(first.ends_with("1.00000000e+00, "), "{text}");
    assert!(text.ends_with("\n  1.00000000e+00])"), "{text}");
    // More than 1,000 items in 1-D: 3 ... 3.
    let long = ints((0..1001).collect(), &[1001], DType::I64);
    assert_eq!(
        mindspore_repr(&long),
        "Tensor(shape=[1001], dtype=Int64, value= [   0,    1,    2 ...  998,  999, 1000])"
    );
}

/// Graph mode's `Print`, as MindSpore 2.7.2 writes these tensors (run on this machine kind):
/// no commas, no space after `value=`, rows of a 3-d tensor without blank lines, 0-d tensors
/// as their bare values.
#[test]
fn graph_mode_prints_as_mindspore_2_7_writes_them() {
    let f = |v: Vec<f64>, shape: &[usize], dtype: DType| {
        Tensor::from_f64(v, shape).unwrap().try_cast(dtype).unwrap()
    };
    let cases: Vec<(Tensor, String)> = vec![
        (
            f(vec![1.5, 2.5], &[2], DType::F32),
            "Tensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00  2.50000000e+00])".into(),
        ),
        (
            f(vec![1.5, -2.5, 3.0, 4.0], &[2, 2], DType::F32),
            "Tensor(shape=[2, 2], dtype=Float32, value=\n[[ 1.50000000e+00 -2.50000000e+00]\n [ 3.00000000e+00  4.00000000e+00]])".into(),
        ),
        (
            ints(vec![1, 1], &[2, 1], DType::I32),
            "Tensor(shape=[2, 1], dtype=Int32, value=\n[[1]\n [1]])".into(),
        ),
        (
            ints(vec![1, -20, 3], &[3], DType::I32),
            "Tensor(shape=[3], dtype=Int32, value=[  1 -20   3])".into(),
        ),
        (f(vec![0.1], &[], DType::F32), "0.1".into()),
        (ints(vec![7], &[], DType::I64), "7".into()),
        (Tensor::from_bool(vec![true], &[]).unwrap(), "1".into()),
        (
            Tensor::from_bool(vec![true, false], &[2]).unwrap(),
            "Tensor(shape=[2], dtype=Bool, value=[ True False])".into(),
        ),
        (
            f(vec![f64::NAN, f64::INFINITY, -0.0], &[3], DType::F32),
            "Tensor(shape=[3], dtype=Float32, value=[            nan             inf -0.00000000e+00])".into(),
        ),
        (
            f((0..8).map(f64::from).collect(), &[8], DType::F16),
            "Tensor(shape=[8], dtype=Float16, value=[ 0.0000e+00  1.0000e+00  2.0000e+00  3.0000e+00  4.0000e+00  5.0000e+00  6.0000e+00  7.0000e+00])".into(),
        ),
        (
            ints((0..20).collect(), &[20], DType::I32),
            "Tensor(shape=[20], dtype=Int32, value=[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19])".into(),
        ),
        (
            f((0..2000).map(f64::from).collect(), &[2000], DType::F32),
            "Tensor(shape=[2000], dtype=Float32, value=[ 0.00000000e+00  1.00000000e+00  2.00000000e+00 ...  1.99700000e+03  1.99800000e+03  1.99900000e+03])".into(),
        ),
        (
            ints((0..100).collect(), &[10, 10], DType::I32),
            "Tensor(shape=[10, 10], dtype=Int32, value=\n[[ 0  1  2 ...  7  8  9]\n [10 11 12 ... 17 18 19]\n [20 21 22 ... 27 28 29]\n ...\n [70 71 72 ... 77 78 79]\n [80 81 82 ... 87 88 89]\n [90 91 92 ... 97 98 99]])".into(),
        ),
    ];
    for (t, want) in cases {
        assert_eq!(mindspore_print(&t), want);
    }
    let cube = f((0..24).map(f64::from).collect(), &[2, 3, 4], DType::F32);
    let rows = [
        "[[[ 0.00000000e+00  1.00000000e+00  2.00000000e+00  3.00000000e+00]",
        "  [ 4.00000000e+00  5.00000000e+00  6.00000000e+00  7.00000000e+00]",
        "  [ 8.00000000e+00  9.00000000e+00  1.00000000e+01  1.10000000e+01]]",
        " [[ 1.20000000e+01  1.30000000e+01  1.40000000e+01  1.50000000e+01]",
        "  [ 1.60000000e+01  1.70000000e+01  1.80000000e+01  1.90000000e+01]",
        "  [ 2.00000000e+01  2.10000000e+01  2.20000000e+01  2.30000000e+01]]])",
    ];
    assert_eq!(
        mindspore_print(&cube),
        format!(
            "Tensor(shape=[2, 3, 4], dtype=Float32, value=\n{}",
            rows.join("\n")
        )
    );
    // Twelve floats to a line, the separator's space before the break.
    let long = f((0..30).map(f64::from).collect(), &[30], DType::F32);
    let text = mindspore_print(&long);
    assert!(text.contains("1.10000000e+01 \n  1.20000000e+01"), "{text}");
}

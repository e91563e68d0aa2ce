//! Strided views: transpose, basic indexing and broadcast_to share their input's storage;
//! 2-D products read them in place; every other reader sees their elements in order.

use super::*;
use proptest::prelude::*;

fn counting(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    f64s(&(0..n).map(|i| i as f64).collect::<Vec<_>>(), shape)
}

fn slice(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> IndexItem {
    IndexItem::Slice { start, stop, step }
}

#[test]
fn transpose_indexing_and_broadcast_are_views_of_the_same_storage() {
    let x = counting(&[2, 3]);
    let t = x.transpose(None).unwrap();
    assert!(t.is_view() && t.shares_storage(&x));
    assert_eq!(
        t.repr(),
        "array([[0., 3.],\n       [1., 4.],\n       [2., 5.]])"
    );
    let r = x
        .index(&[IndexItem::Ellipsis, slice(None, None, Some(-2))])
        .unwrap();
    assert!(r.is_view() && r.shares_storage(&x));
    assert_eq!(r.to_f64_vec(), vec![2.0, 0.0, 5.0, 3.0]);
    let b = f64s(&[1.0, 2.0, 3.0], &[3]).broadcast_to(&[2, 3]).unwrap();
    assert!(b.is_view());
    assert_eq!(b.to_f64_vec(), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    // A view that reads its storage in order is contiguous again.
    let tt = t.transpose(None).unwrap();
    assert!(!tt.is_view() && tt.same_as(&x));
    let row = x.index(&[IndexItem::Int(1)]).unwrap();
    assert!(row.is_view());
    assert_eq!(row.to_f64_vec(), vec![3.0, 4.0, 5.0]);
    assert!(!x.index(&[slice(None, None, None)]).unwrap().is_view());
}

/// Transposed matrices are gathered by the blocked transpose (whole 16×16 or 8×8 blocks, then
/// ragged edges), column slices of them too; every dtype gives the elements in order.
#[test]
fn transposed_matrices_gather_in_order() {
    for (rows, cols) in [
        (2, 2),
        (3, 70),
        (37, 70),
        (64, 64),
        (129, 17),
        (1, 5),
        (5, 1),
    ] {
        for dtype in [
            DType::F32,
            DType::F64,
            DType::I32,
            DType::I64,
            DType::Bool,
            DType::F16,
        ] {
            let x = counting(&[rows, cols + 5]);
            // Columns 2..cols+2 of x, transposed: strides (1, cols + 5) from offset 2.
            let v = x
                .index(&[
                    slice(None, None, None),
                    slice(Some(2), Some(cols as i64 + 2), None),
                ])
                .unwrap()
                .cast(dtype)
                .transpose(None)
                .unwrap();
            let want: Vec<f64> = (0..cols)
                .flat_map(|j| (0..rows).map(move |i| (i * (cols + 5) + j + 2) as f64))
                .collect();
            // In the dtype (bool, float16's rounding above 2048), cast from dense values.
            let want = f64s(&want, &[cols, rows]).cast(dtype).to_f64_vec();
            assert_eq!(v.shape(), &[cols, rows]);
            assert_eq!(v.contiguous().to_f64_vec(), want, "{rows}×{cols} {dtype:?}");
        }
    }
}

#[test]
fn views_are_never_written_in_place() {
    let x = counting(&[2, 2]);
    let t = x.transpose(None).unwrap();
    drop(x);
    assert!(!t.is_unique());
    let y = Tensor::binary_owned(BinaryOp::Add, t.clone(), &f64s(&[1.0], &[1])).unwrap();
    assert_eq!(y.to_f64_vec(), vec![1.0, 3.0, 2.0, 4.0]);
    assert_eq!(t.to_f64_vec(), vec![0.0, 2.0, 1.0, 3.0]);
    assert!(!y.is_view());
}

#[test]
fn products_read_transposed_and_sliced_matrices_in_place() {
    let a = counting(&[4, 3]);
    let b = counting(&[4, 5]);
    let at = a.transpose(None).unwrap();
    let got = Tensor::matmul(&at, &b).unwrap();
    assert!(
        !at.is_gathered(),
        "the product read the transpose through its strides"
    );
    let want = Tensor::matmul(&at.contiguous(), &b).unwrap();
    assert!(got.same_as(&want));
    // Every other row, columns reversed: strides (6, -1) are copied, (6, 1) are not.
    let sliced = b.index(&[slice(None, None, Some(2))]).unwrap();
    let g = Tensor::gemm(&sliced, &counting(&[5, 2]), None, false, false).unwrap();
    assert!(!sliced.is_gathered());
    let w = Tensor::gemm(&sliced.contiguous(), &counting(&[5, 2]), None, false, false).unwrap();
    assert!(g.same_as(&w));
    let reversed = b
        .index(&[IndexItem::Ellipsis, slice(None, None, Some(-1))])
        .unwrap();
    let g = Tensor::matmul(&reversed, &counting(&[5, 2])).unwrap();
    let w = Tensor::matmul(&reversed.contiguous(), &counting(&[5, 2])).unwrap();
    assert!(g.same_as(&w));
    // With the transpose flag as well: (a.T).T = a.
    let g = Tensor::gemm(&at, &counting(&[3, 2]), None, true, false).unwrap();
    assert!(g.same_as(&Tensor::matmul(&a, &counting(&[3, 2])).unwrap()));
}

#[test]
fn a_broadcast_view_allocates_only_when_read() {
    let one = f32s(&[7.0], &[1]);
    let big = one.broadcast_to(&[1 << 20]).unwrap();
    assert!(big.is_view() && !big.is_gathered());
    let s = Tensor::reduce(ReduceOp::Sum, &big, None, false).unwrap();
    assert_eq!(s.to_f64_vec(), vec![7.0 * (1 << 20) as f64]);
    assert!(big.is_gathered());
}

/// One view-making step.
#[derive(Clone, Debug)]
enum Step {
    Transpose(u64),
    Index(Vec<(i64, i64, i64)>),
    Broadcast,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        any::<u64>().prop_map(Step::Transpose),
        prop::collection::vec(
            (
                -4i64..4,
                -4i64..5,
                prop_oneof![Just(1i64), Just(2), Just(-1), Just(-2)]
            ),
            0..3
        )
        .prop_map(Step::Index),
        Just(Step::Broadcast),
    ]
}

fn apply(t: &Tensor, s: &Step) -> Option<Tensor> {
    match s {
        Step::Transpose(seed) => {
            let mut axes: Vec<i64> = (0..t.ndim() as i64).collect();
            let n = axes.len();
            for i in 0..n {
                axes.swap(i, (seed.rotate_left(i as u32 * 7) as usize) % n);
            }
            t.transpose(Some(&axes)).ok()
        }
        Step::Index(items) => {
            let items: Vec<IndexItem> = items
                .iter()
                .take(t.ndim())
                .map(|&(a, b, c)| slice(Some(a), Some(b), Some(c)))
                .collect();
            t.index(&items).ok()
        }
        Step::Broadcast => {
            let mut shape = vec![2];
            shape.extend_from_slice(t.shape());
            t.broadcast_to(&shape).ok()
        }
    }
}

proptest! {
    /// A chain of views (strides composed) has the elements of the same steps applied each to
    /// a contiguous copy of the previous result.
    #[test]
    fn chained_views_read_what_copies_would(
        shape in prop::collection::vec(1usize..4, 1..4),
        steps in prop::collection::vec(step(), 1..5),
    ) {
        let mut view = counting(&shape);
        let mut copy = view.clone();
        for s in &steps {
            let (Some(v), Some(c)) = (apply(&view, s), apply(&copy, s)) else { return Ok(()); };
            view = v;
            copy = c.contiguous();
            prop_assert_eq!(view.shape(), copy.shape());
            prop_assert_eq!(view.to_f64_vec(), copy.to_f64_vec());
        }
        let doubled = Tensor::binary_scalar(BinaryOp::Mul, &view, Scalar::Int(2), false).unwrap();
        let want = Tensor::binary_scalar(BinaryOp::Mul, &copy, Scalar::Int(2), false).unwrap();
        prop_assert!(doubled.same_as(&want));
        prop_assert_eq!(view.repr(), copy.repr());
    }
}

proptest! {
    /// Products of transposed and sliced matrices read in place equal the products of their
    /// copies (small integers, so any summation order gives the same sums).
    #[test]
    fn products_of_views_equal_products_of_copies(
        (m, k, n) in (1usize..7, 1usize..7, 1usize..7),
        transpose_a in any::<bool>(),
        step in 1i64..3,
        start in 0i64..2,
        f64_dtype in any::<bool>(),
    ) {
        let dtype = if f64_dtype { DType::F64 } else { DType::F32 };
        let ints = |rows: usize, cols: usize| {
            let v: Vec<f64> = (0..rows * cols).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
            f64s(&v, &[rows, cols]).cast(dtype)
        };
        // `a` is m×k: stored as k×m and transposed, or as (m·step + start)×k with rows picked.
        let a = if transpose_a {
            ints(k, m).transpose(None).unwrap()
        } else {
            let rows = m * step as usize + start as usize;
            ints(rows, k)
                .index(&[slice(Some(start), None, Some(step))])
                .unwrap()
                .index(&[slice(None, Some(m as i64), None)])
                .unwrap()
        };
        let b = ints(n, k).transpose(None).unwrap();
        prop_assert_eq!(a.shape(), &[m, k][..]);
        let got = Tensor::matmul(&a, &b).unwrap();
        let want = Tensor::matmul(&a.contiguous(), &b.contiguous()).unwrap();
        prop_assert!(got.same_as(&want), "{} vs {}", got.repr(), want.repr());
        let c = ints(m, n);
        let got = Tensor::gemm(&a, &b, Some(c.clone()), false, false).unwrap();
        let want = Tensor::gemm(&a.contiguous(), &b.contiguous(), Some(c), false, false).unwrap();
        prop_assert!(got.same_as(&want));
    }
}

#[test]
fn printing_reads_a_view_in_place() {
    // numpy prints a broadcast, a transpose or a reversed slice without copying it: so does
    // anfora, so that printing a view larger than memory is not a MemoryError.
    let a = counting(&[4, 3]);
    let views = [
        f32s(&[7.0, 8.0], &[2, 1]).broadcast_to(&[2, 2000]).unwrap(),
        a.transpose(None).unwrap(),
        a.index(&[slice(None, None, Some(-2))]).unwrap(),
        a.index(&[IndexItem::Int(1), IndexItem::Int(2)]).unwrap(),
    ];
    for v in views {
        let (repr, text) = (v.repr(), v.to_string());
        assert!(v.is_view() && !v.is_gathered(), "{repr}");
        let copy = v.contiguous();
        assert_eq!((repr, text), (copy.repr(), copy.to_string()));
    }
}

/// Broadcasts that repeat one contiguous block (copied once, then doubled in place) and ones
/// that do not (row by row) gather the same elements as reading each index.
#[test]
fn repeated_blocks_gather_in_order() {
    for (from, to) in [
        (vec![128], vec![360, 128]),
        (vec![1, 5], vec![7, 5]),
        (vec![3, 4], vec![2, 3, 4]),
        (vec![1, 3, 4], vec![5, 3, 4]),
        (vec![3, 1], vec![3, 6]),
        (vec![2, 1, 3], vec![2, 4, 3]),
        (vec![4], vec![1, 4]),
        (vec![1], vec![9]),
        (vec![3], vec![0, 3]),
    ] {
        let x = counting(&from);
        let b = x.broadcast_to(&to).unwrap();
        let got = b.contiguous().to_f64_vec();
        let src = x.to_f64_vec();
        let want: Vec<f64> = (0..to.iter().product::<usize>())
            .map(|flat| {
                // The source index: each axis of `to` taken modulo the source's size there.
                let mut rest = flat;
                let mut index = 0;
                let mut stride = 1;
                for axis in (0..to.len()).rev() {
                    let i = rest % to[axis];
                    rest /= to[axis];
                    let k = axis as isize - (to.len() - from.len()) as isize;
                    if k >= 0 {
                        let d = from[k as usize];
                        index += (i % d) * stride;
                        stride *= d;
                    }
                }
                src[index]
            })
            .collect();
        assert_eq!(got, want, "{from:?} to {to:?}");
    }
}

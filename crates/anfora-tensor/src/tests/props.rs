//! Property tests against naive reference implementations written here.

use super::*;
use proptest::prelude::*;

/// Row-major multi-index of flat position `flat` in `shape`.
fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for (i, &d) in shape.iter().enumerate().rev() {
        idx[i] = flat % d;
        flat /= d;
    }
    idx
}

fn ravel(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &d)| acc * d + i)
}

/// Naive broadcasting: the element of `shape` read at output index `out_idx`.
fn broadcast_index(out_idx: &[usize], shape: &[usize]) -> usize {
    let pad = out_idx.len() - shape.len();
    let idx: Vec<usize> = shape
        .iter()
        .enumerate()
        .map(|(i, &d)| if d == 1 { 0 } else { out_idx[pad + i] })
        .collect();
    ravel(&idx, shape)
}

/// An output shape and two operand shapes that broadcast to it.
fn broadcast_pair() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, Vec<usize>)> {
    prop::collection::vec(0usize..4, 0..4).prop_flat_map(|out| {
        let n = out.len();
        let operand = |out: Vec<usize>| {
            (0..=n, prop::collection::vec(any::<bool>(), n)).prop_map(move |(skip, ones)| {
                out.iter()
                    .zip(&ones)
                    .skip(skip)
                    .map(|(&d, &one)| if one { 1 } else { d })
                    .collect::<Vec<usize>>()
            })
        };
        (Just(out.clone()), operand(out.clone()), operand(out))
    })
}

fn values<T: std::fmt::Debug, S: Strategy<Value = T>>(
    shape: &[usize],
    elem: S,
) -> impl Strategy<Value = Vec<T>> + use<T, S> {
    prop::collection::vec(elem, shape.iter().product::<usize>())
}

fn int_case() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, Vec<i64>, Vec<i64>)> {
    broadcast_pair().prop_flat_map(|(_, sa, sb)| {
        let va = values(&sa, -20i64..20);
        let vb = values(&sb, -20i64..20);
        (Just(sa), Just(sb), va, vb)
    })
}

fn float_case() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, Vec<f32>, Vec<i32>)> {
    broadcast_pair().prop_flat_map(|(_, sa, sb)| {
        let va = values(&sa, prop_oneof![-1e3f32..1e3, Just(f32::NAN), Just(-0.0)]);
        let vb = values(&sb, -1000i32..1000);
        (Just(sa), Just(sb), va, vb)
    })
}

/// The actual broadcast shape, computed naively.
fn naive_shape(a: &[usize], b: &[usize]) -> Vec<usize> {
    let n = a.len().max(b.len());
    let get = |s: &[usize], i: usize| {
        if i + s.len() >= n {
            s[i + s.len() - n]
        } else {
            1
        }
    };
    (0..n)
        .map(|i| get(a, i).max(get(b, i)) * usize::from(get(a, i) != 0 && get(b, i) != 0))
        .collect()
}

type IntOp = (BinaryOp, fn(i64, i64) -> i64);
type FloatOp = (BinaryOp, fn(f64, f64) -> f64);

fn py_floordiv(a: i64, b: i64) -> i64 {
    (a as f64 / b as f64).floor() as i64
}

proptest! {
    #[test]
    fn int_binary_ops_match_naive_broadcasting((sa, sb, va, vb) in int_case()) {
        let a = i64s(&va, &sa);
        let b = i64s(&vb, &sb);
        let out = naive_shape(&sa, &sb);
        let n: usize = out.iter().product();
        let ops: [IntOp; 6] = [
            (BinaryOp::Add, |x, y| x + y),
            (BinaryOp::Sub, |x, y| x - y),
            (BinaryOp::Mul, |x, y| x * y),
            (BinaryOp::Maximum, |x, y| x.max(y)),
            (BinaryOp::BitXor, |x, y| x ^ y),
            (BinaryOp::Lt, |x, y| i64::from(x < y)),
        ];
        for (op, f) in ops {
            let got = Tensor::binary(op, &a, &b).unwrap();
            prop_assert_eq!(got.shape(), &out[..]);
            let expected: Vec<i64> = (0..n).map(|i| {
                let idx = unravel(i, &out);
                f(va[broadcast_index(&idx, &sa)], vb[broadcast_index(&idx, &sb)])
            }).collect();
            let got: Vec<i64> = got.to_f64_vec().iter().map(|&x| x as i64).collect();
            prop_assert_eq!(got, expected, "{:?}", op);
        }
        // Python's floor division and modulo when no divisor is zero.
        if !vb.contains(&0) {
            let q = Tensor::binary(BinaryOp::FloorDiv, &a, &b).unwrap();
            let r = Tensor::binary(BinaryOp::Mod, &a, &b).unwrap();
            for i in 0..n {
                let idx = unravel(i, &out);
                let (x, y) = (va[broadcast_index(&idx, &sa)], vb[broadcast_index(&idx, &sb)]);
                prop_assert_eq!(q.as_i64_slice().unwrap()[i], py_floordiv(x, y));
                prop_assert_eq!(r.as_i64_slice().unwrap()[i], x - y * py_floordiv(x, y));
            }
        } else if n > 0 {
            prop_assert!(Tensor::binary(BinaryOp::FloorDiv, &a, &b).is_err());
        }
    }

    #[test]
    fn mixed_float32_int32_ops_compute_in_float64((sa, sb, va, vb) in float_case()) {
        let a = f32s(&va, &sa);
        let b = i32s(&vb, &sb);
        let out = naive_shape(&sa, &sb);
        let n: usize = out.iter().product();
        let ops: [FloatOp; 3] = [
            (BinaryOp::Add, |x, y| x + y),
            (BinaryOp::Mul, |x, y| x * y),
            (BinaryOp::Div, |x, y| x / y),
        ];
        for (op, f) in ops {
            let got = Tensor::binary(op, &a, &b).unwrap();
            prop_assert_eq!(got.dtype(), DType::F64);
            prop_assert_eq!(got.shape(), &out[..]);
            let got = got.as_f64_slice().unwrap();
            for (i, &g) in got.iter().enumerate().take(n) {
                let idx = unravel(i, &out);
                let e = f(f64::from(va[broadcast_index(&idx, &sa)]), f64::from(vb[broadcast_index(&idx, &sb)]));
                prop_assert!(g.to_bits() == e.to_bits() || (g.is_nan() && e.is_nan()), "{:?}: {} vs {}", op, g, e);
            }
        }
    }

    #[test]
    fn transpose_round_trips_and_moves_elements(
        (shape, perm) in prop::collection::vec(1usize..4, 0..5)
            .prop_flat_map(|s| {
                let n = s.len();
                (Just(s), Just((0..n).collect::<Vec<usize>>()).prop_shuffle())
            })
    ) {
        let n: usize = shape.iter().product();
        let t = ar(n as i64, DType::I64).reshape(&shape.iter().map(|&d| d as i64).collect::<Vec<_>>()).unwrap();
        let axes: Vec<i64> = perm.iter().map(|&p| p as i64).collect();
        let tt = t.transpose(Some(&axes)).unwrap();
        let new_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        prop_assert_eq!(tt.shape(), &new_shape[..]);
        for (i, &v) in tt.as_i64_slice().unwrap().iter().enumerate() {
            let idx = unravel(i, &new_shape);
            let mut src = vec![0; shape.len()];
            for (k, &p) in perm.iter().enumerate() {
                src[p] = idx[k];
            }
            prop_assert_eq!(v, ravel(&src, &shape) as i64);
        }
        let mut inverse = vec![0i64; perm.len()];
        for (k, &p) in perm.iter().enumerate() {
            inverse[p] = k as i64;
        }
        prop_assert!(tt.transpose(Some(&inverse)).unwrap().same_as(&t));
        let flat = tt.reshape(&[-1]).unwrap();
        prop_assert!(flat.reshape(&new_shape.iter().map(|&d| d as i64).collect::<Vec<_>>()).unwrap().same_as(&tt));
    }

    #[test]
    fn index_matches_naive_selection(
        (shape, items) in prop::collection::vec(0usize..6, 1..4).prop_flat_map(|shape| {
            let per_axis: Vec<_> = shape.iter().map(|&d| {
                let d = d as i64;
                prop_oneof![
                    (-d.max(1)..d.max(1)).prop_map(IndexItem::Int),
                    (
                        prop::option::of(-8i64..8),
                        prop::option::of(-8i64..8),
                        prop::option::of(prop_oneof![-3i64..0, 1i64..4]),
                    ).prop_map(|(start, stop, step)| IndexItem::Slice { start, stop, step }),
                ]
            }).collect();
            (Just(shape), per_axis)
        })
    ) {
        let n: usize = shape.iter().product();
        let t = ar(n as i64, DType::I64).reshape(&shape.iter().map(|&d| d as i64).collect::<Vec<_>>()).unwrap();
        let got = t.index(&items);
        // Naive: the selected positions along each axis, then their cartesian product.
        let mut selected: Vec<Vec<usize>> = Vec::new();
        for (item, &d) in items.iter().zip(&shape) {
            let d = d as i64;
            match *item {
                IndexItem::Int(i) => {
                    let j = if i < 0 { i + d } else { i };
                    if !(0..d).contains(&j) {
                        prop_assert_eq!(got.unwrap_err().kind, ErrorKind::Index);
                        return Ok(());
                    }
                    selected.push(vec![j as usize]);
                }
                IndexItem::Slice { start, stop, step } => {
                    let step = step.unwrap_or(1);
                    let norm = |v: i64| if v < 0 { v + d } else { v };
                    let mut picks = Vec::new();
                    if step > 0 {
                        let mut i = start.map_or(0, norm).clamp(0, d);
                        let stop = stop.map_or(d, norm).clamp(0, d);
                        while i < stop {
                            picks.push(i as usize);
                            i += step;
                        }
                    } else {
                        let mut i = start.map_or(d - 1, norm).clamp(-1, d - 1);
                        let stop = stop.map_or(-1, |v| norm(v).clamp(-1, d - 1));
                        while i > stop {
                            picks.push(i as usize);
                            i += step;
                        }
                    }
                    selected.push(picks);
                }
                _ => unreachable!(),
            }
        }
        let got = got.unwrap();
        let kept: Vec<usize> = items.iter().zip(&selected)
            .filter(|(item, _)| matches!(item, IndexItem::Slice { .. }))
            .map(|(_, s)| s.len())
            .collect();
        prop_assert_eq!(got.shape(), &kept[..]);
        let mut expected = Vec::new();
        let counts: Vec<usize> = selected.iter().map(Vec::len).collect();
        let total: usize = counts.iter().product();
        for k in 0..total {
            let pick = unravel(k, &counts);
            let src: Vec<usize> = pick.iter().zip(&selected).map(|(&p, s)| s[p]).collect();
            expected.push(ravel(&src, &shape) as i64);
        }
        prop_assert_eq!(got.as_i64_slice().unwrap(), &expected[..]);
    }

    #[test]
    fn int_sums_and_float_max_match_naive(
        (shape, vals, axes, keep) in prop::collection::vec(0usize..4, 0..4).prop_flat_map(|shape| {
            let n: usize = shape.iter().product();
            let nd = shape.len();
            (
                Just(shape),
                prop::collection::vec(-100i64..100, n),
                prop::sample::subsequence((0..nd).collect::<Vec<_>>(), 0..=nd),
                any::<bool>(),
            )
        })
    ) {
        let t = i64s(&vals, &shape);
        let axes_i: Vec<i64> = axes.iter().map(|&a| a as i64 - shape.len() as i64).collect();
        let sum = Tensor::reduce(ReduceOp::Sum, &t, Some(&axes_i), keep).unwrap();
        let out_keep: Vec<usize> = shape.iter().enumerate().map(|(i, &d)| if axes.contains(&i) { 1 } else { d }).collect();
        let mut expected = vec![0i64; out_keep.iter().product()];
        for (i, &v) in vals.iter().enumerate() {
            let mut idx = unravel(i, &shape);
            for &a in &axes {
                idx[a] = 0;
            }
            expected[ravel(&idx, &out_keep)] += v;
        }
        prop_assert_eq!(sum.as_i64_slice().unwrap(), &expected[..]);
        let expected_shape: Vec<usize> = if keep {
            out_keep.clone()
        } else {
            shape.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, &d)| d).collect()
        };
        prop_assert_eq!(sum.shape(), &expected_shape[..]);
        // Max over the same axes, in float64, where no reduced axis is empty.
        let count: usize = axes.iter().map(|&a| shape[a]).product();
        let f = t.cast(DType::F64);
        let max = Tensor::reduce(ReduceOp::Max, &f, Some(&axes_i), keep);
        if count == 0 {
            prop_assert!(max.is_err());
        } else {
            let mut expected = vec![f64::NEG_INFINITY; out_keep.iter().product()];
            for (i, &v) in vals.iter().enumerate() {
                let mut idx = unravel(i, &shape);
                for &a in &axes {
                    idx[a] = 0;
                }
                let e = &mut expected[ravel(&idx, &out_keep)];
                *e = e.max(v as f64);
            }
            let max = max.unwrap();
            prop_assert_eq!(max.as_f64_slice().unwrap(), &expected[..]);
        }
    }
}

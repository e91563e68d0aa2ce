//! Scatter kernels: `scatter_update`/`scatter_add` along axis 0 and
//! `scatter_nd_update`/`scatter_nd_add`, checked against numpy's `out[idx] = updates` and
//! `np.add.at`, plus a property test against a naive reference.

use super::*;
use proptest::prelude::*;

#[test]
fn update_1d() {
    let x = i64s(&[1, 2, 3, 4, 5], &[5]);
    let out = x
        .scatter_update(&i32s(&[0, 2], &[2]), &i64s(&[10, 30], &[2]))
        .unwrap();
    assert_tensor(&out, &i64s(&[10, 2, 30, 4, 5], &[5]));
    // x itself is unchanged, and the result is a buffer of its own.
    assert_tensor(&x, &i64s(&[1, 2, 3, 4, 5], &[5]));
    assert!(!out.shares_storage(&x));
}

#[test]
fn update_2d_rows() {
    let x = f32s(&[0., 1., 2., 3., 4., 5.], &[3, 2]);
    let out = x
        .scatter_update(&i64s(&[2, 0], &[2]), &f32s(&[1., 1., 2., 2.], &[2, 2]))
        .unwrap();
    assert_tensor(&out, &f32s(&[2., 2., 2., 3., 1., 1.], &[3, 2]));
}

#[test]
fn update_with_2d_indices() {
    let x = i32s(&[0; 4], &[4]);
    let out = x
        .scatter_update(&i64s(&[0, 1, 3, 2], &[2, 2]), &i32s(&[1, 2, 3, 4], &[2, 2]))
        .unwrap();
    assert_tensor(&out, &i32s(&[1, 2, 4, 3], &[4]));

    // 2-d indices into 2-d x: updates have shape indices.shape + x.shape[1:] = (1, 2, 2).
    let x = f64s(&[0.; 6], &[3, 2]);
    let out = x
        .scatter_update(
            &i32s(&[2, 1], &[1, 2]),
            &f64s(&[1., 2., 3., 4.], &[1, 2, 2]),
        )
        .unwrap();
    assert_tensor(&out, &f64s(&[0., 0., 3., 4., 1., 2.], &[3, 2]));
}

#[test]
fn update_with_0d_index() {
    let x = i64s(&[0, 1, 2, 3, 4, 5], &[3, 2]);
    let out = x
        .scatter_update(&i64s(&[1], &[]), &i64s(&[8, 9], &[2]))
        .unwrap();
    assert_tensor(&out, &i64s(&[0, 1, 8, 9, 4, 5], &[3, 2]));
    let out = x
        .scatter_add(&i32s(&[-1], &[]), &i64s(&[10, 20], &[2]))
        .unwrap();
    assert_tensor(&out, &i64s(&[0, 1, 2, 3, 14, 25], &[3, 2]));
}

#[test]
fn negative_indices_wrap() {
    let x = i64s(&[0, 0, 0], &[3]);
    let out = x
        .scatter_update(&i64s(&[-1, -3], &[2]), &i64s(&[7, 8], &[2]))
        .unwrap();
    assert_tensor(&out, &i64s(&[8, 0, 7], &[3]));
    let out = x
        .scatter_add(&i32s(&[-2, 1], &[2]), &i64s(&[7, 8], &[2]))
        .unwrap();
    assert_tensor(&out, &i64s(&[0, 15, 0], &[3]));
}

#[test]
fn duplicate_updates_last_wins() {
    let x = i64s(&[0, 0, 0], &[3]);
    let out = x
        .scatter_update(&i64s(&[1, 1, -2], &[3]), &i64s(&[1, 2, 3], &[3]))
        .unwrap();
    assert_tensor(&out, &i64s(&[0, 3, 0], &[3]));
    // Row-major order of 2-d indices: [[1, 0], [0, 1]] writes 1 last with 4, 0 last with 3.
    let out = x
        .scatter_update(&i64s(&[1, 0, 0, 1], &[2, 2]), &i64s(&[1, 2, 3, 4], &[2, 2]))
        .unwrap();
    assert_tensor(&out, &i64s(&[3, 4, 0], &[3]));
}

#[test]
fn duplicate_adds_accumulate() {
    let x = i64s(&[10, 20, 30], &[3]);
    let out = x
        .scatter_add(&i64s(&[1, 1, -2, 0], &[4]), &i64s(&[1, 2, 3, 4], &[4]))
        .unwrap();
    assert_tensor(&out, &i64s(&[14, 26, 30], &[3]));

    let x = f64s(&[0.; 4], &[2, 2]);
    let out = x
        .scatter_add(
            &i32s(&[0, 0, 1], &[3]),
            &f64s(&[1., 2., 3., 4., 5., 6.], &[3, 2]),
        )
        .unwrap();
    assert_tensor(&out, &f64s(&[4., 6., 5., 6.], &[2, 2]));
}

#[test]
fn int_adds_wrap() {
    let x = i32s(&[i32::MAX, 0], &[2]);
    let out = x
        .scatter_add(&i64s(&[0, 1], &[2]), &i32s(&[1, -1], &[2]))
        .unwrap();
    assert_tensor(&out, &i32s(&[i32::MIN, -1], &[2]));
}

#[test]
fn float32_adds_round_in_float32() {
    // 1 + 2**-24 rounds back to 1 in float32 each time; float64 accumulation would not.
    let tiny = 2f32.powi(-24);
    let x = f32s(&[1.0], &[1]);
    let out = x
        .scatter_add(&i64s(&[0, 0], &[2]), &f32s(&[tiny, tiny], &[2]))
        .unwrap();
    assert_tensor(&out, &f32s(&[1.0], &[1]));
}

#[test]
fn nd_update_k1() {
    let x = i64s(&[0, 1, 2, 3, 4, 5], &[3, 2]);
    let out = x
        .scatter_nd_update(&i64s(&[2, 0], &[2, 1]), &i64s(&[7, 8, 9, 10], &[2, 2]))
        .unwrap();
    assert_tensor(&out, &i64s(&[9, 10, 2, 3, 7, 8], &[3, 2]));
}

#[test]
fn nd_update_k2_of_3d() {
    // x of shape (2, 3, 2): each index pair picks a row of 2.
    let x = i32s(&[0; 12], &[2, 3, 2]);
    let out = x
        .scatter_nd_update(
            &i32s(&[0, 1, 1, -1], &[2, 2]),
            &i32s(&[1, 2, 3, 4], &[2, 2]),
        )
        .unwrap();
    assert_tensor(
        &out,
        &i32s(&[0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 3, 4], &[2, 3, 2]),
    );
}

#[test]
fn nd_update_k_equal_to_ndim() {
    let x = f64s(&[0., 1., 2., 3., 4., 5.], &[2, 3]);
    let out = x
        .scatter_nd_update(
            &i64s(&[0, 0, 1, 2, -1, 0, 0, 0], &[4, 2]),
            &f64s(&[10., 20., 30., 40.], &[4]),
        )
        .unwrap();
    // (0, 0) is written twice: the last write (40) wins.
    assert_tensor(&out, &f64s(&[40., 1., 2., 30., 4., 20.], &[2, 3]));
    // A grid of index tuples: indices (2, 1, 2) -> updates (2, 1).
    let out = x
        .scatter_nd_update(
            &i32s(&[1, 1, 0, 2], &[2, 1, 2]),
            &f64s(&[-1., -2.], &[2, 1]),
        )
        .unwrap();
    assert_tensor(&out, &f64s(&[0., 1., -2., 3., -1., 5.], &[2, 3]));
}

#[test]
fn nd_add_accumulates() {
    let x = i64s(&[0; 4], &[2, 2]);
    let out = x
        .scatter_nd_add(
            &i64s(&[0, 1, 0, -1, 1, 0], &[3, 2]),
            &i64s(&[1, 2, 3], &[3]),
        )
        .unwrap();
    assert_tensor(&out, &i64s(&[0, 3, 3, 0], &[2, 2]));
    let x = f32s(&[1., 1., 1., 1.], &[2, 2]);
    let out = x
        .scatter_nd_add(&i32s(&[1, 1], &[2, 1]), &f32s(&[1., 2., 3., 4.], &[2, 2]))
        .unwrap();
    assert_tensor(&out, &f32s(&[1., 1., 5., 7.], &[2, 2]));
}

#[test]
fn empty_indices_copy_x() {
    let x = i64s(&[0, 1, 2, 3, 4, 5], &[3, 2]);
    for out in [
        x.scatter_update(&i64s(&[], &[0]), &i64s(&[], &[0, 2])),
        x.scatter_add(&i32s(&[], &[2, 0]), &i64s(&[], &[2, 0, 2])),
        x.scatter_nd_update(&i64s(&[], &[0, 2]), &i64s(&[], &[0])),
        x.scatter_nd_add(&i64s(&[], &[0, 1]), &i64s(&[], &[0, 2])),
    ] {
        let out = out.unwrap();
        assert_tensor(&out, &x);
        assert!(!out.shares_storage(&x));
    }
    // An empty x with empty indices.
    let e = f32s(&[], &[0, 3]);
    let out = e
        .scatter_update(&i64s(&[], &[0]), &f32s(&[], &[0, 3]))
        .unwrap();
    assert_tensor(&out, &e);
}

#[test]
fn updates_cast_to_x_dtype() {
    // int -> float
    let x = f32s(&[0.5, 1.5, 2.5], &[3]);
    let out = x
        .scatter_update(&i64s(&[1], &[1]), &i64s(&[3], &[1]))
        .unwrap();
    assert_tensor(&out, &f32s(&[0.5, 3.0, 2.5], &[3]));
    let x = f64s(&[0.5, 1.5], &[2]);
    let out = x
        .scatter_add(&i64s(&[0, 0], &[2]), &i32s(&[2, 3], &[2]))
        .unwrap();
    assert_tensor(&out, &f64s(&[5.5, 1.5], &[2]));
    // bool -> float, bool -> int, int64 -> int32, float64 -> float32
    let out = x
        .scatter_add(&i64s(&[1, 1], &[2]), &bools(&[true, true], &[2]))
        .unwrap();
    assert_tensor(&out, &f64s(&[0.5, 3.5], &[2]));
    let out = i32s(&[5, 5], &[2])
        .scatter_nd_update(&i64s(&[1], &[1, 1]), &bools(&[true], &[1]))
        .unwrap();
    assert_tensor(&out, &i32s(&[5, 1], &[2]));
    let out = i32s(&[5, 5], &[2])
        .scatter_nd_add(&i64s(&[0], &[1, 1]), &i64s(&[-7], &[1]))
        .unwrap();
    assert_tensor(&out, &i32s(&[-2, 5], &[2]));
    let out = f32s(&[0., 0.], &[2])
        .scatter_update(&i64s(&[0], &[1]), &f64s(&[0.1], &[1]))
        .unwrap();
    assert_tensor(&out, &f32s(&[0.1, 0.], &[2]));
    // bool -> bool
    let out = bools(&[false, false], &[2])
        .scatter_update(&i32s(&[1], &[1]), &bools(&[true], &[1]))
        .unwrap();
    assert_tensor(&out, &bools(&[false, true], &[2]));
}

#[test]
fn out_of_range_index_errors() {
    let x = i64s(&[0, 0, 0], &[3]);
    let u = i64s(&[1], &[1]);
    assert_err(
        x.scatter_update(&i64s(&[5], &[1]), &u),
        ErrorKind::Index,
        "index 5 is out of bounds for axis 0 with size 3",
    );
    assert_err(
        x.scatter_add(&i32s(&[-4], &[1]), &u),
        ErrorKind::Index,
        "index -4 is out of bounds for axis 0 with size 3",
    );
    assert_err(
        x.scatter_update(&i64s(&[3], &[1]), &u),
        ErrorKind::Index,
        "index 3 is out of bounds for axis 0 with size 3",
    );
    // The first bad index in row-major order is named.
    assert_err(
        x.scatter_update(&i64s(&[0, 7, 9], &[3]), &i64s(&[1, 2, 3], &[3])),
        ErrorKind::Index,
        "index 7 is out of bounds for axis 0 with size 3",
    );
    let x2 = i64s(&[0; 6], &[2, 3]);
    assert_err(
        x2.scatter_nd_update(&i64s(&[1, 3], &[1, 2]), &u),
        ErrorKind::Index,
        "index 3 is out of bounds for axis 1 with size 3",
    );
    assert_err(
        x2.scatter_nd_add(&i64s(&[-3, 0], &[1, 2]), &u),
        ErrorKind::Index,
        "index -3 is out of bounds for axis 0 with size 2",
    );
    // Out of range even where the selected slice is empty.
    assert_err(
        i64s(&[], &[3, 0]).scatter_update(&i64s(&[5], &[1]), &i64s(&[], &[1, 0])),
        ErrorKind::Index,
        "index 5 is out of bounds for axis 0 with size 3",
    );
}

#[test]
fn shape_errors() {
    let x = i64s(&[0; 6], &[3, 2]);
    assert_err(
        x.scatter_update(&i64s(&[0, 1], &[2]), &i64s(&[0; 6], &[2, 3])),
        ErrorKind::Value,
        "scatter_update: updates has shape (2,3), but indices of shape (2,) and x of shape (3,2) \
         need (2,2) (indices.shape + x.shape[1:])",
    );
    assert_err(
        x.scatter_add(&i64s(&[0, 1], &[2]), &i64s(&[0; 2], &[2])),
        ErrorKind::Value,
        "scatter_add: updates has shape (2,), but indices of shape (2,) and x of shape (3,2) \
         need (2,2) (indices.shape + x.shape[1:])",
    );
    assert_err(
        x.scatter_nd_update(&i64s(&[0, 1], &[1, 2]), &i64s(&[0; 2], &[1, 2])),
        ErrorKind::Value,
        "scatter_nd_update: updates has shape (1,2), but indices of shape (1,2) and x of shape \
         (3,2) need (1,) (indices.shape[:-1] + x.shape[2:])",
    );
    assert_err(
        x.scatter_nd_add(&i64s(&[0; 3], &[1, 3]), &i64s(&[0], &[1])),
        ErrorKind::Value,
        "scatter_nd_add: the last dimension of indices must be between 1 and x.ndim = 2, got 3 \
         (indices shape (1,3), x shape (3,2))",
    );
    assert_err(
        x.scatter_nd_update(&i64s(&[], &[2, 0]), &i64s(&[0; 12], &[2, 3, 2])),
        ErrorKind::Value,
        "scatter_nd_update: the last dimension of indices must be between 1 and x.ndim = 2, got 0 \
         (indices shape (2,0), x shape (3,2))",
    );
    assert_err(
        x.scatter_nd_update(&i64s(&[0], &[]), &i64s(&[0; 2], &[2])),
        ErrorKind::Value,
        "scatter_nd_update: indices must have at least 1 dimension, got a 0-d tensor",
    );
    assert_err(
        i64s(&[0], &[]).scatter_update(&i64s(&[0], &[1]), &i64s(&[0], &[1])),
        ErrorKind::Value,
        "scatter_update: x must have at least 1 dimension, got a 0-d tensor",
    );
    // Shapes are checked even for empty indices.
    assert_err(
        x.scatter_update(&i64s(&[], &[0]), &i64s(&[], &[0, 3])),
        ErrorKind::Value,
        "scatter_update: updates has shape (0,3), but indices of shape (0,) and x of shape (3,2) \
         need (0,2) (indices.shape + x.shape[1:])",
    );
}

#[test]
fn dtype_errors() {
    let x = i32s(&[0; 3], &[3]);
    assert_err(
        x.scatter_update(&f32s(&[0.], &[1]), &i32s(&[1], &[1])),
        ErrorKind::Type,
        "scatter_update: indices must be int32 or int64, got float32",
    );
    assert_err(
        x.scatter_nd_add(&bools(&[true], &[1, 1]), &i32s(&[1], &[1])),
        ErrorKind::Type,
        "scatter_nd_add: indices must be int32 or int64, got bool",
    );
    assert_err(
        x.scatter_update(&i64s(&[0], &[1]), &f64s(&[1.], &[1])),
        ErrorKind::Type,
        "scatter_update: cannot cast updates from float64 to int32",
    );
    assert_err(
        x.scatter_nd_add(&i64s(&[0], &[1, 1]), &f32s(&[1.], &[1])),
        ErrorKind::Type,
        "scatter_nd_add: cannot cast updates from float32 to int32",
    );
    let b = bools(&[false; 3], &[3]);
    assert_err(
        b.scatter_nd_update(&i64s(&[0], &[1, 1]), &i64s(&[1], &[1])),
        ErrorKind::Type,
        "scatter_nd_update: cannot cast updates from int64 to bool",
    );
    assert_err(
        b.scatter_update(&i64s(&[0], &[1]), &f64s(&[1.], &[1])),
        ErrorKind::Type,
        "scatter_update: cannot cast updates from float64 to bool",
    );
    assert_err(
        b.scatter_add(&i64s(&[0], &[1]), &bools(&[true], &[1])),
        ErrorKind::Type,
        "scatter_add is not supported for boolean tensors",
    );
    assert_err(
        b.scatter_nd_add(&i64s(&[0], &[1, 1]), &bools(&[true], &[1])),
        ErrorKind::Type,
        "scatter_nd_add is not supported for boolean tensors",
    );
}

// ----- property test against a naive reference -----------------------------------------------

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

/// `out = x.copy()`, then for each `k`-tuple of `indices` in order and each element of the
/// selected slice, `out[tuple + rest] = u` (or `+= u`).
fn reference(
    x: &[i64],
    shape: &[usize],
    indices: &[i64],
    k: usize,
    updates: &[i64],
    add: bool,
) -> Vec<i64> {
    let mut out = x.to_vec();
    let rest = &shape[k..];
    let row: usize = rest.iter().product();
    for (t, tuple) in indices.chunks(k).enumerate() {
        let head: Vec<usize> = tuple
            .iter()
            .zip(shape)
            .map(|(&i, &d)| (if i < 0 { i + d as i64 } else { i }) as usize)
            .collect();
        for j in 0..row {
            let mut full = head.clone();
            full.extend(unravel(j, rest));
            let f = ravel(&full, shape);
            let u = updates[t * row + j];
            out[f] = if add { out[f] + u } else { u };
        }
    }
    out
}

#[derive(Clone, Debug)]
struct Case {
    shape: Vec<usize>,
    /// The shape of the grid of index tuples.
    lead: Vec<usize>,
    k: usize,
    x: Vec<i64>,
    indices: Vec<i64>,
    updates: Vec<i64>,
    int32_indices: bool,
}

/// A random x (1 to 3 axes of 1 to 3), a grid of in-range index tuples (possibly negative,
/// possibly repeated, possibly empty) and matching updates. `nd` picks K in 1..=ndim, else 1.
fn case(nd: bool) -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(1usize..4, 1..4),
        prop::collection::vec(0usize..4, 0..3),
    )
        .prop_flat_map(move |(shape, lead)| {
            let ks = if nd { 1..=shape.len() } else { 1..=1 };
            (Just(shape), Just(lead), ks)
        })
        .prop_flat_map(|(shape, lead, k)| {
            let numel: usize = shape.iter().product();
            let tuples: usize = lead.iter().product();
            let row: usize = shape[k..].iter().product();
            let raw = prop::collection::vec((0usize..64, any::<bool>()), tuples * k);
            (
                Just(shape),
                Just(lead),
                Just(k),
                prop::collection::vec(-20i64..20, numel),
                raw,
                prop::collection::vec(-20i64..20, tuples * row),
                any::<bool>(),
            )
        })
        .prop_map(|(shape, lead, k, x, raw, updates, int32_indices)| {
            let indices = raw
                .iter()
                .enumerate()
                .map(|(n, &(r, negative))| {
                    let d = shape[n % k];
                    let i = (r % d) as i64;
                    if negative { i - d as i64 } else { i }
                })
                .collect();
            Case {
                shape,
                lead,
                k,
                x,
                indices,
                updates,
                int32_indices,
            }
        })
}

fn check(c: &Case, nd: bool) {
    let mut index_shape = c.lead.clone();
    if nd {
        index_shape.push(c.k);
    }
    let indices = if c.int32_indices {
        let v: Vec<i32> = c.indices.iter().map(|&i| i as i32).collect();
        i32s(&v, &index_shape)
    } else {
        i64s(&c.indices, &index_shape)
    };
    let mut update_shape = c.lead.clone();
    update_shape.extend_from_slice(&c.shape[c.k..]);
    let x = i64s(&c.x, &c.shape);
    let updates = i64s(&c.updates, &update_shape);
    for add in [false, true] {
        let want = reference(&c.x, &c.shape, &c.indices, c.k, &c.updates, add);
        let run = |x: &Tensor, u: &Tensor| match (nd, add) {
            (false, false) => x.scatter_update(&indices, u),
            (false, true) => x.scatter_add(&indices, u),
            (true, false) => x.scatter_nd_update(&indices, u),
            (true, true) => x.scatter_nd_add(&indices, u),
        };
        assert_tensor(&run(&x, &updates).unwrap(), &i64s(&want, &c.shape));
        // The same in float64 (small integers are exact), with int64 updates cast.
        let want: Vec<f64> = want.iter().map(|&v| v as f64).collect();
        let xf = x.try_cast(DType::F64).unwrap();
        assert_tensor(&run(&xf, &updates).unwrap(), &f64s(&want, &c.shape));
    }
}

proptest! {
    #[test]
    fn scatter_axis0_matches_reference(c in case(false)) {
        check(&c, false);
    }

    #[test]
    fn scatter_nd_matches_reference(c in case(true)) {
        check(&c, true);
    }
}

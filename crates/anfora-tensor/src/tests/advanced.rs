//! Advanced indexing: reads, assignments and the gradient of reads (expected values worked out
//! by hand from numpy's rules).

use super::*;
use crate::AdvIndexItem;

fn arr(v: &[i64]) -> AdvIndexItem {
    AdvIndexItem::Array(i64s1(v))
}
fn mask(v: &[bool]) -> AdvIndexItem {
    AdvIndexItem::Array(bools1(v))
}
fn int(i: i64) -> AdvIndexItem {
    AdvIndexItem::Basic(IndexItem::Int(i))
}
fn all() -> AdvIndexItem {
    AdvIndexItem::Basic(slice(None, None, None))
}
/// `np.arange(12).reshape(3, 4)`.
fn x34() -> Tensor {
    i64s(&(0..12).collect::<Vec<_>>(), &[3, 4])
}
/// `np.arange(24).reshape(2, 3, 4)`.
fn y234() -> Tensor {
    i64s(&(0..24).collect::<Vec<_>>(), &[2, 3, 4])
}

#[test]
fn integer_arrays_read_rows_and_points() {
    let x = x34();
    assert_tensor(
        &x.index_adv(&[arr(&[2, 0])]).unwrap(),
        &i64s(&[8, 9, 10, 11, 0, 1, 2, 3], &[2, 4]),
    );
    assert_tensor(
        &x.index_adv(&[arr(&[0, 2]), arr(&[1, 3])]).unwrap(),
        &i64s1(&[1, 11]),
    );
    assert_tensor(
        &x.index_adv(&[all(), arr(&[3, 0])]).unwrap(),
        &i64s(&[3, 0, 7, 4, 11, 8], &[3, 2]),
    );
    assert_tensor(
        &x.index_adv(&[arr(&[-1])]).unwrap(),
        &i64s(&[8, 9, 10, 11], &[1, 4]),
    );
    // A 2-d index array: x[[[0, 1], [2, 0]]].
    let r = x
        .index_adv(&[AdvIndexItem::Array(i64s(&[0, 1, 2, 0], &[2, 2]))])
        .unwrap();
    assert_eq!(r.shape(), &[2, 2, 4]);
    assert_eq!(
        r.to_f64_vec()[8..12],
        [8.0, 9.0, 10.0, 11.0],
        "item [1, 0] is row 2"
    );
    // x[None, [1]]
    assert_tensor(
        &x.index_adv(&[AdvIndexItem::Basic(IndexItem::NewAxis), arr(&[1])])
            .unwrap(),
        &i64s(&[4, 5, 6, 7], &[1, 1, 4]),
    );
    // int32 index arrays too.
    assert_tensor(
        &x.index_adv(&[AdvIndexItem::Array(i32s1(&[1])), int(2)])
            .unwrap(),
        &i64s1(&[6]),
    );
}

#[test]
fn array_dimensions_go_first_when_separated_by_a_slice() {
    let y = y234();
    // y[0, :, [1, 2]]: the int is an array index too, so the two are separated.
    assert_tensor(
        &y.index_adv(&[int(0), all(), arr(&[1, 2])]).unwrap(),
        &i64s(&[1, 5, 9, 2, 6, 10], &[2, 3]),
    );
    // y[:, [0, 2], [1, 3]]: adjacent, in place.
    assert_tensor(
        &y.index_adv(&[all(), arr(&[0, 2]), arr(&[1, 3])]).unwrap(),
        &i64s(&[1, 11, 13, 23], &[2, 2]),
    );
    // y[[1], :, [0, 3]]: broadcast to (2,), first.
    assert_tensor(
        &y.index_adv(&[arr(&[1]), all(), arr(&[0, 3])]).unwrap(),
        &i64s(&[12, 16, 20, 15, 19, 23], &[2, 3]),
    );
}

#[test]
fn boolean_masks_select() {
    let x = x34();
    let gt5 = cmp_gt(&x, 5i64);
    assert_tensor(
        &x.index_adv(&[AdvIndexItem::Array(gt5)]).unwrap(),
        &i64s1(&[6, 7, 8, 9, 10, 11]),
    );
    assert_tensor(
        &x.index_adv(&[mask(&[true, false, true])]).unwrap(),
        &i64s(&[0, 1, 2, 3, 8, 9, 10, 11], &[2, 4]),
    );
    assert_tensor(
        &x.index_adv(&[all(), mask(&[true, false, false, true])])
            .unwrap(),
        &i64s(&[0, 3, 4, 7, 8, 11], &[3, 2]),
    );
    let t = x
        .index_adv(&[AdvIndexItem::Array(bools(&[true], &[]))])
        .unwrap();
    assert_eq!(t.shape(), &[1, 3, 4]);
    let f = x
        .index_adv(&[AdvIndexItem::Array(bools(&[false], &[]))])
        .unwrap();
    assert_eq!(f.shape(), &[0, 3, 4]);
}

#[test]
fn index_errors_are_numpys() {
    let x = x34();
    assert_err(
        x.index_adv(&[arr(&[3])]),
        ErrorKind::Index,
        "index 3 is out of bounds for axis 0 with size 3",
    );
    assert_err(
        x.index_adv(&[all(), arr(&[-5])]),
        ErrorKind::Index,
        "index -5 is out of bounds for axis 1 with size 4",
    );
    assert_err(
        x.index_adv(&[arr(&[0, 1]), arr(&[0, 1, 2])]),
        ErrorKind::Index,
        "shape mismatch: indexing arrays could not be broadcast together with shapes (2,) (3,) ",
    );
    assert_err(
        x.index_adv(&[mask(&[true, false])]),
        ErrorKind::Index,
        "boolean index did not match indexed array along axis 0; size of axis is 3 but size of \
         corresponding boolean axis is 2",
    );
    assert_err(
        x.index_adv(&[AdvIndexItem::Array(f64s1(&[0.0]))]),
        ErrorKind::Index,
        "arrays used as indices must be of integer (or boolean) type",
    );
    assert_err(
        x.index_adv(&[arr(&[0]), int(0), int(0)]),
        ErrorKind::Index,
        "too many indices for array: array is 2-dimensional, but 3 were indexed",
    );
}

#[test]
fn assignment_writes_a_copy() {
    let x = x34();
    let r = x.index_assign(&[int(1)], &i64s(&[0], &[])).unwrap();
    assert_tensor(&r, &i64s(&[0, 1, 2, 3, 0, 0, 0, 0, 8, 9, 10, 11], &[3, 4]));
    assert_tensor(&x, &x34());
    // x[:, ::-2] = [10., 20.]: columns 3 and 1, float to int.
    let r = x
        .index_assign(
            &[all(), AdvIndexItem::Basic(slice(None, None, Some(-2)))],
            &f64s1(&[10.0, 20.0]),
        )
        .unwrap();
    assert_tensor(
        &r,
        &i64s(&[0, 20, 2, 10, 4, 20, 6, 10, 8, 20, 10, 10], &[3, 4]),
    );
    // Masks and a scalar value.
    let r = x
        .index_assign(&[AdvIndexItem::Array(cmp_gt(&x, 5i64))], &i64s(&[-1], &[]))
        .unwrap();
    assert_tensor(
        &r,
        &i64s(&[0, 1, 2, 3, 4, 5, -1, -1, -1, -1, -1, -1], &[3, 4]),
    );
    // Leading length-1 dimensions of the value are dropped.
    let r = x
        .index_assign(&[int(0)], &i64s(&[7, 7, 7, 7], &[1, 1, 4]))
        .unwrap();
    assert_tensor(&r, &i64s(&[7, 7, 7, 7, 4, 5, 6, 7, 8, 9, 10, 11], &[3, 4]));
}

#[test]
fn assignment_with_arrays_and_duplicates() {
    // a[[1, 1, 3]] = [5, 6, 7]: the last write wins.
    let a = i64s1(&[0, 0, 0, 0]);
    assert_tensor(
        &a.index_assign(&[arr(&[1, 1, 3])], &i64s1(&[5, 6, 7]))
            .unwrap(),
        &i64s1(&[0, 6, 0, 7]),
    );
    // y[0, :, [1, 2]] = v (v of the selection's shape (2, 3)) reads back as v.
    let y = y234();
    let items = [int(0), all(), arr(&[1, 2])];
    let v = i64s(&[-1, -2, -3, -4, -5, -6], &[2, 3]);
    let r = y.index_assign(&items, &v).unwrap();
    assert_tensor(&r.index_adv(&items).unwrap(), &v);
    assert_eq!(r.to_f64_vec()[5], -2.0, "y[0, 1, 1]");
    assert_eq!(r.to_f64_vec()[2], -4.0, "y[0, 0, 2]");
    assert_eq!(r.to_f64_vec()[12..], y.to_f64_vec()[12..]);
}

#[test]
fn assignment_casts_unsafely() {
    let a = i64s1(&[0, 0, 0]);
    assert_tensor(
        &a.index_assign(&[all()], &f64s1(&[1.7, -1.7, 2.5])).unwrap(),
        &i64s1(&[1, -1, 2]),
    );
    let b = bools1(&[false, false, false]);
    assert_tensor(
        &b.index_assign(&[arr(&[0, 2])], &f64s1(&[2.0, 0.0]))
            .unwrap(),
        &bools1(&[true, false, false]),
    );
    let f = f32s1(&[0.0, 0.0]);
    assert_tensor(
        &f.index_assign(&[arr(&[1])], &bools(&[true], &[])).unwrap(),
        &f32s1(&[0.0, 1.0]),
    );
}

#[test]
fn half_precision_storage_is_kept() {
    let h = f32s1(&[0.0, 0.0, 0.0]).cast(DType::F16);
    let r = h.index_assign(&[arr(&[2])], &f64s(&[1.5], &[])).unwrap();
    assert_eq!(r.dtype(), DType::F16);
    assert_eq!(r.to_f64_vec(), vec![0.0, 0.0, 1.5]);
    let g = r.index_adv(&[arr(&[2, 2])]).unwrap();
    assert_eq!(g.dtype(), DType::F16);
    assert_eq!(g.to_f64_vec(), vec![1.5, 1.5]);
}

#[test]
fn assignment_errors_are_numpys() {
    let x = x34();
    assert_err(
        x.index_assign(&[int(0)], &i64s1(&[1, 2, 3])),
        ErrorKind::Value,
        "could not broadcast input array from shape (3,) into shape (4,)",
    );
    assert_err(
        x.index_assign(&[arr(&[0, 5])], &i64s(&[1], &[])),
        ErrorKind::Index,
        "index 5 is out of bounds for axis 0 with size 3",
    );
}

#[test]
fn index_add_accumulates_duplicates() {
    let d = f64s1(&[1.0, 2.0, 3.0]);
    assert_tensor(
        &d.index_add(&[3], &[arr(&[0, 0, 2])]).unwrap(),
        &f64s1(&[3.0, 0.0, 3.0]),
    );
    let d = f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
    assert_tensor(
        &d.index_add(&[3, 4], &[all(), mask(&[true, false, false, true])])
            .unwrap(),
        &f64s(
            &[1.0, 0.0, 0.0, 2.0, 3.0, 0.0, 0.0, 4.0, 5.0, 0.0, 0.0, 6.0],
            &[3, 4],
        ),
    );
}

#[test]
fn last_writes_zero_the_overwritten_elements() {
    let d = f64s1(&[1.0, 2.0, 3.0]);
    // a[[0, 2, 0]] = v: v[0] is overwritten by v[2].
    assert_tensor(
        &d.index_last_writes(&[arr(&[0, 2, 0])]).unwrap(),
        &f64s1(&[0.0, 3.0, 1.0]),
    );
    assert_tensor(
        &d.index_last_writes(&[AdvIndexItem::Basic(slice(None, None, Some(-1)))])
            .unwrap(),
        &f64s1(&[3.0, 2.0, 1.0]),
    );
}

#[test]
fn assignment_to_a_tensor_given_up_writes_its_own_buffer_only_when_unshared() {
    // Unshared: the same buffer comes back, written (a float into an int array truncates).
    let x = x34();
    let before = x.as_ptr_addr();
    let y = x
        .index_assign_owned(&[int(1), arr(&[0, 3])], &f64s1(&[-1.5, 7.9]))
        .unwrap();
    assert_eq!(y.as_ptr_addr(), before);
    assert_tensor(&y, &i64s(&[0, 1, 2, 3, -1, 5, 6, 7, 8, 9, 10, 11], &[3, 4]));
    // Shared: the other holder keeps its values; the result is a written copy.
    let x = x34();
    let other = x.clone();
    let y = x.index_assign_owned(&[int(0)], &i64s1(&[9])).unwrap();
    assert_tensor(&other, &x34());
    assert_tensor(&y.index_adv(&[int(0)]).unwrap(), &i64s1(&[9, 9, 9, 9]));
    // A view is never written through: its base may be held elsewhere.
    let base = x34();
    let row = base.index_adv(&[int(2)]).unwrap();
    let _ = row.index_assign_owned(&[int(0)], &i64s1(&[-5])).unwrap();
    assert_tensor(&base, &x34());
    // Errors are the copying assignment's.
    let e = x34()
        .index_assign_owned(&[int(5)], &i64s1(&[1]))
        .unwrap_err();
    assert!(
        e.message
            .contains("index 5 is out of bounds for axis 0 with size 3"),
        "{}",
        e.message
    );
}

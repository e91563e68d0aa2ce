//! reshape, transpose and basic indexing.

use super::*;

#[test]
fn reshape() {
    assert_tensor(
        &ar(6, DType::I64)
            .reshape(&[6])
            .unwrap()
            .reshape(&[2, 3])
            .unwrap(),
        &i64s(&[0, 1, 2, 3, 4, 5], &[2, 3]),
    );
    assert_tensor(
        &ar(6, DType::I64)
            .reshape(&[6])
            .unwrap()
            .reshape(&[-1, 2])
            .unwrap(),
        &i64s(&[0, 1, 2, 3, 4, 5], &[3, 2]),
    );
    assert_tensor(
        &ar(6, DType::I64)
            .reshape(&[2, 3])
            .unwrap()
            .reshape(&[3, -1])
            .unwrap(),
        &i64s(&[0, 1, 2, 3, 4, 5], &[3, 2]),
    );
    assert_tensor(
        &ar(6, DType::I64)
            .reshape(&[2, 3])
            .unwrap()
            .reshape(&[-1])
            .unwrap(),
        &i64s(&[0, 1, 2, 3, 4, 5], &[6]),
    );
    assert_err(
        ar(6, DType::I64).reshape(&[6]).unwrap().reshape(&[4]),
        ErrorKind::Value,
        "cannot reshape array of size 6 into shape (4,)",
    );
    assert_err(
        ar(6, DType::I64).reshape(&[6]).unwrap().reshape(&[-1, -1]),
        ErrorKind::Value,
        "can only specify one unknown dimension",
    );
    assert_err(
        ar(6, DType::I64).reshape(&[6]).unwrap().reshape(&[-1, 4]),
        ErrorKind::Value,
        "cannot reshape array of size 6 into shape (4)",
    );
    assert_err(
        ar(0, DType::I64).reshape(&[0]).unwrap().reshape(&[-1, 0]),
        ErrorKind::Value,
        "cannot reshape array of size 0 into shape (0)",
    );
    assert_err(
        ar(0, DType::I64).reshape(&[0]).unwrap().reshape(&[0, -1]),
        ErrorKind::Value,
        "cannot reshape array of size 0 into shape (0,newaxis)",
    );
    assert_tensor(
        &ar(0, DType::I64)
            .reshape(&[0])
            .unwrap()
            .reshape(&[3, -1])
            .unwrap(),
        &i64s(&[], &[3, 0]),
    );
    assert_err(
        ar(7, DType::I64).reshape(&[7]).unwrap().reshape(&[2, -1]),
        ErrorKind::Value,
        "cannot reshape array of size 7 into shape (2,newaxis)",
    );
    assert_err(
        ar(7, DType::I64)
            .reshape(&[7])
            .unwrap()
            .reshape(&[3, -1, 4]),
        ErrorKind::Value,
        "cannot reshape array of size 7 into shape (3,newaxis,4)",
    );
    assert_err(
        ar(6, DType::I64).reshape(&[6]).unwrap().reshape(&[]),
        ErrorKind::Value,
        "cannot reshape array of size 6 into shape ()",
    );
    assert_tensor(
        &ar(1, DType::I64)
            .reshape(&[1])
            .unwrap()
            .reshape(&[])
            .unwrap(),
        &i64s(&[0], &[]),
    );
    assert_tensor(
        &ar(1, DType::I64)
            .reshape(&[1, 1])
            .unwrap()
            .reshape(&[-1, 1, 1])
            .unwrap(),
        &i64s(&[0], &[1, 1, 1]),
    );
    assert_err(
        ar(6, DType::I64).reshape(&[6]).unwrap().reshape(&[1, 1, 5]),
        ErrorKind::Value,
        "cannot reshape array of size 6 into shape (1,1,5)",
    );
    // numpy 2 treats any negative entry as the unknown dimension.
    assert_tensor(
        &ar(6, DType::I64)
            .reshape(&[6])
            .unwrap()
            .reshape(&[-2, 3])
            .unwrap(),
        &i64s(&[0, 1, 2, 3, 4, 5], &[2, 3]),
    );
    assert_tensor(
        &ar(24, DType::I64)
            .reshape(&[24])
            .unwrap()
            .reshape(&[2, 3, 4])
            .unwrap(),
        &i64s(
            &[
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                23,
            ],
            &[2, 3, 4],
        ),
    );
    assert_tensor(
        &ar(24, DType::I64)
            .reshape(&[2, 3, 4])
            .unwrap()
            .reshape(&[4, -1])
            .unwrap(),
        &i64s(
            &[
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                23,
            ],
            &[4, 6],
        ),
    );
    // Reshape shares storage instead of copying.
    let t = ar(6, DType::F32);
    assert!(t.reshape(&[3, 2]).unwrap().shares_storage(&t));
}

#[test]
fn transpose() {
    assert_tensor(
        &ar(6, DType::F32)
            .reshape(&[2, 3])
            .unwrap()
            .transpose(None)
            .unwrap(),
        &f32s(&[0.0, 3.0, 1.0, 4.0, 2.0, 5.0], &[3, 2]),
    );
    assert_tensor(
        &ar(24, DType::F32)
            .reshape(&[2, 3, 4])
            .unwrap()
            .transpose(None)
            .unwrap(),
        &f32s(
            &[
                0.0, 12.0, 4.0, 16.0, 8.0, 20.0, 1.0, 13.0, 5.0, 17.0, 9.0, 21.0, 2.0, 14.0, 6.0,
                18.0, 10.0, 22.0, 3.0, 15.0, 7.0, 19.0, 11.0, 23.0,
            ],
            &[4, 3, 2],
        ),
    );
    assert_tensor(
        &ar(24, DType::F32)
            .reshape(&[2, 3, 4])
            .unwrap()
            .transpose(Some(&[1, 0, 2]))
            .unwrap(),
        &f32s(
            &[
                0.0, 1.0, 2.0, 3.0, 12.0, 13.0, 14.0, 15.0, 4.0, 5.0, 6.0, 7.0, 16.0, 17.0, 18.0,
                19.0, 8.0, 9.0, 10.0, 11.0, 20.0, 21.0, 22.0, 23.0,
            ],
            &[3, 2, 4],
        ),
    );
    assert_tensor(
        &ar(24, DType::F32)
            .reshape(&[2, 3, 4])
            .unwrap()
            .transpose(Some(&[-1, 0, 1]))
            .unwrap(),
        &f32s(
            &[
                0.0, 4.0, 8.0, 12.0, 16.0, 20.0, 1.0, 5.0, 9.0, 13.0, 17.0, 21.0, 2.0, 6.0, 10.0,
                14.0, 18.0, 22.0, 3.0, 7.0, 11.0, 15.0, 19.0, 23.0,
            ],
            &[4, 2, 3],
        ),
    );
    assert_tensor(
        &ar(6, DType::F32)
            .reshape(&[2, 3])
            .unwrap()
            .transpose(Some(&[1, -2]))
            .unwrap(),
        &f32s(&[0.0, 3.0, 1.0, 4.0, 2.0, 5.0], &[3, 2]),
    );
    assert_tensor(
        &ar(1, DType::F32)
            .reshape(&[])
            .unwrap()
            .transpose(None)
            .unwrap(),
        &f32s(&[0.0], &[]),
    );
    assert_tensor(
        &ar(1, DType::F32)
            .reshape(&[])
            .unwrap()
            .transpose(Some(&[]))
            .unwrap(),
        &f32s(&[0.0], &[]),
    );
    assert_tensor(
        &ar(5, DType::F32)
            .reshape(&[5])
            .unwrap()
            .transpose(Some(&[0]))
            .unwrap(),
        &f32s(&[0.0, 1.0, 2.0, 3.0, 4.0], &[5]),
    );
    assert_err(
        ar(6, DType::F32)
            .reshape(&[2, 3])
            .unwrap()
            .transpose(Some(&[0])),
        ErrorKind::Value,
        "axes don't match array",
    );
    assert_err(
        ar(6, DType::F32)
            .reshape(&[2, 3])
            .unwrap()
            .transpose(Some(&[0, 0])),
        ErrorKind::Value,
        "repeated axis in transpose",
    );
    assert_err(
        ar(6, DType::F32)
            .reshape(&[2, 3])
            .unwrap()
            .transpose(Some(&[0, 2])),
        ErrorKind::Value,
        "axis 2 is out of bounds for array of dimension 2",
    );
    assert_err(
        ar(6, DType::F32)
            .reshape(&[2, 3])
            .unwrap()
            .transpose(Some(&[0, -3])),
        ErrorKind::Value,
        "axis -3 is out of bounds for array of dimension 2",
    );
    assert_err(
        ar(6, DType::F32)
            .reshape(&[2, 3])
            .unwrap()
            .transpose(Some(&[0, 1, 2])),
        ErrorKind::Value,
        "axes don't match array",
    );
    assert_err(
        ar(24, DType::F32)
            .reshape(&[2, 3, 4])
            .unwrap()
            .transpose(Some(&[0, 0, 5])),
        ErrorKind::Value,
        "repeated axis in transpose",
    );
    assert_err(
        ar(24, DType::F32)
            .reshape(&[2, 3, 4])
            .unwrap()
            .transpose(Some(&[5, 0, 0])),
        ErrorKind::Value,
        "axis 5 is out of bounds for array of dimension 3",
    );
    assert_tensor(
        &ar(0, DType::F32)
            .reshape(&[0, 3])
            .unwrap()
            .transpose(Some(&[1, 0]))
            .unwrap(),
        &f32s(&[], &[3, 0]),
    );
}

#[test]
fn basic_indexing() {
    assert_tensor(
        &ar(3, DType::I64)
            .reshape(&[3])
            .unwrap()
            .index(&[IndexItem::Int(1)])
            .unwrap(),
        &i64s(&[1], &[]),
    );
    assert_tensor(
        &ar(3, DType::I64)
            .reshape(&[3])
            .unwrap()
            .index(&[IndexItem::Int(-1)])
            .unwrap(),
        &i64s(&[2], &[]),
    );
    assert_err(
        ar(3, DType::I64)
            .reshape(&[3])
            .unwrap()
            .index(&[IndexItem::Int(5)]),
        ErrorKind::Index,
        "index 5 is out of bounds for axis 0 with size 3",
    );
    assert_err(
        ar(3, DType::I64)
            .reshape(&[3])
            .unwrap()
            .index(&[IndexItem::Int(-4)]),
        ErrorKind::Index,
        "index -4 is out of bounds for axis 0 with size 3",
    );
    assert_err(
        ar(6, DType::I64)
            .reshape(&[2, 3])
            .unwrap()
            .index(&[IndexItem::Int(0), IndexItem::Int(5)]),
        ErrorKind::Index,
        "index 5 is out of bounds for axis 1 with size 3",
    );
    assert_tensor(
        &ar(6, DType::I64)
            .reshape(&[2, 3])
            .unwrap()
            .index(&[IndexItem::Int(1), IndexItem::Int(2)])
            .unwrap(),
        &i64s(&[5], &[]),
    );
    assert_err(
        ar(3, DType::I64)
            .reshape(&[3])
            .unwrap()
            .index(&[IndexItem::Ellipsis, IndexItem::Ellipsis]),
        ErrorKind::Index,
        "an index can only have a single ellipsis ('...')",
    );
    assert_err(
        ar(3, DType::I64)
            .reshape(&[3])
            .unwrap()
            .index(&[IndexItem::Int(0), IndexItem::Int(0)]),
        ErrorKind::Index,
        "too many indices for array: array is 1-dimensional, but 2 were indexed",
    );
    assert_err(
        ar(1, DType::I64)
            .reshape(&[])
            .unwrap()
            .index(&[IndexItem::Int(0)]),
        ErrorKind::Index,
        "too many indices for array: array is 0-dimensional, but 1 were indexed",
    );
    assert_err(
        ar(6, DType::I64).reshape(&[2, 3]).unwrap().index(&[
            IndexItem::Int(1),
            IndexItem::Int(2),
            IndexItem::Int(3),
        ]),
        ErrorKind::Index,
        "too many indices for array: array is 2-dimensional, but 3 were indexed",
    );
    assert_tensor(
        &ar(6, DType::I64)
            .reshape(&[2, 3])
            .unwrap()
            .index(&[
                IndexItem::NewAxis,
                IndexItem::Int(0),
                IndexItem::Ellipsis,
                IndexItem::NewAxis,
                slice(Some(1), None, None),
            ])
            .unwrap(),
        &i64s(&[1, 2], &[1, 1, 2]),
    );
    assert_err(
        ar(6, DType::I64).reshape(&[2, 3]).unwrap().index(&[
            IndexItem::Ellipsis,
            IndexItem::Int(1),
            IndexItem::NewAxis,
            IndexItem::NewAxis,
            IndexItem::Ellipsis,
        ]),
        ErrorKind::Index,
        "an index can only have a single ellipsis ('...')",
    );
    assert_tensor(
        &ar(10, DType::I64)
            .reshape(&[10])
            .unwrap()
            .index(&[slice(None, None, Some(-3))])
            .unwrap(),
        &i64s(&[9, 6, 3, 0], &[4]),
    );
    assert_tensor(
        &ar(10, DType::I64)
            .reshape(&[10])
            .unwrap()
            .index(&[slice(Some(8), Some(2), Some(-2))])
            .unwrap(),
        &i64s(&[8, 6, 4], &[3]),
    );
    assert_tensor(
        &ar(10, DType::I64)
            .reshape(&[10])
            .unwrap()
            .index(&[slice(Some(-100), Some(100), None)])
            .unwrap(),
        &i64s(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], &[10]),
    );
    assert_err(
        ar(10, DType::I64)
            .reshape(&[10])
            .unwrap()
            .index(&[slice(None, None, Some(0))]),
        ErrorKind::Value,
        "slice step cannot be zero",
    );
    assert_tensor(
        &ar(10, DType::I64)
            .reshape(&[10])
            .unwrap()
            .index(&[slice(Some(5), Some(2), None)])
            .unwrap(),
        &i64s(&[], &[0]),
    );
    assert_tensor(
        &ar(10, DType::I64)
            .reshape(&[1, 1, 10])
            .unwrap()
            .index(&[
                IndexItem::Int(0),
                IndexItem::Int(0),
                IndexItem::Ellipsis,
                IndexItem::NewAxis,
            ])
            .unwrap(),
        &i64s(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], &[10, 1]),
    );
    assert_err(
        ar(3, DType::I64)
            .reshape(&[3])
            .unwrap()
            .index(&[IndexItem::Int(5), IndexItem::Int(0)]),
        ErrorKind::Index,
        "too many indices for array: array is 1-dimensional, but 2 were indexed",
    );
    assert_err(
        ar(3, DType::I64).reshape(&[3]).unwrap().index(&[
            IndexItem::Int(0),
            IndexItem::Ellipsis,
            IndexItem::Int(5),
        ]),
        ErrorKind::Index,
        "too many indices for array: array is 1-dimensional, but 2 were indexed",
    );
    assert_err(
        ar(6, DType::I64)
            .reshape(&[2, 3])
            .unwrap()
            .index(&[IndexItem::Int(5), slice(None, None, Some(0))]),
        ErrorKind::Index,
        "index 5 is out of bounds for axis 0 with size 2",
    );
    assert_err(
        ar(6, DType::I64)
            .reshape(&[2, 3])
            .unwrap()
            .index(&[slice(None, None, Some(0)), IndexItem::Int(7)]),
        ErrorKind::Value,
        "slice step cannot be zero",
    );
    assert_err(
        ar(3, DType::I64).reshape(&[3]).unwrap().index(&[
            IndexItem::Ellipsis,
            IndexItem::Int(0),
            IndexItem::Ellipsis,
        ]),
        ErrorKind::Index,
        "an index can only have a single ellipsis ('...')",
    );
    assert_tensor(
        &ar(6, DType::I64)
            .reshape(&[2, 3])
            .unwrap()
            .index(&[
                IndexItem::Int(0),
                IndexItem::Int(1),
                IndexItem::Ellipsis,
                IndexItem::NewAxis,
            ])
            .unwrap(),
        &i64s(&[1], &[1]),
    );
    assert_tensor(
        &ar(24, DType::I64)
            .reshape(&[2, 3, 4])
            .unwrap()
            .index(&[IndexItem::Ellipsis, slice(None, None, Some(-1))])
            .unwrap(),
        &i64s(
            &[
                3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 19, 18, 17, 16, 23, 22, 21,
                20,
            ],
            &[2, 3, 4],
        ),
    );
    assert_tensor(
        &ar(24, DType::I64)
            .reshape(&[2, 3, 4])
            .unwrap()
            .index(&[
                slice(None, None, Some(-1)),
                IndexItem::Ellipsis,
                slice(Some(1), Some(3), None),
            ])
            .unwrap(),
        &i64s(&[13, 14, 17, 18, 21, 22, 1, 2, 5, 6, 9, 10], &[2, 3, 2]),
    );
    assert_tensor(
        &ar(24, DType::I64)
            .reshape(&[2, 3, 4])
            .unwrap()
            .index(&[
                IndexItem::Int(-1),
                slice(None, None, Some(2)),
                slice(Some(-2), None, None),
            ])
            .unwrap(),
        &i64s(&[14, 15, 22, 23], &[2, 2]),
    );
    assert_tensor(
        &ar(24, DType::I64)
            .reshape(&[2, 3, 4])
            .unwrap()
            .index(&[])
            .unwrap(),
        &i64s(
            &[
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                23,
            ],
            &[2, 3, 4],
        ),
    );
    assert_tensor(
        &ar(24, DType::I64)
            .reshape(&[2, 3, 4])
            .unwrap()
            .index(&[IndexItem::Ellipsis])
            .unwrap(),
        &i64s(
            &[
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                23,
            ],
            &[2, 3, 4],
        ),
    );
    assert_tensor(
        &ar(24, DType::I64)
            .reshape(&[2, 3, 4])
            .unwrap()
            .index(&[IndexItem::NewAxis])
            .unwrap(),
        &i64s(
            &[
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                23,
            ],
            &[1, 2, 3, 4],
        ),
    );
    assert_tensor(
        &ar(1, DType::I64)
            .reshape(&[])
            .unwrap()
            .index(&[IndexItem::Ellipsis])
            .unwrap(),
        &i64s(&[0], &[]),
    );
    assert_tensor(
        &ar(1, DType::I64)
            .reshape(&[])
            .unwrap()
            .index(&[IndexItem::NewAxis, IndexItem::NewAxis])
            .unwrap(),
        &i64s(&[0], &[1, 1]),
    );
    assert_tensor(
        &ar(20, DType::I64)
            .reshape(&[4, 5])
            .unwrap()
            .index(&[
                slice(Some(-1), None, Some(-1)),
                slice(Some(4), Some(0), Some(-2)),
            ])
            .unwrap(),
        &i64s(&[19, 17, 14, 12, 9, 7, 4, 2], &[4, 2]),
    );
    assert_tensor(
        &ar(20, DType::I64)
            .reshape(&[4, 5])
            .unwrap()
            .index(&[
                slice(None, Some(-9223372036854775808), None),
                slice(Some(9223372036854775807), None, Some(-1)),
            ])
            .unwrap(),
        &i64s(&[], &[0, 5]),
    );
    assert_tensor(
        &ar(5, DType::I64)
            .reshape(&[5])
            .unwrap()
            .index(&[slice(Some(3), None, Some(-10))])
            .unwrap(),
        &i64s(&[3], &[1]),
    );
    assert_tensor(
        &ar(0, DType::I64)
            .reshape(&[0, 3])
            .unwrap()
            .index(&[slice(None, None, None), IndexItem::Int(1)])
            .unwrap(),
        &i64s(&[], &[0]),
    );
    assert_tensor(
        &ar(0, DType::I64)
            .reshape(&[3, 0])
            .unwrap()
            .index(&[IndexItem::Int(2)])
            .unwrap(),
        &i64s(&[], &[0]),
    );
    assert_tensor(
        &ar(4, DType::I64)
            .reshape(&[4])
            .unwrap()
            .index(&[
                slice(Some(1), Some(3), None),
                IndexItem::NewAxis,
                IndexItem::Ellipsis,
            ])
            .unwrap(),
        &i64s(&[1, 2], &[2, 1]),
    );
    // An all-integer index gives a 0-d tensor, not a scalar.
    let t = ar(6, DType::I32)
        .reshape(&[2, 3])
        .unwrap()
        .index(&[IndexItem::Int(1), IndexItem::Int(-1)])
        .unwrap();
    assert_eq!((t.shape(), t.item().unwrap()), (&[][..], Scalar::Int(5)));
}

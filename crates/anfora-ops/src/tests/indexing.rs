//! `SetItem`, `InplaceCast` and advanced `GetItem`: values (numpy's and Python's semantics,
//! worked out by hand) and inference rules.

use std::rc::Rc;

use anfora_tensor::{DType, Tensor};

use crate::Prim;
use crate::abs::Abs;
use crate::args::tensor_abs;
use crate::call::infer_prim;
use crate::value::{OpResult, Slice, Value, repr};

fn ints(v: &[i64], shape: &[usize]) -> Value {
    Value::Tensor(Tensor::from_i64(v.to_vec(), shape).unwrap())
}
fn floats(v: &[f64], shape: &[usize]) -> Value {
    Value::Tensor(Tensor::from_f64(v.to_vec(), shape).unwrap())
}
fn list(v: &[i64]) -> Value {
    Value::List(Rc::from(
        v.iter().map(|&i| Value::Int(i)).collect::<Vec<_>>(),
    ))
}
fn slice(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Value {
    Value::Slice(Rc::new(Slice { start, stop, step }))
}
fn err(r: OpResult) -> String {
    let (k, m) = r.unwrap_err();
    format!("{k}: {m}")
}
/// dtype, shape and values of a tensor result.
fn tensor_of(v: OpResult) -> (DType, Vec<usize>, Vec<f64>) {
    match &v.unwrap() {
        Value::Tensor(t) => (t.dtype(), t.shape().to_vec(), t.to_f64_vec()),
        other => panic!("not a tensor: {}", repr(other)),
    }
}
fn set(obj: &Value, idx: &Value, value: &Value) -> OpResult {
    Prim::SetItem.eval(&[obj.clone(), idx.clone(), value.clone()])
}
fn get(obj: &Value, idx: &Value) -> OpResult {
    Prim::GetItem.eval(&[obj.clone(), idx.clone()])
}
fn t(dtype: DType, shape: &[usize]) -> Abs {
    tensor_abs(dtype, shape.iter().map(|&d| Some(d)).collect())
}
/// `np.arange(12).reshape(3, 4)`.
fn x34() -> Value {
    ints(&(0..12).collect::<Vec<_>>(), &[3, 4])
}

#[test]
fn setitem_on_tensors_is_numpys_assignment() {
    let x = x34();
    // x[1] = 0
    assert_eq!(
        tensor_of(set(&x, &Value::Int(1), &Value::Int(0))).2,
        vec![0., 1., 2., 3., 0., 0., 0., 0., 8., 9., 10., 11.]
    );
    // x[-1, ::-2] = 2.9 (float to int truncates)
    let idx = Value::tuple(vec![Value::Int(-1), slice(None, None, Some(-2))]);
    let (dtype, shape, v) = tensor_of(set(&x, &idx, &Value::Float(2.9)));
    assert_eq!((dtype, shape), (DType::I64, vec![3, 4]));
    assert_eq!(v, vec![0., 1., 2., 3., 4., 5., 6., 7., 8., 2., 10., 2.]);
    // x[[0, 2], [1, 1]] = [-1, -2]
    let idx = Value::tuple(vec![list(&[0, 2]), list(&[1, 1])]);
    assert_eq!(
        tensor_of(set(&x, &idx, &list(&[-1, -2]))).2,
        vec![0., -1., 2., 3., 4., 5., 6., 7., 8., -2., 10., 11.]
    );
    // x[..., None, 3] = [[7], [8], [9]] (value of the selection's shape (3, 1))
    let idx = Value::tuple(vec![Value::Ellipsis, Value::None, Value::Int(3)]);
    let value = ints(&[7, 8, 9], &[3, 1]);
    assert_eq!(
        tensor_of(set(&x, &idx, &value)).2,
        vec![0., 1., 2., 7., 4., 5., 6., 8., 8., 9., 10., 9.]
    );
    // x[x > 5] = 0 through a bool tensor
    let mask = Prim::Gt.eval(&[x.clone(), Value::Int(5)]).unwrap();
    assert_eq!(
        tensor_of(set(&x, &mask, &Value::Int(0))).2,
        vec![0., 1., 2., 3., 4., 5., 0., 0., 0., 0., 0., 0.]
    );
    // a list of bools is a mask: x[[True, False, True]] = 1
    let bools = Value::List(Rc::from(vec![
        Value::Bool(true),
        Value::Bool(false),
        Value::Bool(true),
    ]));
    assert_eq!(
        tensor_of(set(&x, &bools, &Value::Int(1))).2,
        vec![1., 1., 1., 1., 4., 5., 6., 7., 1., 1., 1., 1.]
    );
    // Duplicates: the last write wins.
    let a = floats(&[0.0; 3], &[3]);
    assert_eq!(
        tensor_of(set(&a, &list(&[2, 0, 2]), &list(&[1, 2, 3]))).2,
        vec![2.0, 0.0, 3.0]
    );
    // The original is unchanged (values are immutable).
    assert_eq!(tensor_of(Ok(x.clone())).2[6], 6.0);
}

#[test]
fn setitem_errors_on_tensors() {
    let x = x34();
    assert_eq!(
        err(set(&x, &Value::Int(5), &Value::Int(0))),
        "IndexError: index 5 is out of bounds for axis 0 with size 3"
    );
    assert_eq!(
        err(set(&x, &Value::Float(1.0), &Value::Int(0))),
        "IndexError: only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and \
         integer or boolean arrays are valid indices"
    );
    assert_eq!(
        err(set(&x, &Value::Int(0), &list(&[1, 2, 3]))),
        "ValueError: could not broadcast input array from shape (3,) into shape (4,)"
    );
    let short = Value::List(Rc::from(vec![Value::Bool(true), Value::Bool(false)]));
    assert_eq!(
        err(set(&x, &short, &Value::Int(0))),
        "IndexError: boolean index did not match indexed array along axis 0; size of axis is 3 \
         but size of corresponding boolean axis is 2"
    );
}

#[test]
fn setitem_on_lists_and_other_values_is_pythons() {
    let xs = list(&[0, 1, 2, 3]);
    assert_eq!(
        repr(&set(&xs, &Value::Int(-1), &Value::Int(9)).unwrap()),
        "[0, 1, 2, 9]"
    );
    assert_eq!(
        err(set(&xs, &Value::Int(4), &Value::Int(9))),
        "IndexError: list assignment index out of range"
    );
    assert_eq!(
        repr(&set(&xs, &slice(Some(1), Some(3), None), &list(&[7])).unwrap()),
        "[0, 7, 3]"
    );
    assert_eq!(
        repr(&set(&xs, &slice(Some(3), Some(1), None), &list(&[7, 8])).unwrap()),
        "[0, 1, 2, 7, 8, 3]"
    );
    assert_eq!(
        repr(&set(&xs, &slice(None, None, Some(-2)), &list(&[5, 6])).unwrap()),
        "[0, 6, 2, 5]"
    );
    assert_eq!(
        err(set(&xs, &slice(None, None, Some(2)), &list(&[5, 6, 7]))),
        "ValueError: attempt to assign sequence of size 3 to extended slice of size 2"
    );
    assert_eq!(
        err(set(&xs, &slice(None, Some(1), None), &Value::Int(1))),
        "TypeError: can only assign an iterable"
    );
    assert_eq!(
        err(set(&Value::tuple(vec![]), &Value::Int(0), &Value::Int(1))),
        "TypeError: 'tuple' object does not support item assignment"
    );
    assert_eq!(
        err(set(&Value::str("ab"), &Value::Int(0), &Value::str("c"))),
        "TypeError: 'str' object does not support item assignment"
    );
}

#[test]
fn getitem_reads_advanced_indices() {
    let x = x34();
    assert_eq!(
        tensor_of(get(&x, &list(&[2, 0]))),
        (
            DType::I64,
            vec![2, 4],
            vec![8., 9., 10., 11., 0., 1., 2., 3.]
        )
    );
    let idx = Value::tuple(vec![slice(None, None, None), list(&[3, 0])]);
    assert_eq!(
        tensor_of(get(&x, &idx)),
        (DType::I64, vec![3, 2], vec![3., 0., 7., 4., 11., 8.])
    );
    // Basic indexing is unchanged.
    assert_eq!(tensor_of(get(&x, &Value::Int(1))).2, vec![4., 5., 6., 7.]);
}

#[test]
fn inplace_cast_is_numpys_output_rule() {
    let a = ints(&[1, 2, 3], &[3]);
    let r = Prim::Add.eval(&[a.clone(), Value::Int(1)]).unwrap();
    assert_eq!(
        tensor_of(Prim::InplaceCast.eval(&[a.clone(), r])),
        (DType::I64, vec![3], vec![2., 3., 4.])
    );
    let f = floats(&[0.5, 0.5, 0.5], &[3]);
    assert_eq!(
        err(Prim::InplaceCast.eval(&[a.clone(), f])),
        "TypeError: Cannot cast ufunc output from dtype('float64') to dtype('int64') with \
         casting rule 'same_kind'"
    );
    let wide = ints(&[0; 6], &[2, 3]);
    assert_eq!(
        err(Prim::InplaceCast.eval(&[a.clone(), wide])),
        "ValueError: non-broadcastable output operand with shape (3,) doesn't match the \
         broadcast shape (2,3)"
    );
    // float64 into float32 is same_kind.
    let f32s = Value::Tensor(Tensor::from_f32(vec![1.0], &[1]).unwrap());
    let f64s = floats(&[2.5], &[1]);
    assert_eq!(
        tensor_of(Prim::InplaceCast.eval(&[f32s, f64s])),
        (DType::F32, vec![1], vec![2.5])
    );
    // Python values are rebound.
    assert_eq!(
        repr(
            &Prim::InplaceCast
                .eval(&[Value::Int(1), Value::Float(2.5)])
                .unwrap()
        ),
        "2.5"
    );
}

#[test]
fn rules_of_setitem_getitem_and_inplace_cast() {
    let x = t(DType::F32, &[3, 4]);
    assert_eq!(
        infer_prim(
            Prim::SetItem,
            &[x.clone(), Abs::Int(Some(0)), Abs::Float(None)]
        )
        .unwrap(),
        x
    );
    let e = infer_prim(
        Prim::SetItem,
        &[x.clone(), Abs::Int(Some(0)), t(DType::F32, &[3])],
    )
    .unwrap_err();
    assert_eq!(
        e.0,
        "could not broadcast input array from shape (3,) into shape (4,)"
    );
    assert!(
        infer_prim(
            Prim::SetItem,
            &[x.clone(), Abs::Int(Some(3)), Abs::Float(None)]
        )
        .is_err()
    );
    // Lists: the item is replaced.
    let xs = Abs::List(vec![Abs::Int(Some(1)), Abs::Int(Some(2))].into());
    assert_eq!(
        infer_prim(
            Prim::SetItem,
            &[xs, Abs::Int(Some(-1)), Abs::Float(Some(0.5))]
        )
        .unwrap(),
        Abs::List(vec![Abs::Int(Some(1)), Abs::Float(Some(0.5))].into())
    );
    assert_eq!(
        infer_prim(
            Prim::SetItem,
            &[Abs::tuple(vec![]), Abs::Int(Some(0)), Abs::Int(None)]
        )
        .unwrap(),
        Abs::Bottom
    );
    // Advanced reads: x[[0, 2]] is (2, 4); x[:, idx] with idx of shape (5,) is (3, 5); a bool
    // mask of unknown value gives an unknown length.
    let two = Abs::List(vec![Abs::Int(Some(0)), Abs::Int(Some(2))].into());
    assert_eq!(
        infer_prim(Prim::GetItem, &[x.clone(), two]).unwrap(),
        t(DType::F32, &[2, 4])
    );
    let idx = Abs::tuple(vec![Abs::Slice(None), t(DType::I64, &[5])]);
    assert_eq!(
        infer_prim(Prim::GetItem, &[x.clone(), idx]).unwrap(),
        tensor_abs(DType::F32, vec![None, Some(5)])
    );
    assert_eq!(
        infer_prim(Prim::GetItem, &[x.clone(), t(DType::Bool, &[3, 4])]).unwrap(),
        tensor_abs(DType::F32, vec![None])
    );
    assert!(infer_prim(Prim::GetItem, &[x.clone(), t(DType::Bool, &[2])]).is_err());
    // InplaceCast
    assert_eq!(
        infer_prim(Prim::InplaceCast, &[x.clone(), t(DType::F64, &[3, 4])]).unwrap(),
        x
    );
    assert!(
        infer_prim(
            Prim::InplaceCast,
            &[t(DType::I64, &[3]), t(DType::F32, &[3])]
        )
        .is_err()
    );
    assert!(infer_prim(Prim::InplaceCast, &[x.clone(), t(DType::F32, &[2, 3, 4])]).is_err());
    assert_eq!(
        infer_prim(Prim::InplaceCast, &[Abs::Int(None), Abs::Float(None)]).unwrap(),
        Abs::Float(None)
    );
}

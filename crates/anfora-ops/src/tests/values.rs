//! Python semantics of runtime values, as the reference implementations give them.

use std::rc::Rc;

use crate::Prim;
use crate::call::call_prim;
use anfora_tensor::DType;

use crate::python::{call_method, contains, getattr, getitem, iter_len, py_eq, truth, unpack};
use crate::value::{Method, OpResult, Range, Slice, Value, repr};

fn binary(p: Prim, a: &Value, b: &Value) -> OpResult {
    p.eval(&[a.clone(), b.clone()])
}

fn compare(p: Prim, a: &Value, b: &Value) -> OpResult {
    binary(p, a, b)
}

fn int(i: i64) -> Value {
    Value::Int(i)
}

fn tup(items: &[i64]) -> Value {
    Value::tuple(items.iter().map(|&i| Value::Int(i)).collect())
}

fn err(r: OpResult) -> String {
    let (k, m) = r.unwrap_err();
    format!("{k}: {m}")
}

#[test]
fn arithmetic_dispatch_follows_python() {
    assert_eq!(
        repr(&binary(Prim::Add, &Value::Bool(true), &Value::Bool(true)).unwrap()),
        "2"
    );
    assert_eq!(
        repr(&binary(Prim::BitAnd, &Value::Bool(true), &Value::Bool(false)).unwrap()),
        "False"
    );
    assert_eq!(
        repr(&binary(Prim::BitOr, &Value::Bool(true), &int(2)).unwrap()),
        "3"
    );
    assert_eq!(
        repr(&binary(Prim::Mul, &Value::str("ab"), &int(3)).unwrap()),
        "'ababab'"
    );
    assert_eq!(
        repr(&binary(Prim::Mul, &int(-1), &tup(&[1])).unwrap()),
        "()"
    );
    assert_eq!(
        repr(&binary(Prim::Add, &int(1), &Value::Float(0.5)).unwrap()),
        "1.5"
    );
    assert_eq!(
        err(binary(Prim::Add, &int(1), &Value::str("a"))),
        "TypeError: unsupported operand type(s) for +: 'int' and 'str'"
    );
    assert_eq!(
        err(binary(Prim::Add, &Value::str("a"), &int(1))),
        "TypeError: can only concatenate str (not \"int\") to str"
    );
    assert_eq!(
        err(binary(
            Prim::InplaceAdd,
            &Value::List(Rc::from(vec![])),
            &int(1)
        )),
        "TypeError: compiled code extends a list by a list or a tuple, not by a 'int'"
    );
    let extended = binary(
        Prim::InplaceAdd,
        &Value::List(Rc::from(vec![int(1)])),
        &Value::tuple(vec![int(2)]),
    );
    assert!(matches!(&extended, Ok(Value::List(items)) if items.len() == 2));
    assert_eq!(
        err(binary(Prim::LShift, &int(1), &int(-1))),
        "ValueError: negative shift count"
    );
    assert_eq!(
        err(binary(Prim::Mod, &Value::str("%d"), &int(1)))
            .split(':')
            .next()
            .unwrap(),
        "TypeError"
    );
    assert_eq!(
        err(binary(Prim::Mul, &Value::str("ab"), &int(1 << 40))),
        "MemoryError: str repetition result is too large"
    );
}

#[test]
fn comparisons_and_equality() {
    let lt = |a: &Value, b: &Value| repr(&compare(Prim::Lt, a, b).unwrap());
    assert_eq!(lt(&tup(&[1, 2]), &tup(&[1, 3])), "True");
    assert_eq!(lt(&tup(&[1, 2]), &tup(&[1, 2, 0])), "True");
    assert_eq!(lt(&Value::str("b"), &Value::str("ab")), "False");
    assert_eq!(
        repr(&compare(Prim::Eq, &int(1), &Value::str("1")).unwrap()),
        "False"
    );
    assert_eq!(
        repr(&compare(Prim::Ne, &Value::None, &Value::None).unwrap()),
        "False"
    );
    assert_eq!(
        repr(&compare(Prim::Eq, &Value::Float(f64::NAN), &Value::Float(f64::NAN)).unwrap()),
        "False"
    );
    assert_eq!(
        err(compare(Prim::Lt, &Value::None, &int(1))),
        "TypeError: '<' not supported between instances of 'NoneType' and 'int'"
    );
    assert!(py_eq(&Value::DType(DType::F32), &Value::str("float32")).unwrap());
}

/// Containers compare items by identity first: a NaN equals itself in a tuple, two NaNs made
/// apart (each operation's NaN is a new object) do not, and copies keep the identity.
#[test]
fn nan_items_compare_by_identity() {
    let nan = |v: &Value| matches!(v, Value::Float(f) if f.is_nan());
    let inf = Value::Float(f64::INFINITY);
    let x = binary(Prim::Sub, &inf, &inf).unwrap();
    let y = binary(Prim::Sub, &inf, &inf).unwrap();
    let neg =
        crate::call::call_prim(Prim::Neg, std::slice::from_ref(&x), &mut std::io::sink()).unwrap();
    assert!(nan(&x) && nan(&y) && nan(&neg));
    let eq = |a: &Value, b: &Value| repr(&compare(Prim::Eq, a, b).unwrap());
    let t = |v: &Value| Value::tuple(vec![v.clone(), int(1)]);
    assert_eq!(eq(&x, &x), "False");
    assert_eq!(eq(&t(&x), &t(&x)), "True");
    assert_eq!(eq(&t(&x), &t(&y)), "False");
    assert_eq!(eq(&t(&x), &t(&neg)), "False");
    assert_eq!(repr(&compare(Prim::Lt, &t(&x), &t(&x)).unwrap()), "False");
    assert!(contains(&t(&x), &x).unwrap());
    assert!(!contains(&t(&x), &y).unwrap());
    // A NaN is never a compile-time constant, since each evaluation is a new object.
    assert!(matches!(
        crate::abs::from_value(&x),
        crate::abs::Abs::Float(None)
    ));
    assert!(t(&x).holds_nan() && !t(&inf).holds_nan());
}

/// A tuple repeated into millions of items is not folded into a constant: its type would list
/// every item (the compiler's memory, not the program's).
#[test]
fn huge_containers_stay_run_time_values() {
    use crate::abs::Abs;
    let small = Abs::Tuple(vec![Abs::Int(Some(1))].into());
    let times = |n: i64| crate::call::infer_prim(Prim::Mul, &[small.clone(), Abs::Int(Some(n))]);
    assert!(matches!(times(3).unwrap(), Abs::Tuple(items) if items.len() == 3));
    let big = crate::value::MAX_FOLDED_ITEMS as i64 + 1;
    assert!(
        crate::abs::to_value(&times(big).unwrap()).is_none(),
        "a tuple of {big} items folded"
    );
    let nested = Value::tuple(vec![tup(&[1; 40_000]), tup(&[2; 40_000])]);
    assert!(nested.too_large_to_fold() && !tup(&[1; 40_000]).too_large_to_fold());
}

#[test]
fn slicing_matches_python() {
    let t = tup(&[0, 1, 2, 3, 4, 5]);
    let s = |start: Option<i64>, stop: Option<i64>, step: Option<i64>| {
        repr(&getitem(&t, &Value::Slice(Rc::new(Slice { start, stop, step }))).unwrap())
    };
    assert_eq!(s(None, None, Some(-1)), "(5, 4, 3, 2, 1, 0)");
    assert_eq!(s(Some(-2), None, None), "(4, 5)");
    assert_eq!(s(Some(10), Some(-10), Some(-2)), "(5, 3, 1)");
    assert_eq!(s(Some(1), Some(100), Some(3)), "(1, 4)");
    assert_eq!(s(Some(4), Some(1), None), "()");
    assert_eq!(
        err(getitem(
            &t,
            &Value::Slice(Rc::new(Slice {
                start: None,
                stop: None,
                step: Some(0)
            }))
        )),
        "ValueError: slice step cannot be zero"
    );
    assert_eq!(
        repr(&getitem(&Value::str("héllo"), &int(1)).unwrap()),
        "'é'"
    );
    assert_eq!(
        err(getitem(&t, &int(6))),
        "IndexError: tuple index out of range"
    );
    assert_eq!(
        err(getitem(&t, &Value::Float(1.0))),
        "TypeError: tuple indices must be integers or slices, not float"
    );
    let r = Value::Range(Range {
        start: 10,
        stop: 0,
        step: -2,
    });
    assert_eq!(
        repr(
            &getitem(
                &r,
                &Value::Slice(Rc::new(Slice {
                    start: Some(1),
                    stop: None,
                    step: Some(2)
                }))
            )
            .unwrap()
        ),
        "range(8, 0, -4)"
    );
    assert_eq!(repr(&getitem(&r, &int(-1)).unwrap()), "2");
}

#[test]
fn membership_unpacking_and_iteration() {
    assert!(contains(&tup(&[1, 2]), &Value::Float(2.0)).unwrap());
    assert!(contains(&Value::str("hello"), &Value::str("ell")).unwrap());
    let r = Value::Range(Range {
        start: 0,
        stop: 10,
        step: 3,
    });
    assert!(contains(&r, &int(9)).unwrap());
    assert!(!contains(&r, &int(10)).unwrap());
    assert_eq!(
        err(contains(&int(1), &int(1)).map(Value::Bool)),
        "TypeError: argument of type 'int' is not iterable"
    );
    assert_eq!(
        err(unpack(&tup(&[1, 2, 3]), 2)),
        "ValueError: too many values to unpack (expected 2)"
    );
    assert_eq!(
        err(unpack(&tup(&[1]), 2)),
        "ValueError: not enough values to unpack (expected 2, got 1)"
    );
    assert_eq!(
        err(unpack(&int(1), 2)),
        "TypeError: cannot unpack non-iterable int object"
    );
    assert_eq!(iter_len(&Value::str("ab")).unwrap(), 2);
    assert_eq!(
        err(iter_len(&Value::None).map(Value::Int)),
        "TypeError: 'NoneType' object is not iterable"
    );
}

#[test]
fn builtins() {
    let mut sink = Vec::new();
    let call = |p: Prim, args: &[Value], sink: &mut Vec<u8>| call_prim(p, args, sink);
    assert_eq!(
        repr(&call(Prim::Max, &[int(1), Value::Float(1.0), int(0)], &mut sink).unwrap()),
        "1"
    );
    assert_eq!(
        repr(&call(Prim::Min, &[tup(&[3, 1, 2])], &mut sink).unwrap()),
        "1"
    );
    assert_eq!(
        err(call(Prim::Min, &[tup(&[])], &mut sink)),
        "ValueError: min() arg is an empty sequence"
    );
    assert_eq!(
        repr(&call(Prim::Sum, &[tup(&[1, 2]), Value::Float(0.5)], &mut sink).unwrap()),
        "3.5"
    );
    assert_eq!(
        repr(&call(Prim::IntType, &[Value::Float(-2.7)], &mut sink).unwrap()),
        "-2"
    );
    assert_eq!(
        repr(&call(Prim::IntType, &[Value::str(" 12 ")], &mut sink).unwrap()),
        "12"
    );
    assert_eq!(
        err(call(
            Prim::IntType,
            &[Value::Float(f64::INFINITY)],
            &mut sink
        )),
        "OverflowError: cannot convert float infinity to integer"
    );
    assert_eq!(
        repr(
            &call(
                Prim::IsInstance,
                &[Value::Bool(true), Value::Prim(Prim::IntType)],
                &mut sink
            )
            .unwrap()
        ),
        "True"
    );
    assert_eq!(
        repr(&call(Prim::Divmod, &[int(-7), int(2)], &mut sink).unwrap()),
        "(-4, 1)"
    );
    assert_eq!(
        repr(&call(Prim::Range, &[int(5)], &mut sink).unwrap()),
        "range(0, 5)"
    );
    assert_eq!(
        err(call(Prim::Range, &[int(1), int(2), int(0)], &mut sink)),
        "ValueError: range() arg 3 must not be zero"
    );
    assert_eq!(
        repr(&call(Prim::Enumerate, &[Value::str("ab"), int(1)], &mut sink).unwrap()),
        "((1, 'a'), (2, 'b'))"
    );
    assert_eq!(
        repr(&call(Prim::Zip, &[tup(&[1, 2, 3]), Value::str("xy")], &mut sink).unwrap()),
        "((1, 'x'), (2, 'y'))"
    );
    call(
        Prim::Print,
        &[int(1), Value::str("a"), Value::str("-"), Value::str("!\n")],
        &mut sink,
    )
    .unwrap();
    assert_eq!(String::from_utf8(sink.clone()).unwrap(), "1-a!\n");
    assert_eq!(
        err(call(Prim::Print, &[int(1), int(0), Value::None], &mut sink)),
        "TypeError: sep must be None or a string, not int"
    );
}

#[test]
fn tensors_mix_with_python_scalars() {
    let mut sink = Vec::new();
    let t = call_prim(
        Prim::MakeTensor,
        &[Value::tuple(vec![int(1), int(2)]), Value::None],
        &mut sink,
    )
    .unwrap();
    assert_eq!(repr(&t), "Tensor([1, 2])");
    assert_eq!(
        repr(&binary(Prim::Mul, &t, &Value::Float(2.5)).unwrap()),
        "Tensor([2.5, 5. ])"
    );
    assert_eq!(repr(&getattr(&t, "shape").unwrap()), "(2,)");
    assert_eq!(repr(&getattr(&t, "dtype").unwrap()), "anfora.int64");
    assert_eq!(
        err(truth(&t).map(Value::Bool)),
        "ValueError: The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()"
    );
    assert_eq!(
        repr(&call_prim(Prim::Exp, &[Value::Float(0.0)], &mut sink).unwrap()),
        "1.0"
    );
    assert_eq!(
        repr(&call_prim(Prim::Relu, &[int(-3)], &mut sink).unwrap()),
        "0"
    );
    assert_eq!(
        err(call_prim(
            Prim::ReduceSum,
            &[int(1), Value::None, Value::Bool(false)],
            &mut sink
        )),
        "TypeError: ops.sum() expects a Tensor, got int"
    );
    let sum = call_method(
        Method::Sum,
        match &t {
            Value::Tensor(t) => t,
            _ => unreachable!(),
        },
        vec![],
        vec![("axis".into(), int(0))],
    )
    .unwrap();
    assert_eq!(repr(&sum), "Tensor(3)");
}

/// Found by tests/python/test_ops_random.py against numpy.
#[test]
fn clip_broadcasts_and_promotes_its_operands_together() {
    let mut sink = Vec::new();
    let zeros = |shape: &[usize]| {
        Value::Tensor(anfora_tensor::Tensor::zeros(shape, anfora_tensor::DType::F64).unwrap())
    };
    // np.clip broadcasts its three operands together: a mismatch names every shape,
    // a Python number as ().
    for (lo, hi, shapes) in [
        (zeros(&[3]), zeros(&[4]), "(2,3) (3,) (4,)"),
        (Value::Float(5.0), zeros(&[4]), "(2,3) () (4,)"),
        (zeros(&[4]), Value::None, "(2,3) (4,)"),
    ] {
        assert_eq!(
            err(call_prim(Prim::Clip, &[zeros(&[2, 3]), lo, hi], &mut sink)),
            format!("ValueError: operands could not be broadcast together with shapes {shapes} ")
        );
    }
    // ... and promotes them together, Python numbers weak: clip(bool, -4, int32) is
    // int32 and clip(bool, -4, float32) float32 (maximum, then minimum, would give int64
    // and float64).
    let typed =
        |d: anfora_tensor::DType| Value::Tensor(anfora_tensor::Tensor::zeros(&[1], d).unwrap());
    for (hi, dtype) in [
        (typed(anfora_tensor::DType::I32), "int32"),
        (typed(anfora_tensor::DType::F32), "float32"),
    ] {
        let x = typed(anfora_tensor::DType::Bool);
        let v = call_prim(Prim::Clip, &[x, int(-4), hi], &mut sink).unwrap();
        assert_eq!(
            repr(&getattr(&v, "dtype").unwrap()),
            format!("anfora.{dtype}")
        );
    }
}

/// np.concatenate(..., axis=None) joins the arrays flattened (found by
/// tests/python/test_ops_random.py against numpy).
#[test]
fn concat_of_axis_none_joins_the_flattened_tensors() {
    let mut sink = Vec::new();
    let t = |shape: &[i64], start: i64| {
        let n: i64 = shape.iter().product();
        let mut sink = std::io::sink();
        let r = call_prim(
            Prim::Arange,
            &[int(start), int(start + n), Value::None, Value::None],
            &mut sink,
        )
        .unwrap();
        call_prim(Prim::Reshape, &[r, tup(shape)], &mut sink).unwrap()
    };
    let joined = call_prim(
        Prim::Concat,
        &[
            Value::List(vec![t(&[2, 2], 0), t(&[], 4), t(&[1, 3], 5)].into()),
            Value::None,
        ],
        &mut sink,
    )
    .unwrap();
    assert_eq!(repr(&joined), "Tensor([0, 1, 2, 3, 4, 5, 6, 7])");
    // Its gradient cuts the flat sensitivity back into the tensors' shapes.
    let parts = call_prim(
        Prim::ConcatGrad,
        &[
            joined,
            Value::tuple(vec![t(&[2, 2], 0), t(&[], 4), t(&[1, 3], 5)]),
            Value::None,
        ],
        &mut sink,
    )
    .unwrap();
    assert_eq!(
        repr(&parts),
        "(Tensor([[0, 1],\n        [2, 3]]), Tensor(4), Tensor([[5, 6, 7]]))"
    );
}

#[test]
fn cells_hold_what_was_last_stored_and_are_shared_by_reference() {
    let mut sink = std::io::sink();
    let cell = call_prim(Prim::MakeCell, &[Value::Unbound], &mut sink).unwrap();
    let alias = cell.clone();
    let get = |c: &Value| call_prim(Prim::CellGet, std::slice::from_ref(c), &mut std::io::sink());
    assert!(matches!(get(&cell).unwrap(), Value::Unbound));
    // The memory state a compiled call appends is dropped.
    let u = Value::Monad(crate::Monad::U);
    let set = call_prim(
        Prim::CellSet,
        &[cell.clone(), Value::Int(3), u.clone()],
        &mut sink,
    );
    assert!(matches!(set.unwrap(), Value::None));
    assert!(matches!(get(&alias).unwrap(), Value::Int(3)));
    call_prim(Prim::CellSet, &[alias, Value::Float(0.5)], &mut sink).unwrap();
    assert!(matches!(get(&cell).unwrap(), Value::Float(f) if f == 0.5));
    assert_eq!(cell.type_name(), "cell");
    // Each MakeCell is a new cell.
    let other = call_prim(Prim::MakeCell, &[Value::Int(1)], &mut sink).unwrap();
    assert!(matches!(get(&other).unwrap(), Value::Int(1)));
    assert!(matches!(get(&cell).unwrap(), Value::Float(_)));
    // Anything else is an internal error, never a panic.
    let e = get(&Value::Int(1)).unwrap_err();
    assert_eq!(e.0, "TypeError");
    assert!(!Prim::MakeCell.is_pure() && !Prim::CellGet.is_pure());
}

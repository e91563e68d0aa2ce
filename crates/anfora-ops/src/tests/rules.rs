//! Inference rules, through the generic call: constants fold with the runtime semantics,
//! types and shapes propagate, and shape errors are compile-time errors.

use anfora_tensor::DType;

use crate::Prim;
use crate::abs::Abs;
use crate::args::tensor_abs;
use crate::call::infer_prim;

fn t(dtype: DType, shape: &[usize]) -> Abs {
    tensor_abs(dtype, shape.iter().map(|&d| Some(d)).collect())
}

#[test]
fn constants_fold_with_runtime_semantics() {
    assert_eq!(
        infer_prim(Prim::FloorDiv, &[Abs::Int(Some(-7)), Abs::Int(Some(2))]).unwrap(),
        Abs::Int(Some(-4))
    );
    assert_eq!(
        infer_prim(Prim::Div, &[Abs::Int(Some(1)), Abs::Int(Some(0))]).unwrap(),
        Abs::Bottom
    );
    assert_eq!(
        infer_prim(
            Prim::Add,
            &[Abs::Str(Some("a".into())), Abs::Str(Some("b".into()))]
        )
        .unwrap(),
        Abs::Str(Some("ab".into()))
    );
    assert_eq!(
        infer_prim(Prim::Len, &[Abs::tuple(vec![Abs::Any, Abs::Any])]).unwrap(),
        Abs::Int(Some(2))
    );
}

#[test]
fn types_propagate_without_constants() {
    assert_eq!(
        infer_prim(Prim::Add, &[Abs::Int(None), Abs::Float(Some(1.0))]).unwrap(),
        Abs::Float(None)
    );
    assert_eq!(
        infer_prim(Prim::Div, &[Abs::Int(None), Abs::Int(None)]).unwrap(),
        Abs::Float(None)
    );
    assert_eq!(
        infer_prim(Prim::Lt, &[Abs::Int(None), Abs::Int(None)]).unwrap(),
        Abs::Bool(None)
    );
    assert_eq!(
        infer_prim(Prim::Add, &[Abs::Int(None), Abs::Str(None)]).unwrap(),
        Abs::Bottom
    );
}

#[test]
fn tensor_shapes_and_dtypes() {
    let r = infer_prim(Prim::Add, &[t(DType::F32, &[2, 3]), t(DType::F32, &[3])]).unwrap();
    assert_eq!(r, t(DType::F32, &[2, 3]));
    let r = infer_prim(Prim::Mul, &[t(DType::I64, &[4]), Abs::Float(None)]).unwrap();
    assert_eq!(r, t(DType::F64, &[4]));
    let r = infer_prim(Prim::Mul, &[t(DType::F32, &[4]), Abs::Float(None)]).unwrap();
    assert_eq!(r, t(DType::F32, &[4]));
    let r = infer_prim(
        Prim::MatMul,
        &[t(DType::F32, &[2, 3]), t(DType::F32, &[3, 5])],
    )
    .unwrap();
    assert_eq!(r, t(DType::F32, &[2, 5]));
    let r = infer_prim(
        Prim::ReduceSum,
        &[
            t(DType::I32, &[2, 3]),
            Abs::Int(Some(-1)),
            Abs::Bool(Some(true)),
        ],
    )
    .unwrap();
    assert_eq!(r, t(DType::I64, &[2, 1]));
}

#[test]
fn shape_errors_are_compile_errors() {
    let e = infer_prim(
        Prim::MatMul,
        &[t(DType::F32, &[3, 4]), t(DType::F32, &[5, 6])],
    )
    .unwrap_err();
    assert_eq!(
        e.0,
        "matmul: shapes (3, 4) and (5, 6) do not align (4 != 5)"
    );
    let e = infer_prim(Prim::Add, &[t(DType::F32, &[2, 3]), t(DType::F32, &[4])]).unwrap_err();
    assert_eq!(
        e.0,
        "operands could not be broadcast together with shapes (2,3) (4,) "
    );
    let e = infer_prim(
        Prim::Reshape,
        &[t(DType::F32, &[2, 3]), Abs::tuple(vec![Abs::Int(Some(4))])],
    )
    .unwrap_err();
    assert_eq!(e.0, "cannot reshape array of size 6 into shape (4,)");
}

#[test]
fn truth_of_tensors_needs_one_element() {
    assert_eq!(
        infer_prim(Prim::Truth, &[t(DType::F32, &[1])]).unwrap(),
        Abs::Bool(None)
    );
    assert_eq!(
        infer_prim(Prim::Truth, &[t(DType::F32, &[3])]).unwrap(),
        Abs::Bottom
    );
}

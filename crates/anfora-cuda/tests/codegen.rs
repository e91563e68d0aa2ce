//! Golden CUDA C: the generator's output for W5's chain and for a broadcast with a cast and a
//! comparison, checked as text (`cargo insta review` after an intended change). Runs
//! everywhere; `tests/host.rs` runs such kernels on the host and `tests/gpu.rs` on a GPU.

use anfora_cuda::codegen::{Access, Unsupported, c_literal, fused_source, scalar_params};
use anfora_tensor::fused::{Const, FusedKernel, FusedOp};
use anfora_tensor::{BinaryOp, DType, Scalar, UnaryOp};

/// The source without the prelude of device functions (which every kernel shares).
fn kernel_only(src: &str) -> &str {
    &src[src.find("extern \"C\"").expect("a kernel")..]
}

#[test]
fn w5_chain_is_one_kernel_taking_its_scalars_by_value() {
    use BinaryOp::*;
    let ops = vec![
        FusedOp::Scalar(Scalar::Float(1.5)),
        FusedOp::Binary(Mul, 0, 1),
        FusedOp::Scalar(Scalar::Float(0.3)),
        FusedOp::Binary(Add, 2, 3),
        FusedOp::Unary(UnaryOp::Tanh, 4),
        FusedOp::Unary(UnaryOp::Sigmoid, 0),
        FusedOp::Binary(Mul, 5, 6),
        FusedOp::Scalar(Scalar::Int(3)),
        FusedOp::Binary(Div, 0, 8),
        FusedOp::Binary(Sub, 7, 9),
    ];
    let k = FusedKernel::new(&[DType::F32], ops).unwrap();
    let src = fused_source(&k, &[Access::Same], 1).unwrap();
    insta::assert_snapshot!(kernel_only(&src));
    // The weak Python scalars, converted to float32 as numpy does, in parameter order.
    assert_eq!(
        scalar_params(&k),
        vec![Const::F32(1.5), Const::F32(0.3), Const::F32(3.0)]
    );
    assert_eq!(c_literal(Const::F32(0.3)), "__int_as_float(0x3e99999a)");
}

#[test]
fn broadcast_inputs_are_read_through_strides() {
    // (x + i) > 0.5 with x float32 (2, 3) and i int32 (3,) broadcast: a cast, then a bool.
    let ops = vec![
        FusedOp::Binary(BinaryOp::Add, 0, 1),
        FusedOp::Scalar(Scalar::Float(0.5)),
        FusedOp::Binary(BinaryOp::Gt, 2, 3),
    ];
    let k = FusedKernel::new(&[DType::F32, DType::I32], ops).unwrap();
    let src = fused_source(&k, &[Access::Same, Access::Strided], 2).unwrap();
    insta::assert_snapshot!(kernel_only(&src));
}

#[test]
fn programs_that_can_raise_are_refused() {
    let ops = vec![FusedOp::Binary(BinaryOp::FloorDiv, 0, 1)];
    let k = FusedKernel::new(&[DType::I32, DType::I32], ops).unwrap();
    assert_eq!(
        fused_source(&k, &[Access::Same, Access::Same], 1),
        Err(Unsupported::MayRaise)
    );
    let ops = vec![FusedOp::Binary(BinaryOp::FloorDiv, 0, 1)];
    let k = FusedKernel::new(&[DType::F64, DType::F64], ops).unwrap();
    assert!(fused_source(&k, &[Access::Same, Access::Same], 1).is_ok());
}

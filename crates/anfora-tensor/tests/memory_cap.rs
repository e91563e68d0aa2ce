//! `ANFORA_MAX_TENSOR_BYTES` lowers the memory cap. The cap is read once, at the first
//! allocation, so this test runs in its own process, without the test harness (`harness = false`
//! in Cargo.toml): `main` sets the variable while the process has a single thread, before any
//! tensor exists.

use anfora_tensor::{BinaryOp, DType, ErrorKind, ReduceOp, Scalar, Tensor, UnaryOp};

const CAP: usize = 2 << 20;

#[track_caller]
fn assert_capped<T: std::fmt::Debug>(
    r: anfora_tensor::Result<T>,
    size: &str,
    shape: &str,
    dtype: &str,
) {
    let e = r.expect_err("expected a MemoryError");
    assert_eq!(e.kind, ErrorKind::Memory);
    assert_eq!(
        e.message,
        format!(
            "cannot allocate {size} for a tensor of shape {shape} and dtype {dtype} (more than \
             the 2.0 MiB limit set by ANFORA_MAX_TENSOR_BYTES)"
        )
    );
    assert_eq!(e.kind.python_name(), "MemoryError");
}

fn main() {
    // SAFETY: no other thread exists yet (this binary has no test harness), so nothing reads
    // the environment concurrently.
    unsafe { std::env::set_var("ANFORA_MAX_TENSOR_BYTES", CAP.to_string()) };

    // Exactly at the cap: fine.
    let at_cap = Tensor::zeros(&[512, 1024], DType::F32).unwrap();
    assert_eq!(at_cap.numel() * 4, CAP);
    let t = at_cap.transpose(None).unwrap();
    assert_eq!(t.shape(), &[1024, 512]);

    assert_capped(
        Tensor::zeros(&[768, 1024], DType::F32),
        "3.0 MiB",
        "(768, 1024)",
        "float32",
    );
    assert_capped(
        Tensor::full(&[3, 1 << 20], Scalar::Bool(true), DType::Bool),
        "3.0 MiB",
        "(3, 1048576)",
        "bool",
    );
    assert_capped(
        Tensor::arange(Scalar::Int(0), Scalar::Int(1 << 20), Scalar::Int(1), None),
        "8.0 MiB",
        "(1048576,)",
        "int64",
    );

    // 1 MiB of bools is fine; the same elements in a wider dtype are not.
    let flags = Tensor::ones(&[1024, 1024], DType::Bool).unwrap();
    assert_capped(
        flags.try_cast(DType::F64),
        "8.0 MiB",
        "(1024, 1024)",
        "float64",
    );
    assert_capped(
        Tensor::unary(UnaryOp::Exp, &flags),
        "8.0 MiB",
        "(1024, 1024)",
        "float64",
    );
    // The sum's accumulator copy (bool -> int64) is refused, naming that intermediate.
    assert_capped(
        Tensor::reduce(ReduceOp::Sum, &flags, None, false),
        "8.0 MiB",
        "(1024, 1024)",
        "int64",
    );
    assert_capped(
        Tensor::binary_scalar(BinaryOp::Mul, &flags, Scalar::Float(0.5), false),
        "8.0 MiB",
        "(1024, 1024)",
        "float64",
    );
    assert!(Tensor::unary(UnaryOp::LogicalNot, &flags).is_ok());

    let col = Tensor::ones(&[1024, 1], DType::F32).unwrap();
    let row = Tensor::ones(&[1, 1024], DType::F32).unwrap();
    assert_capped(
        Tensor::binary(BinaryOp::Add, &col, &row),
        "4.0 MiB",
        "(1024, 1024)",
        "float32",
    );
    assert_capped(
        Tensor::matmul(&col, &row),
        "4.0 MiB",
        "(1024, 1024)",
        "float32",
    );
    let half = Tensor::binary(BinaryOp::Lt, &col, &row).unwrap();
    assert_eq!(half.shape(), &[1024, 1024]);

    println!("memory_cap: ok");
}

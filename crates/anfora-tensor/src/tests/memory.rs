//! Oversized tensors: numpy's ValueErrors for sizes that overflow (texts checked against numpy
//! 2.4.6) and anfora's MemoryError above the memory cap. Tests through the public API use sizes
//! far above any machine's memory (TiB), so they never allocate, and take the cap's part of the
//! message from `alloc::cap()`; the cap logic is tested through `alloc`'s functions that take
//! it as a parameter, and end to end in `tests/memory_cap.rs`, which sets
//! `ANFORA_MAX_TENSOR_BYTES` in its own process.

use super::*;
use crate::alloc::{self, Cap, CapSource, TOO_BIG};

/// A MemoryError for a tensor of `shape` and `dtype` needing `size`, under the process's cap.
#[track_caller]
fn assert_memory_error<T: std::fmt::Debug>(
    r: crate::Result<T>,
    size: &str,
    shape: &str,
    dtype: &str,
) {
    assert_err(
        r,
        ErrorKind::Memory,
        &format!(
            "cannot allocate {size} for a tensor of shape {shape} and dtype {dtype} ({})",
            alloc::cap().describe()
        ),
    );
}

/// 2**20: a square matrix of this side holds 2**40 elements (4 TiB of float32).
const SIDE: usize = 1 << 20;

fn ones(shape: &[usize], dtype: DType) -> Tensor {
    Tensor::ones(shape, dtype).unwrap()
}

fn add(a: &Tensor, b: &Tensor) -> crate::Result<Tensor> {
    Tensor::binary(BinaryOp::Add, a, b)
}

fn int_arange(start: i64, stop: i64, dtype: Option<DType>) -> crate::Result<Tensor> {
    Tensor::arange(Scalar::Int(start), Scalar::Int(stop), Scalar::Int(1), dtype)
}

// ----- the allocation helper and the cap ---------------------------------------------------------

/// The machine this was written on: 24 GiB of RAM, of which the kernel reports 23.5 GiB.
const MEM_TOTAL: Cap = Cap {
    bytes: 24_684_092 * 1024,
    source: CapSource::MemTotal,
};

#[test]
fn memory_error_class() {
    assert_eq!(ErrorKind::Memory.python_name(), "MemoryError");
    let e = crate::TensorError::new(ErrorKind::Memory, "x");
    assert_eq!(e.to_string(), "MemoryError: x");
}

#[test]
fn refusal_messages_name_size_shape_dtype_and_cap() {
    assert_err(
        alloc::try_vec_capped::<f32>(&[100000, 100000], MEM_TOTAL),
        ErrorKind::Memory,
        "cannot allocate 37.3 GiB for a tensor of shape (100000, 100000) and dtype float32 (more \
         than this machine's 23.5 GiB of memory)",
    );
    assert_err(
        alloc::check_size_capped(&[100000, 100000], DType::F32, MEM_TOTAL),
        ErrorKind::Memory,
        "cannot allocate 37.3 GiB for a tensor of shape (100000, 100000) and dtype float32 (more \
         than this machine's 23.5 GiB of memory)",
    );
    let env = Cap {
        bytes: 1 << 20,
        source: CapSource::Env,
    };
    assert_err(
        alloc::try_vec_capped::<f64>(&[1000, 200], env),
        ErrorKind::Memory,
        "cannot allocate 1.5 MiB for a tensor of shape (1000, 200) and dtype float64 (more than \
         the 1.0 MiB limit set by ANFORA_MAX_TENSOR_BYTES)",
    );
    assert_err(
        alloc::try_vec_capped::<bool>(&[], Cap { bytes: 0, ..env }),
        ErrorKind::Memory,
        "cannot allocate 1 byte for a tensor of shape () and dtype bool (more than the 0 bytes \
         limit set by ANFORA_MAX_TENSOR_BYTES)",
    );
    let fallback = Cap {
        bytes: 16 << 30,
        source: CapSource::Fallback,
    };
    assert_err(
        alloc::try_vec_capped::<i64>(&[3, 1 << 30], fallback),
        ErrorKind::Memory,
        "cannot allocate 24.0 GiB for a tensor of shape (3, 1073741824) and dtype int64 (more \
         than the 16.0 GiB assumed when the machine's memory is unknown)",
    );
    // Overflowing sizes are numpy's ValueError whatever the cap.
    let unlimited = Cap {
        bytes: usize::MAX,
        ..env
    };
    assert_err(
        alloc::try_vec_capped::<f32>(&[1 << 40, 1 << 40], unlimited),
        ErrorKind::Value,
        TOO_BIG,
    );
}

#[test]
fn requests_up_to_the_cap_are_granted() {
    let cap = Cap {
        bytes: 1 << 20,
        source: CapSource::Env,
    };
    let (v, n) = alloc::try_vec_capped::<f64>(&[1024, 128], cap).unwrap();
    assert_eq!((v.len(), n), (0, 1 << 17));
    assert!(v.capacity() >= n);
    let (v, n) = alloc::try_vec_capped::<f64>(&[0, 1 << 40], cap).unwrap();
    assert_eq!((v.len(), n), (0, 0));
    let zero = Cap { bytes: 0, ..cap };
    assert_eq!(alloc::try_vec_capped::<i32>(&[5, 0], zero).unwrap().1, 0);
    assert!(alloc::try_vec_capped::<i32>(&[1], zero).is_err());
}

#[test]
fn cap_sources() {
    const MEMINFO: &str = "MemTotal:       24684092 kB\nMemFree:         1234 kB\n";
    let cap = |env, meminfo| Cap::from_sources(env, meminfo);
    assert_eq!(cap(None, Some(MEMINFO)), MEM_TOTAL);
    assert_eq!(
        cap(Some("1048576"), Some(MEMINFO)),
        Cap {
            bytes: 1 << 20,
            source: CapSource::Env
        }
    );
    assert_eq!(
        cap(Some(" 42\n"), None),
        Cap {
            bytes: 42,
            source: CapSource::Env
        }
    );
    assert_eq!(
        cap(Some("0"), None),
        Cap {
            bytes: 0,
            source: CapSource::Env
        }
    );
    // Anything but a whole number of bytes is ignored.
    for bad in ["", "1G", "-5", "1.5e9", "99999999999999999999"] {
        assert_eq!(cap(Some(bad), Some(MEMINFO)), MEM_TOTAL, "{bad:?}");
    }
    let fallback = Cap {
        bytes: 16 << 30,
        source: CapSource::Fallback,
    };
    assert_eq!(cap(None, None), fallback);
    assert_eq!(cap(None, Some("MemFree: 12 kB\n")), fallback);
    assert_eq!(cap(None, Some("MemTotal: lots\n")), fallback);
    assert_eq!(cap(None, Some("MemTotal: 12 MB\n")), fallback);
    assert_eq!(
        cap(None, Some("MemFree: 1 kB\nMemTotal: 2 kB\n")),
        Cap {
            bytes: 2048,
            source: CapSource::MemTotal
        }
    );
    assert_eq!(
        MEM_TOTAL.describe(),
        "more than this machine's 23.5 GiB of memory"
    );
}

#[test]
fn the_process_cap_is_the_machine_memory_or_the_variable() {
    let cap = alloc::cap();
    match std::env::var(alloc::ENV_VAR) {
        Ok(v) if v.trim().parse::<u64>().is_ok() => assert_eq!(cap.source, CapSource::Env),
        _ => assert_ne!(cap.source, CapSource::Env),
    }
    assert_eq!(alloc::cap(), cap, "read once");
}

#[test]
fn byte_counts() {
    let cases: [(usize, &str); 12] = [
        (0, "0 bytes"),
        (1, "1 byte"),
        (1023, "1023 bytes"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        ((1 << 20) - 1, "1.0 MiB"),
        (64 << 20, "64.0 MiB"),
        (40_000_000_000, "37.3 GiB"),
        (24_684_092 * 1024, "23.5 GiB"),
        (8 << 40, "8.0 TiB"),
        (4 << 60, "4.0 EiB"),
        (usize::MAX, "16.0 EiB"),
    ];
    for (bytes, text) in cases {
        assert_eq!(alloc::format_bytes(bytes), text, "{bytes}");
    }
}

#[test]
fn numpy_size_rule() {
    let numel = alloc::checked_numel;
    assert_eq!(numel(&[], 8), Ok(1));
    assert_eq!(numel(&[2, 3], 8), Ok(6));
    assert_eq!(numel(&[0, 5], 8), Ok(0));
    assert_eq!(numel(&[isize::MAX as usize], 1), Ok(isize::MAX as usize));
    // numpy multiplies the nonzero dimensions even when the array is empty.
    assert_eq!(numel(&[1 << 60, 0], 4), Ok(0));
    let too_big = Err(crate::TensorError::new(ErrorKind::Value, TOO_BIG));
    assert_eq!(numel(&[1 << 60, 0], 8), too_big);
    assert_eq!(numel(&[1 << 62, 0], 8), too_big);
    assert_eq!(numel(&[isize::MAX as usize], 2), too_big);
    assert_eq!(numel(&[usize::MAX], 1), too_big);
    assert_eq!(numel(&[1 << 40, 1 << 40], 1), too_big);
    assert_eq!(numel(&[1 << 32, 1 << 32], 1), too_big);
    assert_eq!(numel(&[1 << 31, 1 << 31], 2), too_big);

    let iter = alloc::checked_iter_size;
    assert_eq!(iter(&[1 << 31, 1 << 31]), Ok(1 << 62));
    assert_eq!(iter(&[1 << 40, 0, 1 << 40]), Ok(0));
    assert_err(
        iter(&[1 << 32, 1 << 31]),
        ErrorKind::Value,
        "iterator is too large",
    );
}

// ----- construction ------------------------------------------------------------------------------

#[test]
fn zeros_and_ones_too_large() {
    // The example of the issue: 40 GB. Skipped on machines with that much memory, where it would
    // be allocated.
    if alloc::cap().bytes < 40_000_000_000 {
        assert_memory_error(
            Tensor::zeros(&[100000, 100000], DType::F32),
            "37.3 GiB",
            "(100000, 100000)",
            "float32",
        );
    }
    assert_memory_error(
        Tensor::zeros(&[SIDE, SIDE], DType::F64),
        "8.0 TiB",
        "(1048576, 1048576)",
        "float64",
    );
    assert_memory_error(
        Tensor::ones(&[1 << 40], DType::I32),
        "4.0 TiB",
        "(1099511627776,)",
        "int32",
    );
    assert_memory_error(
        Tensor::ones(&[1 << 62], DType::Bool),
        "4.0 EiB",
        "(4611686018427387904,)",
        "bool",
    );
    // np.zeros((2**40, 2**40)) and friends.
    for dtype in [DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64] {
        assert_err(
            Tensor::zeros(&[1 << 40, 1 << 40], dtype),
            ErrorKind::Value,
            TOO_BIG,
        );
        assert_err(
            Tensor::ones(&[usize::MAX, 1], dtype),
            ErrorKind::Value,
            TOO_BIG,
        );
    }
    assert_err(
        Tensor::zeros(&[1 << 62, 0], DType::F64),
        ErrorKind::Value,
        TOO_BIG,
    );
    assert_err(
        Tensor::zeros(&[1 << 60, 0, 16], DType::Bool),
        ErrorKind::Value,
        TOO_BIG,
    );
    // Empty, with nonzero dimensions whose product still fits: fine, as in numpy.
    let t = Tensor::zeros(&[1 << 60, 0], DType::F32).unwrap();
    assert_eq!((t.shape(), t.numel()), (&[1 << 60, 0][..], 0));
    assert_eq!(
        t.repr(),
        "array([], shape=(1152921504606846976, 0), dtype=float32)"
    );
}

#[test]
fn full_too_large() {
    assert_memory_error(
        Tensor::full(&[SIDE, SIDE], Scalar::Int(7), DType::I64),
        "8.0 TiB",
        "(1048576, 1048576)",
        "int64",
    );
    assert_memory_error(
        Tensor::full(&[SIDE, SIDE], Scalar::Float(0.5), DType::F32),
        "4.0 TiB",
        "(1048576, 1048576)",
        "float32",
    );
    assert_err(
        Tensor::full(&[1 << 40, 1 << 40], Scalar::Float(1.0), DType::F64),
        ErrorKind::Value,
        TOO_BIG,
    );
    // A fill value numpy rejects is still rejected first on a fine shape.
    assert_err(
        Tensor::full(&[2], Scalar::Int(1 << 40), DType::I32),
        ErrorKind::Overflow,
        "Python integer 1099511627776 out of bounds for int32",
    );
}

#[test]
fn arange_too_long() {
    assert_err(int_arange(0, 1 << 62, None), ErrorKind::Value, TOO_BIG);
    assert_err(int_arange(0, 1 << 60, None), ErrorKind::Value, TOO_BIG);
    assert_err(
        int_arange(0, 1 << 61, Some(DType::I32)),
        ErrorKind::Value,
        TOO_BIG,
    );
    assert_err(
        int_arange(i64::MIN, i64::MAX, None),
        ErrorKind::Value,
        "Maximum allowed size exceeded",
    );
    assert_err(
        Tensor::arange(
            Scalar::Float(0.0),
            Scalar::Float(1e300),
            Scalar::Float(1.0),
            None,
        ),
        ErrorKind::Value,
        "Maximum allowed size exceeded",
    );
    assert_memory_error(
        int_arange(0, 1 << 40, None),
        "8.0 TiB",
        "(1099511627776,)",
        "int64",
    );
    assert_memory_error(
        int_arange(0, 1 << 59, None),
        "4.0 EiB",
        "(576460752303423488,)",
        "int64",
    );
    // The cap applies to the result's dtype (float32 by default for float arguments).
    assert_memory_error(
        Tensor::arange(
            Scalar::Float(0.0),
            Scalar::Float((1u64 << 40) as f64),
            Scalar::Float(1.0),
            None,
        ),
        "4.0 TiB",
        "(1099511627776,)",
        "float32",
    );
    assert_memory_error(
        int_arange(0, 1 << 40, Some(DType::Bool)),
        "1.0 TiB",
        "(1099511627776,)",
        "bool",
    );
}

#[test]
fn from_vec_shape_overflow() {
    assert_err(
        Tensor::from_f32(Vec::new(), &[0, 1 << 62, 1 << 62]),
        ErrorKind::Value,
        TOO_BIG,
    );
    assert_err(
        Tensor::from_bool(Vec::new(), &[usize::MAX, 0]),
        ErrorKind::Value,
        TOO_BIG,
    );
    assert_err(
        Tensor::from_i64(vec![1, 2, 3], &[1 << 32, 1 << 32]),
        ErrorKind::Value,
        TOO_BIG,
    );
    let t = Tensor::from_i32(Vec::new(), &[1 << 40, 0]).unwrap();
    assert_eq!(t.shape(), &[1 << 40, 0]);
}

#[test]
fn from_nested_sizes_come_from_the_data() {
    let t = Tensor::from_nested(&list(vec![list(vec![]), list(vec![])]), None).unwrap();
    assert_eq!((t.shape(), t.dtype()), (&[2, 0][..], DType::F32));
    let t = Tensor::from_nested(&list(vec![int(1), int(2)]), Some(DType::F64)).unwrap();
    assert_tensor(&t, &f64s(&[1.0, 2.0], &[2]));
}

// ----- shapes ------------------------------------------------------------------------------------

#[test]
fn reshape_overflowing_shape() {
    let three = ones(&[3], DType::F32);
    // numpy: an overflowing product of the known dimensions is a size mismatch.
    assert_err(
        three.reshape(&[1 << 40, 1 << 40]),
        ErrorKind::Value,
        "cannot reshape array of size 3 into shape (1099511627776,1099511627776)",
    );
    assert_err(
        three.reshape(&[i64::MAX, i64::MAX]),
        ErrorKind::Value,
        "cannot reshape array of size 3 into shape (9223372036854775807,9223372036854775807)",
    );
    assert_err(
        three.reshape(&[-1, 1 << 62, 1 << 62]),
        ErrorKind::Value,
        "cannot reshape array of size 3 into shape (4611686018427387904,4611686018427387904)",
    );
    let empty = ones(&[0], DType::F64);
    assert_err(
        empty.reshape(&[1 << 62, 1 << 62, 0]),
        ErrorKind::Value,
        "cannot reshape array of size 0 into shape (4611686018427387904,4611686018427387904,0)",
    );
    // A zero first keeps the product at 0; the new shape then fails numpy's size rule.
    assert_err(
        empty.reshape(&[0, 1 << 62, 1 << 62]),
        ErrorKind::Value,
        TOO_BIG,
    );
    assert_err(empty.reshape(&[0, 1 << 61]), ErrorKind::Value, TOO_BIG);
    let t = ones(&[0], DType::F32).reshape(&[0, 1 << 60]).unwrap();
    assert_eq!(t.shape(), &[0, 1 << 60]);
}

#[test]
fn broadcast_shapes_too_large() {
    assert_err(
        crate::broadcast_shapes(&[1 << 32, 1], &[1, 1 << 32]),
        ErrorKind::Value,
        "broadcast dimensions too large.",
    );
    assert_eq!(
        crate::broadcast_shapes(&[1 << 31, 1], &[1, 1 << 31]),
        Ok(vec![1 << 31, 1 << 31])
    );
    assert_eq!(
        crate::broadcast_shapes_n(&[&[1 << 40, 1, 0], &[1, 1 << 40, 1]]),
        Ok(vec![1 << 40, 1 << 40, 0])
    );
}

// ----- ops ---------------------------------------------------------------------------------------

#[test]
fn broadcast_result_too_large() {
    // ops.ones((200000, 1)) + ops.ones((1, 200000)): 149 GiB. Skipped on machines with that
    // much memory.
    if alloc::cap().bytes < 160_000_000_000 {
        assert_memory_error(
            add(
                &ones(&[200000, 1], DType::F32),
                &ones(&[1, 200000], DType::F32),
            ),
            "149.0 GiB",
            "(200000, 200000)",
            "float32",
        );
    }
    let col = ones(&[SIDE, 1], DType::F32);
    let row = ones(&[1, SIDE], DType::F32);
    assert_memory_error(add(&col, &row), "4.0 TiB", "(1048576, 1048576)", "float32");
    assert_memory_error(
        Tensor::binary(BinaryOp::Lt, &col, &row),
        "1.0 TiB",
        "(1048576, 1048576)",
        "bool",
    );
    // The result dtype, not the operands', is what must fit.
    assert_memory_error(
        Tensor::binary(BinaryOp::Div, &ones(&[SIDE, 1], DType::I32), &row),
        "8.0 TiB",
        "(1048576, 1048576)",
        "float64",
    );
    assert_memory_error(
        Tensor::where_(
            &ones(&[SIDE, 1], DType::Bool),
            &row,
            &Tensor::scalar(Scalar::Int(0), DType::I64).unwrap(),
        ),
        "8.0 TiB",
        "(1048576, 1048576)",
        "float64",
    );
    // More elements than `intp` counts: numpy's nditer error.
    let side = 1 << 22;
    let cond = ones(&[side, 1, 1], DType::Bool);
    let x = ones(&[1, side, 1], DType::Bool);
    let y = ones(&[1, 1, side], DType::Bool);
    assert_err(
        Tensor::where_(&cond, &x, &y),
        ErrorKind::Value,
        "iterator is too large",
    );
}

#[test]
fn matmul_result_too_large() {
    let col = ones(&[SIDE, 1], DType::F32);
    let row = ones(&[1, SIDE], DType::F32);
    assert_memory_error(
        Tensor::matmul(&col, &row),
        "4.0 TiB",
        "(1048576, 1048576)",
        "float32",
    );
    assert_memory_error(
        Tensor::matmul(&ones(&[SIDE, 1], DType::I64), &ones(&[1, SIDE], DType::I32)),
        "8.0 TiB",
        "(1048576, 1048576)",
        "int64",
    );
    // Batch broadcasting: (2**20, 1, 1) @ (1, 2**20) -> (2**20, 1, 2**20).
    assert_memory_error(
        Tensor::matmul(
            &ones(&[SIDE, 1, 1], DType::F64),
            &ones(&[1, SIDE], DType::F64),
        ),
        "8.0 TiB",
        "(1048576, 1, 1048576)",
        "float64",
    );
    assert_memory_error(
        Tensor::matmul(
            &ones(&[SIDE, 1, 1], DType::Bool),
            &ones(&[1, SIDE], DType::Bool),
        ),
        "1.0 TiB",
        "(1048576, 1, 1048576)",
        "bool",
    );
}

#[test]
fn large_but_fine_allocations_work() {
    // 64 MiB each.
    let side = 4096;
    let z = Tensor::zeros(&[side, side], DType::F32).unwrap();
    let o = Tensor::ones(&[side, side], DType::F32).unwrap();
    assert_eq!(z.as_f32_slice().map(<[f32]>::len), Some(side * side));
    assert!(z.as_f32_slice().unwrap().iter().all(|&x| x.to_bits() == 0));
    assert!(o.as_f32_slice().unwrap().iter().all(|&x| x == 1.0));
    let s = add(&z, &o).unwrap();
    assert_eq!(s.shape(), &[side, side]);
    assert_eq!(
        Tensor::reduce(ReduceOp::Sum, &s, None, false)
            .unwrap()
            .item(),
        Ok(Scalar::Float((side * side) as f64))
    );
    let t = s.transpose(None).unwrap();
    assert_eq!(t.get_flat(side * side - 1), Scalar::Float(1.0));
    let r = int_arange(0, 1 << 23, None).unwrap();
    assert_eq!(r.get_flat((1 << 23) - 1), Scalar::Int((1 << 23) - 1));
}

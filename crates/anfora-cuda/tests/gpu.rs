//! The CUDA backend against the CPU's kernels, on a real GPU. Each test skips with one line
//! when the machine has no CUDA device (CI, most CPU machines); `scripts/gpu-check.sh` builds
//! this binary to run on a GPU machine.
//!
//! Agreement: integer, bool and comparison results exactly; float32 within 1e-5 relative (and
//! 1e-6 absolute near zero), float64 within 1e-12; NaN where the CPU has NaN, the same
//! infinities; errors with the CPU's message.

use std::sync::Mutex;

mod common;

use anfora_cuda::Probe;
use anfora_ops::kernels::{self, KernelKey};
use anfora_ops::{Prim, Value};
use anfora_tensor::{DType, Device, Tensor};
use common::{assert_same, moderate, values};

/// Tests that set the default device take turns.
static DEFAULT_DEVICE: Mutex<()> = Mutex::new(());

fn gpu() -> Option<Device> {
    match anfora_cuda::install() {
        Probe::Found(d) if !d.is_empty() => Some(d[0]),
        Probe::Found(_) => {
            eprintln!("skipped: the CUDA devices could not be opened");
            None
        }
        Probe::None(why) => {
            eprintln!("skipped: no CUDA device ({why})");
            None
        }
    }
}

/// Asserts the device result is on the device and equals (floats: is close to) the CPU's.
fn assert_agrees(what: &str, cpu: &Tensor, gpu: &Tensor) {
    assert_eq!(
        gpu.device().kind,
        anfora_tensor::DeviceKind::Cuda,
        "{what}: on the device"
    );
    assert_same(what, cpu, &gpu.to_device(Device::CPU).unwrap());
}

/// Runs primitive `p` on `args` with the kernel registered for `device` (tensors moved there).
fn run(p: Prim, device: Device, args: &[Value]) -> Result<Value, (&'static str, String)> {
    let mut args: Vec<Value> = args
        .iter()
        .map(|v| match v {
            Value::Tensor(t) => Value::Tensor(t.to_device(device).unwrap()),
            v => v.clone(),
        })
        .collect();
    let dtype = args.iter().find_map(|v| match v {
        Value::Tensor(t) => Some(t.dtype()),
        _ => None,
    });
    let dtype = if p == Prim::Where {
        match &args[1] {
            Value::Tensor(t) => t.dtype(),
            _ => dtype.unwrap(),
        }
    } else {
        dtype.unwrap()
    };
    let key = KernelKey {
        prim: p,
        device,
        dtype,
    };
    let k = kernels::find(key).unwrap_or_else(|| panic!("no kernel for {key}"));
    k.call(&mut args, &mut std::io::sink())
}

fn tensor(v: Value) -> Tensor {
    match &v {
        Value::Tensor(t) => t.clone(),
        v => panic!("not a tensor: {v:?}"),
    }
}

/// `t` with shape `shape`.
fn shaped(t: Tensor, shape: &[usize]) -> Tensor {
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    t.reshape(&dims).unwrap()
}

/// Compares a primitive on the device with the CPU: the same value, or the same error.
fn compare(what: &str, p: Prim, gpu: Device, args: &[Value]) {
    let cpu = run(p, Device::CPU, args);
    let dev = run(p, gpu, args);
    match (cpu, dev) {
        (Ok(c), Ok(g)) => assert_agrees(what, &tensor(c), &tensor(g)),
        (Err(c), Err(g)) => assert_eq!(c, g, "{what}: the same error"),
        (c, g) => panic!("{what}: cpu {c:?} but gpu {g:?}"),
    }
}

#[test]
fn the_device_is_listed_and_described() {
    let Some(d) = gpu() else { return };
    assert!(anfora_tensor::device::devices().contains(&d));
    let b = anfora_tensor::device::backend(d).unwrap();
    assert!(b.describe().starts_with("cuda:0: "), "{}", b.describe());
    assert!(b.supports(DType::F32) && !b.supports(DType::F16));
    eprintln!("{}", b.describe());
}

#[test]
fn tensors_go_to_the_device_and_back_unchanged() {
    let Some(d) = gpu() else { return };
    for dtype in [DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64] {
        for shape in [&[0usize][..], &[], &[3, 5], &[1000]] {
            let n: usize = shape.iter().product();
            let t = shaped(values(dtype, n, 3), shape);
            let on = t.to_device(d).unwrap();
            assert_eq!(on.device(), d);
            assert_eq!(on.shape(), shape);
            let back = on.to_device(Device::CPU).unwrap();
            assert!(back.same_as(&t), "{dtype} {shape:?}");
            // Reading a device tensor on the host (printing, numpy) copies it.
            assert!(on.same_as(&t));
        }
    }
    let half = Tensor::from_f32(vec![1.0], &[1])
        .unwrap()
        .try_cast(DType::F16)
        .unwrap();
    assert_eq!(
        half.to_device(d).unwrap_err().message,
        "device 'cuda:0' does not support float16 tensors"
    );
}

#[test]
fn unary_primitives_agree_with_the_cpu() {
    let Some(d) = gpu() else { return };
    for &p in Prim::all() {
        if p.def().kernels.unary_op().is_none() {
            continue;
        }
        for dtype in [DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64] {
            let x = Value::Tensor(values(dtype, 257, 5));
            compare(&format!("{} {dtype}", p.name()), p, d, &[x]);
        }
    }
    for approximate in [false, true] {
        let x = Value::Tensor(values(DType::F32, 100, 6));
        compare("gelu", Prim::Gelu, d, &[x, Value::Bool(approximate)]);
    }
}

#[test]
fn binary_primitives_agree_with_the_cpu() {
    let Some(d) = gpu() else { return };
    let dtypes = [DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64];
    for &p in Prim::all() {
        if p.def().kernels.binary_op().is_none() {
            continue;
        }
        for &da in &dtypes {
            for &db in &dtypes {
                let (a, b) = (values(da, 300, 7), values(db, 300, 8));
                let what = format!("{} {da} {db}", p.name());
                let cpu = run(
                    p,
                    Device::CPU,
                    &[Value::Tensor(a.clone()), Value::Tensor(b.clone())],
                );
                let dev = run(p, d, &[Value::Tensor(a), Value::Tensor(b)]);
                match (cpu, dev) {
                    (Ok(c), Ok(g)) => assert_agrees(&what, &tensor(c), &tensor(g)),
                    // Integer division, remainder and power can raise on some data: the
                    // device refuses them with a message saying so.
                    (_, Err(g)) if g.1.contains("can raise an error that depends on the data") => {}
                    (Err(c), Err(g)) => assert_eq!(c.0, g.0, "{what}: {c:?} vs {g:?}"),
                    (Ok(_), Err(g)) => assert!(
                        g.1.contains("can raise an error that depends on the data"),
                        "{what}: {g:?}"
                    ),
                    (c, g) => panic!("{what}: cpu {c:?} but gpu {g:?}"),
                }
            }
        }
        // A Python scalar operand, weak as in NumPy 2.
        for s in [Value::Float(1.5), Value::Int(3), Value::Bool(true)] {
            let x = Value::Tensor(values(DType::F32, 64, 9));
            let what = format!("{} f32 {s:?}", p.name());
            let cpu = run(p, Device::CPU, &[x.clone(), s.clone()]);
            if cpu.is_ok() {
                compare(&what, p, d, &[x, s]);
            }
        }
    }
}

#[test]
fn casts_and_where_agree_with_the_cpu() {
    let Some(d) = gpu() else { return };
    let dtypes = [DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64];
    for &from in &dtypes {
        for &to in &dtypes {
            let x = Value::Tensor(values(from, 200, 11));
            compare(
                &format!("cast {from} -> {to}"),
                Prim::Cast,
                d,
                &[x, Value::DType(to)],
            );
        }
    }
    let c = Value::Tensor(values(DType::Bool, 50, 12));
    for (dx, dy) in [
        (DType::F32, DType::F32),
        (DType::I32, DType::F64),
        (DType::Bool, DType::I64),
    ] {
        let (x, y) = (
            Value::Tensor(values(dx, 50, 13)),
            Value::Tensor(values(dy, 50, 14)),
        );
        compare(
            &format!("where {dx} {dy}"),
            Prim::Where,
            d,
            &[c.clone(), x, y],
        );
    }
}

#[test]
fn broadcasting_follows_numpy_and_its_errors() {
    let Some(d) = gpu() else { return };
    let t = |shape: &[usize], seed| {
        let n = shape.iter().product();
        Value::Tensor(shaped(values(DType::F32, n, seed), shape))
    };
    for (a, b) in [
        (&[3, 1][..], &[4][..]),
        (&[2, 3, 4], &[4]),
        (&[2, 1, 4], &[3, 1]),
        (&[], &[5, 2]),
        (&[1, 1, 1, 1, 1, 1, 2], &[3, 1]),
        (&[0, 3], &[3]),
    ] {
        compare(&format!("{a:?} + {b:?}"), Prim::Add, d, &[t(a, 1), t(b, 2)]);
    }
    compare("(3,) + (4,)", Prim::Add, d, &[t(&[3], 1), t(&[4], 2)]);
}

#[test]
fn products_agree_with_the_cpu() {
    let Some(d) = gpu() else { return };
    let t = |shape: &[usize], seed, dtype| {
        let n = shape.iter().product();
        let v = moderate(&shaped(values(DType::F64, n, seed), shape), 0.5);
        Value::Tensor(v.try_cast(dtype).unwrap())
    };
    for dtype in [DType::F32, DType::F64] {
        for (a, b) in [
            (&[128, 784][..], &[784, 512][..]),
            (&[784], &[784, 10]),
            (&[5, 3], &[3]),
            (&[4, 2, 3], &[3, 6]),
            (&[4, 2, 3], &[4, 3, 6]),
            (&[0, 3], &[3, 2]),
        ] {
            let what = format!("{a:?} @ {b:?} {dtype}");
            let cpu =
                tensor(run(Prim::MatMul, Device::CPU, &[t(a, 1, dtype), t(b, 2, dtype)]).unwrap());
            let gpu = tensor(run(Prim::MatMul, d, &[t(a, 1, dtype), t(b, 2, dtype)]).unwrap());
            assert_products_close(&what, &cpu, &gpu);
        }
        compare(
            "mismatch",
            Prim::MatMul,
            d,
            &[t(&[2, 3], 1, dtype), t(&[4, 5], 2, dtype)],
        );
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            let a = if ta {
                t(&[784, 64], 3, dtype)
            } else {
                t(&[64, 784], 3, dtype)
            };
            let b = if tb {
                t(&[512, 784], 4, dtype)
            } else {
                t(&[784, 512], 4, dtype)
            };
            for c in [
                Value::None,
                t(&[512], 5, dtype),
                t(&[64, 512], 6, dtype),
                t(&[64, 1], 7, dtype),
            ] {
                let args = [a.clone(), b.clone(), c, Value::Bool(ta), Value::Bool(tb)];
                let what = format!("gemm {ta} {tb} {dtype}");
                let cpu = tensor(run(Prim::Gemm, Device::CPU, &args).unwrap());
                let gpu = tensor(run(Prim::Gemm, d, &args).unwrap());
                assert_products_close(&what, &cpu, &gpu);
            }
        }
    }
}

/// Products differ by rounding in the order of summation: compared relative to the largest
/// magnitude of the result.
fn assert_products_close(what: &str, cpu: &Tensor, gpu: &Tensor) {
    let host = gpu.to_device(Device::CPU).unwrap();
    assert_eq!(cpu.shape(), host.shape(), "{what}");
    let (c, g) = (cpu.to_f64_vec(), host.to_f64_vec());
    let scale = c.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    let tol = if cpu.dtype() == DType::F32 {
        1e-5
    } else {
        1e-12
    };
    for (i, (a, b)) in c.iter().zip(&g).enumerate() {
        assert!(
            (a - b).abs() <= tol * scale,
            "{what}: element {i}: cpu {a} gpu {b}"
        );
    }
}

/// The W5 chain and the W6 MLP, compiled for the device: the chain becomes one generated
/// kernel, the layers cuBLAS products with the bias as accumulator.
#[test]
fn compiled_programs_run_on_the_device() {
    let Some(d) = gpu() else { return };
    let _turn = DEFAULT_DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    let w5 = "from anfora import ops\n\ndef w5(x):\n    return ops.tanh(x * 1.5 + 0.3) * ops.sigmoid(x) - x / 3\n";
    let w6 = "from anfora import ops\n\ndef fwd(W1, b1, W2, b2, x):\n    h = ops.relu(x @ W1 + b1)\n    return h @ W2 + b2\n";
    let x = values(DType::F32, 1 << 20, 21);
    let ps = [
        shaped(values(DType::F32, 784 * 64, 22), &[784, 64]),
        values(DType::F32, 64, 23),
        shaped(values(DType::F32, 640, 24), &[64, 10]),
        values(DType::F32, 10, 25),
        shaped(values(DType::F32, 784 * 8, 26), &[8, 784]),
    ];
    let ps: Vec<Tensor> = ps.iter().map(|t| moderate(t, 0.25)).collect();
    let run_on = |device: Device, src: &str, entry: &str, args: Vec<Tensor>| -> Tensor {
        kernels::set_default_device(device).unwrap();
        let mut s = anfora_session::Session::load("gpu.py", src, anfora_ir::Options::default());
        let args = args
            .into_iter()
            .map(|t| anfora_session::Arg::from(Value::Tensor(t.to_device(device).unwrap())))
            .collect();
        let v = s
            .call(entry, args, &mut std::io::sink())
            .unwrap_or_else(|f| panic!("{}", s.render(&f)));
        kernels::set_default_device(Device::CPU).unwrap();
        tensor(v)
    };
    let cpu = run_on(Device::CPU, w5, "w5", vec![x.clone()]);
    let gpu = run_on(d, w5, "w5", vec![x.clone()]);
    assert_agrees("w5", &cpu, &gpu);
    let cpu = run_on(Device::CPU, w6, "fwd", ps.clone());
    let gpu = run_on(d, w6, "fwd", ps.clone());
    assert_products_close("w6", &cpu, &gpu);
}

#[test]
fn reductions_agree_with_the_cpu() {
    let Some(d) = gpu() else { return };
    let axes = [
        Value::None,
        Value::Int(0),
        Value::Int(-1),
        Value::Tuple(vec![Value::Int(0), Value::Int(2)].into()),
    ];
    for p in [
        Prim::ReduceSum,
        Prim::ReduceMean,
        Prim::ReduceMax,
        Prim::ReduceMin,
        Prim::ReduceProd,
    ] {
        for dtype in [DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64] {
            let x = shaped(values(dtype, 2 * 300 * 7, 31), &[2, 300, 7]);
            let x = if p == Prim::ReduceMean && !dtype.is_float() {
                x.try_cast(DType::Bool).unwrap().try_cast(dtype).unwrap()
            } else {
                x
            };
            for axis in &axes {
                for keep in [false, true] {
                    let what = format!("{} {dtype} {axis:?} {keep}", p.name());
                    let args = [Value::Tensor(x.clone()), axis.clone(), Value::Bool(keep)];
                    compare(&what, p, d, &args);
                }
            }
        }
    }
    // A large reduction: one block folds 4M elements.
    let x = Value::Tensor(values(DType::F32, 1 << 22, 32));
    let cpu = tensor(
        run(
            Prim::ReduceMax,
            Device::CPU,
            &[x.clone(), Value::None, Value::Bool(false)],
        )
        .unwrap(),
    );
    let gpu = tensor(run(Prim::ReduceMax, d, &[x, Value::None, Value::Bool(false)]).unwrap());
    assert_agrees("max of 4M", &cpu, &gpu);
    let empty = Value::Tensor(shaped(values(DType::F32, 0, 1), &[0, 3]));
    compare(
        "max of nothing",
        Prim::ReduceMax,
        d,
        &[empty.clone(), Value::Int(0), Value::Bool(false)],
    );
    compare(
        "sum of nothing",
        Prim::ReduceSum,
        d,
        &[empty, Value::Int(0), Value::Bool(false)],
    );
}

/// The training steps of W1 (the MLP, softmax cross-entropy, value_and_grad, SGD on six
/// Parameters) and W2 (LeNet-5: its convolutions and pooling run the CPU's kernels on host
/// copies until they have CUDA kernels) compiled for the device: the Parameters move there
/// on the first call and are updated there; the losses of three steps match the CPU's.
#[test]
fn training_steps_run_on_the_device() {
    let Some(d) = gpu() else { return };
    let _turn = DEFAULT_DEVICE.lock().unwrap_or_else(|e| e.into_inner());
    // Moderate inputs, a tenth of the samples' scale.
    let clean = |t: Tensor| {
        let scale = Tensor::from_f32(vec![0.1], &[]).unwrap();
        Tensor::binary(anfora_tensor::BinaryOp::Mul, &moderate(&t, 0.5), &scale).unwrap()
    };
    let labels = |n: usize| {
        let y: Vec<f32> = (0..n * 10)
            .map(|i| f32::from(u8::from(i % 10 == (i / 10) % 10)))
            .collect();
        Tensor::from_f32(y, &[n, 10]).unwrap()
    };
    let w1 = (
        include_str!("../../../benches/workloads/w1_mlp.py"),
        clean(shaped(values(DType::F32, 128 * 784, 41), &[128, 784])),
        labels(128),
    );
    let w2 = (
        include_str!("../../../benches/workloads/w2_lenet.py"),
        clean(shaped(
            values(DType::F32, 64 * 28 * 28, 42),
            &[64, 1, 28, 28],
        )),
        labels(64),
    );
    for (name, (src, x, y)) in [("W1", w1), ("W2", w2)] {
        let steps = |device: Device| -> Vec<f64> {
            anfora_ops::state::set_seed(0);
            kernels::set_default_device(device).unwrap();
            let mut s = anfora_session::Session::load("w.py", src, anfora_ir::Options::default());
            let losses = (0..3)
                .map(|_| {
                    let args = vec![
                        anfora_session::Arg::from(Value::Tensor(x.to_device(device).unwrap())),
                        anfora_session::Arg::from(Value::Tensor(y.to_device(device).unwrap())),
                    ];
                    let v = s
                        .call("step", args, &mut std::io::sink())
                        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
                    match &v {
                        Value::Tensor(t) => t.to_f64_vec()[0],
                        Value::Float(f) => *f,
                        v => panic!("a loss, not {v:?}"),
                    }
                })
                .collect();
            kernels::set_default_device(Device::CPU).unwrap();
            losses
        };
        let (cpu, gpu) = (steps(Device::CPU), steps(d));
        eprintln!("{name} losses: cpu {cpu:?} gpu {gpu:?}");
        for (a, b) in cpu.iter().zip(&gpu) {
            assert!(
                (a - b).abs() <= 1e-4 * a.abs(),
                "{name}: cpu {cpu:?} gpu {gpu:?}"
            );
        }
        assert!(gpu[2] < gpu[0], "{name}: the loss goes down: {gpu:?}");
    }
}

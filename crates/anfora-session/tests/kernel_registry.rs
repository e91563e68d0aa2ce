//! The kernel registry and the backend interface: compiled programs find each primitive's
//! kernel by (primitive, device, dtype), so a registered kernel replaces the CPU backend's own
//! and a new device runs the kernels registered for it. The tests change process-wide state,
//! so they run one after another in this binary of their own.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anfora_ir::Options;
use anfora_ir::Prim;
use anfora_ops::Value;
use anfora_ops::kernels::{self, Kernel, KernelKey};
use anfora_ops::pynum::tensor_err;
use anfora_session::{Arg, Session, repr};
use anfora_tensor::device::{self, Backend, Device};
use anfora_tensor::{DType, Tensor, UnaryOp};

/// Serializes the tests: the registry and the default device are process-wide.
static LOCK: Mutex<()> = Mutex::new(());

const SRC: &str = "\
import anfora.ops as ops

def f(x):
    return ops.tanh(x) * 2.0

def add(x, y):
    return x + y + 1
";

fn session() -> Session {
    Session::load("m.py", SRC, Options::default())
}

fn run(s: &mut Session, entry: &str, args: Vec<Value>) -> Result<String, String> {
    let args: Vec<Arg> = args.into_iter().map(Arg::from).collect();
    s.call(entry, args, &mut std::io::sink())
        .map(|v| repr(&v))
        .map_err(|f| s.render(&f))
}

fn dump(s: &Session) -> String {
    let program = s.last_compiled().unwrap().program.as_ref().unwrap();
    program.dump(&s.frontend.module.sources)
}

fn f64s(v: &[f64]) -> Value {
    Value::Tensor(Tensor::from_f64(v.to_vec(), &[v.len()]).unwrap())
}

fn f32s(v: &[f32]) -> Value {
    Value::Tensor(Tensor::from_f32(v.to_vec(), &[v.len()]).unwrap())
}

/// A kernel computing `op` through the tensor library, counting its calls.
fn counting(name: &str, op: UnaryOp, calls: Arc<AtomicUsize>) -> Kernel {
    Kernel::new(name, move |args, _| {
        calls.fetch_add(1, Ordering::SeqCst);
        let x = args[0]
            .clone()
            .into_tensor()
            .map_err(|_| ("TypeError", "the test kernel takes a tensor".to_string()))?;
        Tensor::unary(op, &x).map(Value::Tensor).map_err(tensor_err)
    })
}

#[test]
fn a_registered_cpu_kernel_replaces_the_builtin_one_for_its_dtype_only() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let calls = Arc::new(AtomicUsize::new(0));
    let key = KernelKey {
        prim: Prim::Tanh,
        device: Device::CPU,
        dtype: DType::F64,
    };
    let builtin = kernels::register(key, counting("my_tanh", UnaryOp::Tanh, calls.clone()))
        .unwrap()
        .unwrap();
    assert!(builtin.is_builtin());

    let mut s = session();
    let got = run(&mut s, "f", vec![f64s(&[0.0, 1.0])]).unwrap();
    assert_eq!(got, "Tensor([0.        , 1.52318831])");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // The chain `tanh(x) * 2` is fused, but its one-pass kernel is the CPU backend's: with
    // another kernel for a step, the chain runs step by step and calls it.
    let text = dump(&s);
    assert!(text.contains("step by step"), "{text}");
    assert!(text.contains("Tanh[my_tanh]"), "{text}");

    // float32 still runs the built-in kernel, in one pass.
    run(&mut s, "f", vec![f32s(&[0.5; 64])]).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let text = dump(&s);
    assert!(
        !text.contains("my_tanh") && text.contains("one pass"),
        "{text}"
    );

    // Restoring the built-in kernel affects programs compiled from then on.
    kernels::register(key, builtin).unwrap();
    let mut s = session();
    run(&mut s, "f", vec![f64s(&[0.25])]).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(!dump(&s).contains("my_tanh"));
}

#[test]
fn operators_on_tensors_dispatch_through_the_registry() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let key = KernelKey {
        prim: Prim::Add,
        device: Device::CPU,
        dtype: DType::I64,
    };
    // A saturating addition for int64 tensors (the built-in one wraps, as numpy does).
    let saturating = Kernel::new("saturating_add", |args, _| {
        let as_vec = |v: &Value| match v {
            Value::Tensor(t) => t.as_i64_slice().map(<[i64]>::to_vec),
            Value::Int(i) => Some(vec![*i]),
            _ => None,
        };
        let (Some(a), Some(b)) = (as_vec(&args[0]), as_vec(&args[1])) else {
            return Err(("TypeError", "int64 operands expected".into()));
        };
        let n = a.len().max(b.len());
        let sum: Vec<i64> = (0..n)
            .map(|i| a[i % a.len()].saturating_add(b[i % b.len()]))
            .collect();
        Ok(Value::Tensor(Tensor::from_i64(sum, &[n]).unwrap()))
    });
    let builtin = kernels::register(key, saturating).unwrap().unwrap();
    let ints = |v: &[i64]| Value::Tensor(Tensor::from_i64(v.to_vec(), &[v.len()]).unwrap());
    let mut s = session();
    let got = run(&mut s, "add", vec![ints(&[i64::MAX, 1]), ints(&[5, 2])]);
    kernels::register(key, builtin).unwrap();
    assert_eq!(
        got.unwrap(),
        "Tensor([9223372036854775807,                   4])"
    );
    assert!(dump(&s).contains("Add[saturating_add]"));
    // Python ints never reach a kernel.
    let mut s = session();
    assert_eq!(
        run(&mut s, "add", vec![Value::Int(2), Value::Int(3)]).unwrap(),
        "6"
    );
}

/// A stand-in accelerator: it holds float32 only, and its kernels (registered by the test)
/// compute on the host.
struct TestDevice;

impl Backend for TestDevice {
    fn device(&self) -> Device {
        Device::parse("cuda:0").unwrap()
    }
    fn describe(&self) -> String {
        "test accelerator".into()
    }
    fn supports(&self, dtype: DType) -> bool {
        dtype == DType::F32
    }
    fn parallelism(&self) -> usize {
        1
    }
}

#[test]
fn a_new_device_runs_the_kernels_registered_for_it_and_names_the_missing_ones() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let cuda = Device::parse("cuda:0").unwrap();
    assert!(kernels::set_default_device(cuda).is_err());
    device::register_backend(Arc::new(TestDevice)).unwrap();
    assert_eq!(
        device::register_backend(Arc::new(TestDevice))
            .unwrap_err()
            .message,
        "device 'cuda:0' already has a backend"
    );
    assert_eq!(device::devices(), vec![Device::CPU, cuda]);
    let calls = Arc::new(AtomicUsize::new(0));
    let tanh = KernelKey {
        prim: Prim::Tanh,
        device: cuda,
        dtype: DType::F32,
    };
    kernels::register(tanh, counting("test_tanh", UnaryOp::Tanh, calls.clone())).unwrap();
    let unsupported = KernelKey {
        dtype: DType::F64,
        ..tanh
    };
    assert_eq!(
        kernels::register(unsupported, counting("x", UnaryOp::Tanh, calls.clone()))
            .unwrap_err()
            .to_string(),
        "the backend of cuda:0 does not support float64"
    );

    kernels::set_default_device(cuda).unwrap();
    let mut s = session();
    // `* 2.0` has no kernel on the device: compiling says so.
    let err = run(&mut s, "f", vec![f32s(&[0.5])]);
    kernels::set_default_device(Device::CPU).unwrap();
    let err = err.unwrap_err();
    assert!(
        err.contains("no kernel is registered for Mul on cuda:0 for float32"),
        "{err}"
    );

    let mul = KernelKey {
        prim: Prim::Mul,
        ..tanh
    };
    kernels::register(
        mul,
        Kernel::new("test_mul", |args, out| {
            anfora_ops::inplace::prim(Prim::Mul, args, out)
        }),
    )
    .unwrap();
    kernels::set_default_device(cuda).unwrap();
    let mut s = session();
    let got = run(&mut s, "f", vec![f32s(&[0.5])]);
    let program_device = s.last_compiled().unwrap().program.as_ref().unwrap().device;
    kernels::set_default_device(Device::CPU).unwrap();
    assert_eq!(got.unwrap(), "Tensor([0.92423433], dtype=float32)");
    assert_eq!(program_device, cuda);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let text = dump(&s);
    assert!(
        text.contains("Tanh[test_tanh]") && text.contains("Mul[test_mul]"),
        "{text}"
    );
}

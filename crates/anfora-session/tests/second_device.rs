//! A second device behind the southbound interface, on every machine: a backend whose buffers
//! are host memory it owns and whose kernels are the CPU's run on copies, their results copied
//! back to it (`kernels::host_fallback`, which the CUDA backend uses for the primitives it has
//! no kernel of its own for). Programs compiled for it must run on it end to end (fused chains as its
//! one-pass kernels, Parameters moved there and updated there, eager calls on its tensors
//! dispatched to it) and compute exactly what the CPU computes. The CUDA backend is the same
//! machinery with real device memory (`anfora-cuda`, tested on a GPU machine).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anfora_ir::{Options, Prim};
use anfora_ops::Value;
use anfora_ops::kernels::{self, Kernel, KernelKey};
use anfora_session::{Arg, Session};
use anfora_tensor::device::{self, Backend, Device, DeviceBuffer};
use anfora_tensor::{DType, ErrorKind, Result, Tensor, TensorError};

/// Elements the stand-in device owns (as bytes in host memory).
#[derive(Debug)]
struct HostBuffer {
    device: Device,
    dtype: DType,
    len: usize,
    bytes: Vec<u8>,
}

impl DeviceBuffer for HostBuffer {
    fn device(&self) -> Device {
        self.device
    }
    fn dtype(&self) -> DType {
        self.dtype
    }
    fn len(&self) -> usize {
        self.len
    }
    fn download(&self, dst: &mut [u8]) -> Result<()> {
        if dst.len() != self.bytes.len() {
            return Err(TensorError::new(
                ErrorKind::Value,
                "a download of the wrong size",
            ));
        }
        dst.copy_from_slice(&self.bytes);
        DOWNLOADS.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

static DOWNLOADS: AtomicUsize = AtomicUsize::new(0);
static UPLOADS: AtomicUsize = AtomicUsize::new(0);
static FUSED_CALLS: AtomicUsize = AtomicUsize::new(0);

struct SecondDevice(Device);

impl Backend for SecondDevice {
    fn device(&self) -> Device {
        self.0
    }
    fn describe(&self) -> String {
        format!("{}: a stand-in device in host memory", self.0)
    }
    fn supports(&self, dtype: DType) -> bool {
        !dtype.is_half()
    }
    fn parallelism(&self) -> usize {
        1
    }
    fn upload(&self, bytes: &[u8], dtype: DType, len: usize) -> Result<Arc<dyn DeviceBuffer>> {
        UPLOADS.fetch_add(1, Ordering::SeqCst);
        Ok(Arc::new(HostBuffer {
            device: self.0,
            dtype,
            len,
            bytes: bytes.to_vec(),
        }))
    }
}

/// The tensors of `v` moved to `d` (through tuples and lists).
fn to(d: Device, v: Value) -> Value {
    match &v {
        Value::Tensor(t) => Value::Tensor(t.to_device(d).expect("the device holds it")),
        Value::Tuple(items) => Value::Tuple(items.iter().cloned().map(|i| to(d, i)).collect()),
        Value::List(items) => Value::List(items.iter().cloned().map(|i| to(d, i)).collect()),
        _ => v,
    }
}

static INSTALLED: std::sync::OnceLock<Device> = std::sync::OnceLock::new();
static TURN: Mutex<()> = Mutex::new(());

/// Registers the device (once per process): backend, every primitive's kernel, a fuser.
fn second() -> Device {
    *INSTALLED.get_or_init(|| {
        let d = Device::parse("cuda:7").unwrap();
        device::register_backend(Arc::new(SecondDevice(d))).unwrap();
        for &p in Prim::all() {
            if !kernels::has_kernels(p) {
                continue;
            }
            for dtype in [DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64] {
                let key = KernelKey {
                    prim: p,
                    device: d,
                    dtype,
                };
                kernels::register(key, kernels::host_fallback(p, d)).unwrap();
            }
        }
        kernels::register_fuser(
            d,
            Arc::new(move |program: &anfora_tensor::FusedKernel| {
                let program = program.clone();
                Some(Kernel::new("second", move |args, _| {
                    FUSED_CALLS.fetch_add(1, Ordering::SeqCst);
                    let inputs: Vec<Tensor> = args
                        .iter()
                        .map(|v| match &to(Device::CPU, v.clone()) {
                            Value::Tensor(t) => t.clone(),
                            v => panic!("a fused kernel got {v:?}"),
                        })
                        .collect();
                    let refs: Vec<&Tensor> = inputs.iter().collect();
                    let r = program.run(&refs).map_err(anfora_ops::pynum::tensor_err)?;
                    Ok(to(d, Value::Tensor(r)))
                }))
            }),
        );
        d
    })
}

const W1: &str = include_str!("../../../benches/workloads/w1_mlp.py");

fn batch() -> (Tensor, Tensor) {
    let x: Vec<f32> = (0..128 * 784)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0)
        .collect();
    let y: Vec<f32> = (0..128 * 10)
        .map(|i| f32::from(u8::from(i % 10 == (i / 10 * 3) % 10)))
        .collect();
    (
        Tensor::from_f32(x, &[128, 784]).unwrap(),
        Tensor::from_f32(y, &[128, 10]).unwrap(),
    )
}

/// Three W1 training steps compiled for `device`: the losses, the Parameters the program
/// read, and the program's dump.
fn train(device: Device) -> (Vec<Tensor>, Vec<anfora_ir::ParamRef>, String) {
    anfora_ops::state::set_seed(0);
    kernels::set_default_device(device).unwrap();
    let mut s = Session::load("w1.py", W1, Options::default());
    let (x, y) = batch();
    let mut losses = Vec::new();
    let args = || {
        vec![
            Arg::from(Value::Tensor(x.to_device(device).unwrap())),
            Arg::from(Value::Tensor(y.to_device(device).unwrap())),
        ]
    };
    for _ in 0..3 {
        let v = s.call("step", args(), &mut std::io::sink());
        let v = v.unwrap_or_else(|f| panic!("{}", s.render(&f)));
        match &v {
            Value::Tensor(t) => losses.push(t.clone()),
            v => panic!("a loss, not {v:?}"),
        }
    }
    let compiled = s
        .compiled("step", &args())
        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    kernels::set_default_device(Device::CPU).unwrap();
    let program = compiled.program.as_ref().unwrap();
    let mut params: Vec<anfora_ir::ParamRef> = Vec::new();
    for c in &program.consts {
        if let Value::Ref(p) = c
            && !params.contains(p)
        {
            params.push(p.clone());
        }
    }
    let dump = program.dump(&anfora_ir::SourceMap::default());
    (losses, params, dump)
}

#[test]
fn a_training_step_compiled_for_another_device_runs_there_and_matches_the_cpu() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let d = second();
    let (cpu_losses, cpu_params, _) = train(Device::CPU);
    let fused_before = FUSED_CALLS.load(Ordering::SeqCst);
    let (losses, params, dump) = train(d);
    // Every loss is on the device and equals the CPU's bit for bit (the same kernels ran).
    for (c, g) in cpu_losses.iter().zip(&losses) {
        assert_eq!(g.device(), d);
        assert!(g.same_as(c), "cpu {c:?} device {g:?}");
    }
    // The Parameters moved to the device on the first call and were updated there.
    assert_eq!(params.len(), 6);
    for (c, g) in cpu_params.iter().zip(&params) {
        assert_eq!(g.get().device(), d, "{}", g.name());
        assert!(g.get().same_as(&c.get()), "{}", g.name());
        assert_eq!(c.get().device(), Device::CPU);
    }
    // The fused chains ran as the device's one-pass kernels (4 per step).
    assert_eq!(FUSED_CALLS.load(Ordering::SeqCst) - fused_before, 12);
    assert!(
        dump.contains("one cuda:7 kernel over float32, float32, float32"),
        "{dump}"
    );
}

#[test]
fn eager_calls_on_device_tensors_run_on_their_device() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let d = second();
    let a = Tensor::from_f32(vec![1.0, 2.0, 3.0], &[3]).unwrap();
    let on = Value::Tensor(a.to_device(d).unwrap());
    for (p, args) in [
        (Prim::Add, vec![on.clone(), Value::Float(0.5)]),
        (Prim::Tanh, vec![on.clone()]),
        (
            Prim::ReduceSum,
            vec![on.clone(), Value::None, Value::Bool(false)],
        ),
    ] {
        let host = to(Device::CPU, Value::Tensor(a.clone()));
        let mut cpu_args = args.clone();
        cpu_args[0] = host;
        let expected = p.eval(&cpu_args).unwrap();
        let got = p.eval(&args).unwrap();
        match (&expected, &got) {
            (Value::Tensor(e), Value::Tensor(g)) => {
                assert_eq!(g.device(), d, "{}", p.name());
                assert!(g.same_as(e), "{}", p.name());
            }
            _ => panic!("{}: {expected:?} {got:?}", p.name()),
        }
    }
    // Reading a device tensor on the host copies it once; moving it back is that copy.
    let t = a.to_device(d).unwrap();
    let before = DOWNLOADS.load(Ordering::SeqCst);
    assert_eq!(t.to_f64_vec(), vec![1.0, 2.0, 3.0]);
    assert_eq!(t.to_f64_vec(), vec![1.0, 2.0, 3.0]);
    assert_eq!(DOWNLOADS.load(Ordering::SeqCst) - before, 1);
    // A reshape keeps the buffer on the device.
    let r = t.reshape(&[1, 3]).unwrap();
    assert_eq!(r.device(), d);
    assert!(Arc::ptr_eq(
        r.device_buffer().unwrap(),
        t.device_buffer().unwrap()
    ));
    assert_eq!(t.to_device(Device::CPU).unwrap().device(), Device::CPU);
}

/// `with anfora.placement(...)`: the block's operations run on the device (one fused kernel
/// there), values cross by `ToDevice` copies the lower stage inserts, the optimized IR shows
/// each placed node's device, gradients run where their forward operations ran, and the
/// results are the CPU's. OneFlow's form names the same device.
const PLACED: &str = "\
import anfora
from anfora import ops

def f(x):
    y = x * 2.0
    with anfora.placement(\"cuda:7\"):
        z = ops.tanh(y) + 1.0
        w = ops.sum(z * z)
    return w + ops.sum(y)

def g(x):
    return anfora.grad(f)(x)

def h(x):
    y = x * 2.0
    with flow.scope.placement(\"cuda\", \"0:7\"):
        z = ops.tanh(y) + 1.0
        w = ops.sum(z * z)
    return w + ops.sum(y)

def plain(x):
    y = x * 2.0
    z = ops.tanh(y) + 1.0
    w = ops.sum(z * z)
    return w + ops.sum(y)

def plain_grad(x):
    return anfora.grad(plain)(x)
";

/// The program of `entry` for `args`: its value, the optimized IR and the program's dump.
fn placed(entry: &str, x: &Tensor) -> (Tensor, String, String) {
    let mut s = Session::load("placed.py", PLACED, Options::default());
    let args = vec![Arg::from(Value::Tensor(x.clone()))];
    let v = s.call(entry, args.clone(), &mut std::io::sink());
    let v = match &v.unwrap_or_else(|f| panic!("{}", s.render(&f))) {
        Value::Tensor(t) => t.clone(),
        v => panic!("{v:?}"),
    };
    let mut ir = String::new();
    let compiled = s
        .compile_pipeline(entry, Some(&args), &mut |view| {
            if view.stage == "optimize" {
                ir = view.ir();
            }
        })
        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    let program = compiled
        .program
        .as_ref()
        .unwrap()
        .dump(&s.frontend.module.sources);
    (v, ir, program)
}

#[test]
fn placement_blocks_run_their_operations_on_their_device() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let d = second();
    let x = Tensor::from_f32(vec![0.5, -1.0, 2.0, 0.25], &[4]).unwrap();
    let (expected, _, _) = placed("plain", &x);
    let fused_before = FUSED_CALLS.load(Ordering::SeqCst);
    let (got, ir, program) = placed("f", &x);
    assert!(got.same_as(&expected), "{got:?} {expected:?}");
    // The block's value crossed back: the result is the CPU's.
    assert_eq!(got.device(), Device::CPU);
    assert!(
        FUSED_CALLS.load(Ordering::SeqCst) > fused_before,
        "{program}"
    );
    assert!(
        ir.contains("ReduceSum(") && ir.contains(&format!(" @{d}")),
        "{ir}"
    );
    assert!(program.contains("ToDevice("), "{program}");
    assert!(program.contains(&format!("one {d} kernel")), "{program}");
    assert!(program.contains("ReduceSum[host]("), "{program}");
    let (oneflow, oneflow_ir, _) = placed("h", &x);
    assert!(oneflow.same_as(&expected));
    assert!(oneflow_ir.contains(&format!(" @{d}")), "{oneflow_ir}");
}

#[test]
fn gradients_run_where_their_forward_operations_ran() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let d = second();
    let x = Tensor::from_f32(vec![0.5, -1.0, 2.0, 0.25], &[4]).unwrap();
    let (expected, _, _) = placed("plain_grad", &x);
    let (got, ir, program) = placed("g", &x);
    assert!(got.same_as(&expected), "{got:?} {expected:?}");
    // The backward of the block's reduction spreads the sensitivity on the device; that of
    // the reduction outside the block on the CPU.
    let spreads: Vec<&str> = ir.lines().filter(|l| l.contains("ReduceGrad(")).collect();
    assert_eq!(spreads.len(), 2, "{ir}");
    let placed = spreads
        .iter()
        .filter(|l| l.ends_with(&format!(" @{d}")))
        .count();
    assert_eq!(placed, 1, "{ir}");
    assert!(program.contains("ToDevice("), "{program}");
}

#[test]
fn a_placement_names_one_device() {
    let bad = "\
import anfora
from anfora import ops

def f(x):
    with anfora.placement(\"tpu:0\"):
        y = x + 1
    with anfora.placement(\"cuda\", \"0:0-3\"):
        y = y + 1
    with open(\"f\") as fh:
        y = y + 1
    return y
";
    let mut s = Session::load("bad.py", bad, Options::default());
    let x = Tensor::from_f32(vec![1.0], &[1]).unwrap();
    let err = s
        .call("f", vec![Arg::from(Value::Tensor(x))], &mut std::io::sink())
        .map(|_| ())
        .map_err(|f| s.render(&f))
        .unwrap_err();
    assert!(err.contains("unknown device 'tpu:0'"), "{err}");
    assert!(err.contains("a placement names one device"), "{err}");
    // Each at the argument (or the `with` keyword) where it is written.
    for at in ["bad.py:5:26", "bad.py:7:26", "bad.py:9:5"] {
        assert!(err.contains(at), "{at}: {err}");
    }
    assert!(
        err.contains("only `with anfora.placement(device):`"),
        "{err}"
    );
    assert_eq!(err.matches("E0107").count(), 3, "{err}");
}

/// Output, result and error of `main` of a corpus program compiled for `device`.
fn corpus_run(path: &std::path::Path, device: Device) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let args = text
        .lines()
        .take(5)
        .find_map(|l| l.strip_prefix("# args:"))
        .map(
            |a| match &anfora_session::literal_value(&format!("({},)", a.trim())).unwrap() {
                Value::Tuple(items) => items.iter().cloned().map(Arg::from).collect(),
                v => panic!("{v:?}"),
            },
        )
        .unwrap_or_default();
    kernels::set_default_device(device).unwrap();
    let name = path.file_name().unwrap().to_string_lossy();
    let mut s = Session::load(&name, &text, Options::default());
    let mut out = Vec::new();
    let r = s.call("main", args, &mut out);
    kernels::set_default_device(Device::CPU).unwrap();
    let r = match r {
        Ok(v) => anfora_session::repr(&v),
        Err(f) => s.render(&f),
    };
    format!("{}{r}", String::from_utf8_lossy(&out))
}

/// Every corpus program (the differential tests' Python, numpy semantics, errors) compiled
/// for the second device prints and returns what it does on the CPU, errors included.
#[test]
fn corpus_programs_compute_the_same_on_the_second_device() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let d = second();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    assert!(files.len() > 200);
    let uploads = UPLOADS.load(Ordering::SeqCst);
    for path in &files {
        let (cpu, dev) = (corpus_run(path, Device::CPU), corpus_run(path, d));
        assert_eq!(cpu, dev, "{}", path.display());
    }
    // The device held the programs' tensors.
    assert!(UPLOADS.load(Ordering::SeqCst) - uploads > 1000);
}

//! anfora's CUDA backend: NVIDIA GPUs behind the southbound interface.
//!
//! [`install`] finds the CUDA devices of the machine and registers, for each, a backend
//! (`anfora_tensor::device`), its kernels in the kernel registry (`anfora_ops::kernels`) and
//! its fuser, which turns the optimizer's fused elementwise chains into one CUDA C kernel
//! each, compiled by NVRTC at first use. Nothing in the compiler changes: a program compiled
//! for `cuda:N` finds these kernels where a CPU program finds the CPU's.
//!
//! The CUDA libraries are opened at run time. On a machine without the driver or without a
//! GPU, `install` finds no device and registers nothing; it never panics.
//!
//! What runs on the device today: every elementwise primitive (unary, binary, `cast`,
//! `where`, `gelu`) and their fused chains, in bool, int32, int64, float32 and float64; the
//! reductions (`sum`, `mean`, `max`, `min`, `prod`); `matmul` and `Gemm` in float32 and
//! float64 through cuBLAS; `BroadcastLike`, and `ReduceGrad` composed of those. Every other
//! primitive runs the CPU's kernel on host copies of its operands (`kernels::host_fallback`,
//! shown as `[host]` in dumps), as MindSpore falls back to CPU kernels: programs compile and
//! compute right, and the fallbacks are where device time is still to be won.

mod backend;
mod blas;
pub mod codegen;
mod elementwise;
mod reduce;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use anfora_ops::kernels::{self, FusedOperand, Kernel, KernelKey};
use anfora_ops::pynum;
use anfora_ops::{Prim, Value};
use anfora_tensor::fused::{FusedKernel, FusedOp};
use anfora_tensor::{DType, Device, ErrorKind, Tensor, TensorError};

pub use backend::{CudaBackend, CudaDevice};
pub use elementwise::CudaFused;

/// The dtypes CUDA kernels compute in.
const DTYPES: [DType; 5] = [DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64];

/// Why no CUDA device is available, or the devices found.
#[derive(Clone, Debug)]
pub enum Probe {
    /// The devices registered.
    Found(Vec<Device>),
    /// No device, and why (no driver, no GPU, the driver failed to start).
    None(String),
}

/// Finds the CUDA devices and registers a backend, kernels and a fuser for each. Runs once
/// per process; later calls return the first answer.
pub fn install() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(|| match std::panic::catch_unwind(probe) {
        Ok(Ok(found)) => {
            let mut devices = Vec::new();
            for d in found {
                if register(d.clone()).is_ok() {
                    devices.push(d.device());
                }
            }
            Probe::Found(devices)
        }
        Ok(Err(why)) => Probe::None(why),
        Err(_) => Probe::None("the CUDA driver library could not be used".into()),
    })
}

/// The CUDA devices [`install`] registered.
pub fn devices() -> Vec<Device> {
    match install() {
        Probe::Found(d) => d.clone(),
        Probe::None(_) => Vec::new(),
    }
}

/// Opens every device, or says why there is none.
fn probe() -> Result<Vec<Arc<CudaDevice>>, String> {
    use cudarc::driver::{CudaContext, result, sys};
    // SAFETY: only looks for the library.
    if !unsafe { sys::is_culib_present() } {
        return Err("no CUDA driver (libcuda.so) on this machine".into());
    }
    result::init().map_err(|e| format!("the CUDA driver did not start: {e:?}"))?;
    let n = CudaContext::device_count().map_err(|e| format!("cannot count CUDA devices: {e:?}"))?;
    if n < 1 {
        return Err("the CUDA driver sees no GPU".into());
    }
    (0..n as u32)
        .map(|i| CudaDevice::open(i).map_err(|e| e.message))
        .collect()
}

fn register(device: Arc<CudaDevice>) -> anfora_tensor::Result<()> {
    anfora_tensor::device::register_backend(Arc::new(CudaBackend(device.clone())))?;
    let at = device.device();
    for &p in Prim::all() {
        if !kernels::has_kernels(p) {
            continue;
        }
        // A primitive without a CUDA kernel yet runs the CPU's on host copies.
        let kernel = prim_kernel(&device, p).unwrap_or_else(|| kernels::host_fallback(p, at));
        for dtype in DTYPES {
            let key = KernelKey {
                prim: p,
                device: at,
                dtype,
            };
            kernels::register(key, kernel.clone())
                .map_err(|e| TensorError::new(ErrorKind::Runtime, e.to_string()))?;
        }
    }
    let fuser_device = device.clone();
    kernels::register_fuser(
        at,
        Arc::new(move |program: &FusedKernel| {
            let fused = Arc::new(CudaFused::new(fuser_device.clone(), program.clone()).ok()?);
            Some(Kernel::new("cuda", move |args, _| {
                let inputs = tensors(args)?;
                pynum::tensor(fused.run(&inputs)).map(Value::Tensor)
            }))
        }),
    );
    Ok(())
}

/// The CUDA kernel of primitive `p`, if it has one.
fn prim_kernel(device: &Arc<CudaDevice>, p: Prim) -> Option<Kernel> {
    let def = p.def().kernels;
    let device = device.clone();
    if p == Prim::MatMul {
        return Some(Kernel::new("cuda", move |args, _| {
            let [Value::Tensor(a), Value::Tensor(b)] = &args[..] else {
                return Err(type_error("matmul on a CUDA device takes two tensors"));
            };
            pynum::tensor(blas::matmul(&device, a, b)).map(Value::Tensor)
        }));
    }
    if let Some(op) = anfora_ops::family::reduce::reduce_op_of(p) {
        return Some(Kernel::new("cuda", move |args, _| {
            let (x, axes, keepdims) = anfora_ops::family::reduce::reduce_operands(p, args)?;
            let r = reduce::reduce(&device, op, &x, axes.as_deref(), keepdims);
            pynum::tensor(r).map(Value::Tensor)
        }));
    }
    if p == Prim::BroadcastLike {
        return Some(Kernel::new("cuda", move |args, out| match &args[..] {
            [Value::Tensor(d), Value::Tensor(x)] if d.shape() != x.shape() => {
                let shape = pynum::tensor(anfora_tensor::broadcast_shapes(d.shape(), x.shape()))?;
                if shape != x.shape() {
                    return (p.def().eval)(p, args, out);
                }
                let b = pynum::tensor(elementwise::broadcast_to(&device, d, &shape))?;
                pynum::tensor(Tensor::from_device_buffer(Arc::new(b), &shape)).map(Value::Tensor)
            }
            _ => (p.def().eval)(p, args, out),
        }));
    }
    // Gradients composed of other primitives: their reference implementation, whose
    // primitives run where their operands are (`kernels::on_device`).
    if p == Prim::ReduceGrad {
        return Some(Kernel::new("cuda", move |args, out| {
            (p.def().eval)(p, args, out)
        }));
    }
    if p == Prim::Gemm {
        return Some(Kernel::new("cuda", move |args, _| {
            let [
                Value::Tensor(a),
                Value::Tensor(b),
                c,
                Value::Bool(ta),
                Value::Bool(tb),
            ] = &args[..]
            else {
                return Err(type_error(
                    "Gemm on a CUDA device takes (a, b, c, bool, bool)",
                ));
            };
            let c = match c {
                Value::None => None,
                Value::Tensor(c) => Some(c),
                _ => return Err(type_error("Gemm: the accumulator must be a tensor or None")),
            };
            pynum::tensor(blas::gemm(&device, a, b, c, (*ta, *tb))).map(Value::Tensor)
        }));
    }
    let single = def.unary_op().is_some()
        || def.binary_op().is_some()
        || matches!(p, Prim::Where | Prim::Gelu | Prim::Cast);
    // Programs met so far, by their ops and dtypes (scalar values included: a program with
    // another value is built again but finds its kernel compiled, by source).
    let programs: Mutex<HashMap<String, Arc<CudaFused>>> = Mutex::new(HashMap::new());
    single.then(|| {
        Kernel::new("cuda", move |args, _| {
            let (inputs, ops) = one_op_program(p, args)?;
            let dtypes: Vec<DType> = inputs.iter().map(Tensor::dtype).collect();
            let key = format!("{dtypes:?}{ops:?}");
            let known = programs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&key)
                .cloned();
            if let Some(fused) = known {
                return pynum::tensor(fused.run(&inputs)).map(Value::Tensor);
            }
            let program = pynum::tensor(FusedKernel::new(&dtypes, ops))?;
            let fused = CudaFused::new(device.clone(), program).map_err(|why| {
                type_error(&format!(
                    "{} of {} on a CUDA device: {why}",
                    p.name(),
                    dtypes
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join(" and ")
                ))
            })?;
            let fused = Arc::new(fused);
            let mut known = programs.lock().unwrap_or_else(|e| e.into_inner());
            // Bounded: a program per scalar value met, dropped all at once past a limit.
            if known.len() >= 4096 {
                known.clear();
            }
            known.insert(key, fused.clone());
            drop(known);
            pynum::tensor(fused.run(&inputs)).map(Value::Tensor)
        })
    })
}

/// One elementwise primitive call as a fused program of one op, and its tensor inputs.
fn one_op_program(p: Prim, args: &[Value]) -> Result<(Vec<Tensor>, Vec<FusedOp>), pynum::PyErr> {
    let mut inputs = Vec::new();
    let operands: Vec<FusedOperand> = args
        .iter()
        .map(|v| match v {
            Value::Tensor(t) => {
                inputs.push(t.clone());
                FusedOperand::Value(inputs.len() as u32 - 1)
            }
            v => FusedOperand::Const(v),
        })
        .collect();
    let mut ops = Vec::new();
    kernels::push_fused_call(p, &operands, inputs.len() as u32, &mut ops).ok_or_else(|| {
        type_error(&format!(
            "{} on a CUDA device takes tensors and numbers",
            p.name()
        ))
    })?;
    Ok((inputs, ops))
}

fn tensors(args: &[Value]) -> Result<Vec<Tensor>, pynum::PyErr> {
    args.iter()
        .map(|v| match v {
            Value::Tensor(t) => Ok(t.clone()),
            _ => Err(type_error("a fused CUDA kernel takes tensors")),
        })
        .collect()
}

fn type_error(message: &str) -> pynum::PyErr {
    ("TypeError", message.to_string())
}

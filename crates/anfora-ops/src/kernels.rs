//! The kernel registry: how a primitive finds the code that runs it.
//!
//! Kernels are keyed by (primitive, device, dtype). The dtype is the dispatch dtype of a call:
//! that of its first tensor argument (for `Where`, the first after the condition); a call with
//! no tensor argument is plain Python and has no kernel. The lower stage resolves each
//! primitive call once, for the device the program is compiled for, and the instruction keeps
//! the kernel it found: a run never looks anything up.
//!
//! The CPU backend's kernels (this crate's `ops`, which call `anfora-tensor`) are registered
//! for every tensor primitive and dtype when the registry is first used. Registering a kernel
//! under a key replaces what was there, for programs compiled afterwards: that is how a custom
//! CPU kernel is installed, and how a new device ([`anfora_tensor::device::register_backend`])
//! gets its kernels. The reference VM does not use the registry: it stays the oracle of the
//! built-in semantics, against which a registered kernel can be checked.

use std::collections::HashMap;
use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use crate::family::array::moved;
use crate::prim::Prim;
use anfora_tensor::DType;
use anfora_tensor::device::{self, Device, DeviceKind};
use anfora_tensor::fused::{FusedKernel, FusedOp};

use crate::value::{OpResult, Value};

/// A kernel's code: it receives the call's arguments (already bound; a tensor may be moved out
/// and its buffer reused) and returns the result or a Python exception.
pub type KernelFn = dyn Fn(&mut [Value], &mut dyn Write) -> OpResult + Send + Sync;

/// A registered kernel: one pointer, so an instruction holding one stays small.
#[derive(Clone)]
pub struct Kernel(Arc<KernelData>);

struct KernelData {
    name: Box<str>,
    builtin: bool,
    run: Box<KernelFn>,
}

impl Kernel {
    /// A kernel named `name` (shown in program dumps).
    pub fn new(
        name: &str,
        run: impl Fn(&mut [Value], &mut dyn Write) -> OpResult + Send + Sync + 'static,
    ) -> Kernel {
        Kernel(Arc::new(KernelData {
            name: name.into(),
            builtin: false,
            run: Box::new(run),
        }))
    }

    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// Whether this is the CPU backend's own kernel (which fused kernels may stand in for).
    pub fn is_builtin(&self) -> bool {
        self.0.builtin
    }

    #[inline]
    pub fn call(&self, args: &mut [Value], out: &mut dyn Write) -> OpResult {
        (self.0.run)(args, out)
    }
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kernel({})", self.0.name)
    }
}

/// What a kernel is registered under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelKey {
    pub prim: Prim,
    pub device: Device,
    pub dtype: DType,
}

impl fmt::Display for KernelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} on {} for {}",
            self.prim.name(),
            self.device,
            self.dtype
        )
    }
}

/// Why a registration was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    #[error("{0}")]
    NoBackend(String),
    #[error("the backend of {device} does not support {dtype}")]
    Unsupported { device: Device, dtype: DType },
    #[error(
        "{0} has no kernels: only primitives that compute on tensors dispatch by device and dtype"
    )]
    NotATensorPrimitive(&'static str),
}

/// Whether calls of `p` on tensors dispatch to a kernel (its declaration says).
pub fn has_kernels(p: Prim) -> bool {
    p.def().kernels.dispatch()
}

/// The dispatch dtype of a call of `p` whose arguments have these dtypes (`None` for an
/// argument that is not a tensor).
pub fn dispatch_dtype(p: Prim, arg_dtypes: &[Option<DType>]) -> Option<DType> {
    // `where`'s condition is a bool mask; its data are the other two.
    let skip = usize::from(p == Prim::Where);
    arg_dtypes.iter().skip(skip).flatten().next().copied()
}

type Table = HashMap<KernelKey, Kernel>;

fn table() -> &'static RwLock<Table> {
    static TABLE: OnceLock<RwLock<Table>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Table::new();
        for &p in Prim::all().iter().filter(|&&p| has_kernels(p)) {
            let kernel = Kernel(Arc::new(KernelData {
                name: "cpu".into(),
                builtin: true,
                run: Box::new(move |args: &mut [Value], out: &mut dyn Write| {
                    crate::inplace::prim(p, args, out)
                }),
            }));
            for dtype in DType::ALL {
                let key = KernelKey {
                    prim: p,
                    device: Device::CPU,
                    dtype,
                };
                t.insert(key, kernel.clone());
            }
        }
        RwLock::new(t)
    })
}

/// Registers `kernel` under `key` for programs compiled from now on; returns the kernel it
/// replaces (to restore it later with another call).
pub fn register(key: KernelKey, kernel: Kernel) -> Result<Option<Kernel>, KernelError> {
    if !has_kernels(key.prim) {
        return Err(KernelError::NotATensorPrimitive(key.prim.name()));
    }
    let backend = device::backend(key.device).map_err(|e| KernelError::NoBackend(e.message))?;
    if !backend.supports(key.dtype) {
        return Err(KernelError::Unsupported {
            device: key.device,
            dtype: key.dtype,
        });
    }
    let mut t = table().write().unwrap_or_else(|e| e.into_inner());
    Ok(t.insert(key, kernel))
}

/// The kernel registered under `key`.
pub fn find(key: KernelKey) -> Option<Kernel> {
    let t = table().read().unwrap_or_else(|e| e.into_inner());
    t.get(&key).cloned()
}

/// The kernel of `p` on the device its tensor operands are on, when that is not the CPU and
/// the device has one: eager calls (Python operators, the optimizers' updates, programs
/// compiled for the CPU) on device tensors compute where the tensors are, as PyTorch's do.
/// Without such a kernel the CPU's runs, reading the tensors through host copies.
pub fn on_device(p: Prim, args: &[Value]) -> Option<Kernel> {
    let device = args.iter().find_map(|v| match v {
        Value::Tensor(t) if t.device_buffer().is_some() => Some(t.device()),
        _ => None,
    })?;
    if !has_kernels(p) {
        return None;
    }
    let dtypes: Vec<Option<DType>> = args
        .iter()
        .map(|v| match v {
            Value::Tensor(t) => Some(t.dtype()),
            _ => None,
        })
        .collect();
    let dtype = dispatch_dtype(p, &dtypes)?;
    find(KernelKey {
        prim: p,
        device,
        dtype,
    })
}

/// A kernel for `device` that runs the CPU's kernel of `p` on host copies of its tensor
/// operands and moves the tensors of its result to `device`: how a device covers the
/// primitives it has no kernel of its own for, as MindSpore falls back to CPU kernels on a
/// GPU. Correct, but each call copies its operands both ways; dumps name it `host`.
pub fn host_fallback(p: Prim, device: Device) -> Kernel {
    Kernel::new("host", move |args: &mut [Value], out: &mut dyn Write| {
        for a in args.iter_mut() {
            *a = moved(a, Device::CPU)?;
        }
        let r = (p.def().eval)(p, args, out)?;
        moved(&r, device)
    })
}

/// The keys registered for `device`, sorted by primitive name and dtype.
pub fn registered(device: Device) -> Vec<KernelKey> {
    let t = table().read().unwrap_or_else(|e| e.into_inner());
    let mut keys: Vec<KernelKey> = t.keys().filter(|k| k.device == device).copied().collect();
    keys.sort_by(|a, b| (a.prim.name(), a.dtype).cmp(&(b.prim.name(), b.dtype)));
    keys
}

/// An operand of a primitive call in a fused elementwise program.
#[derive(Clone, Copy, Debug)]
pub enum FusedOperand<'a> {
    /// A value of the program: input `i`, or (from `n_inputs` on) an earlier op's result.
    Value(u32),
    /// A constant argument: a Python number, `gelu`'s `approximate`, `cast`'s dtype.
    Const(&'a Value),
}

/// Appends to `ops` the fused form of a call of `p` on `operands` (its scalars, then the op),
/// numbering values with the program's `n_inputs` inputs first. `None` for a call a fused
/// program cannot express (then `ops` is to be discarded). The lower stage builds its fused
/// chains with it, and a device's elementwise kernels their programs of one op.
pub fn push_fused_call(
    p: Prim,
    operands: &[FusedOperand],
    n_inputs: u32,
    ops: &mut Vec<FusedOp>,
) -> Option<()> {
    use anfora_tensor::UnaryOp;
    let op = match (p, operands) {
        // gelu's `approximate` picks the kernel function.
        (
            Prim::Gelu,
            &[
                FusedOperand::Value(x),
                FusedOperand::Const(Value::Bool(approx)),
            ],
        ) => {
            let u = if *approx {
                UnaryOp::GeluTanh
            } else {
                UnaryOp::Gelu
            };
            FusedOp::Unary(u, x)
        }
        (Prim::Cast, &[FusedOperand::Value(x), FusedOperand::Const(Value::DType(d))]) => {
            FusedOp::Cast(*d, x)
        }
        _ => {
            let mut ids = Vec::with_capacity(operands.len());
            let mut scalars = 0;
            for o in operands {
                ids.push(match o {
                    FusedOperand::Value(i) => *i,
                    FusedOperand::Const(v) => {
                        ops.push(FusedOp::Scalar(v.as_scalar()?));
                        scalars += 1;
                        n_inputs + ops.len() as u32 - 1
                    }
                });
            }
            let k = p.def().kernels;
            match (&ids[..], k.binary_op(), k.unary_op()) {
                (&[a, b], Some(op), _) if scalars < 2 => FusedOp::Binary(op, a, b),
                (&[a], _, Some(op)) if scalars == 0 => FusedOp::Unary(op, a),
                (&[c, x, y], _, _) if p == Prim::Where && scalars == 0 => FusedOp::Where(c, x, y),
                _ => return None,
            }
        }
    };
    ops.push(op);
    Some(())
}

/// Builds a device's one-pass kernel for a fused elementwise program: the kernel takes the
/// program's inputs (tensors of its input dtypes) and returns its output. `None` where the
/// device cannot run that program in one pass (its steps then call their kernels one by one).
pub type Fuser = dyn Fn(&FusedKernel) -> Option<Kernel> + Send + Sync;

fn fusers() -> &'static RwLock<HashMap<Device, Arc<Fuser>>> {
    static FUSERS: OnceLock<RwLock<HashMap<Device, Arc<Fuser>>>> = OnceLock::new();
    FUSERS.get_or_init(|| RwLock::new(HashMap::new()))
}

/// Registers how `device` runs fused elementwise programs (for programs compiled from now
/// on). The CPU's one-pass kernel is built in.
pub fn register_fuser(device: Device, fuser: Arc<Fuser>) {
    let mut f = fusers().write().unwrap_or_else(|e| e.into_inner());
    f.insert(device, fuser);
}

/// `device`'s one-pass kernel for `program`, when it has a fuser that takes it.
pub fn fused_kernel(device: Device, program: &FusedKernel) -> Option<Kernel> {
    let fuser = fusers()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&device)
        .cloned()?;
    fuser(program)
}

/// The arithmetic float32 matrix products may use on devices that offer a faster one
/// (process-wide, as JAX's `jax_default_matmul_precision` and PyTorch's
/// `set_float32_matmul_precision`). The CPU always computes in float32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatmulPrecision {
    /// Full float32 (the default).
    Float32,
    /// TensorFloat-32 tensor cores: float32 range, 10-bit mantissas in the products.
    TensorFloat32,
}

impl MatmulPrecision {
    /// Parses the names JAX and PyTorch use: `float32`/`highest`, `tf32`/`tensorfloat32`/
    /// `high`.
    pub fn parse(name: &str) -> Option<MatmulPrecision> {
        match name.to_ascii_lowercase().as_str() {
            "float32" | "fp32" | "highest" => Some(MatmulPrecision::Float32),
            "tf32" | "tensorfloat32" | "high" => Some(MatmulPrecision::TensorFloat32),
            _ => None,
        }
    }
}

static TF32: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets the precision of float32 matrix products from now on.
pub fn set_matmul_precision(p: MatmulPrecision) {
    TF32.store(p == MatmulPrecision::TensorFloat32, Ordering::Release);
}

pub fn matmul_precision() -> MatmulPrecision {
    if TF32.load(Ordering::Acquire) {
        MatmulPrecision::TensorFloat32
    } else {
        MatmulPrecision::Float32
    }
}

/// The default device, packed as `kind << 32 | index` (read on every cached call, so no lock).
static CURRENT: AtomicU64 = AtomicU64::new(0);

fn pack(d: Device) -> u64 {
    let kind: u64 = match d.kind {
        DeviceKind::Cpu => 0,
        DeviceKind::Cuda => 1,
    };
    kind << 32 | u64::from(d.index)
}

/// The device programs are compiled for (process-wide, as MindSpore's `device_target`).
pub fn default_device() -> Device {
    let v = CURRENT.load(Ordering::Acquire);
    let kind = match v >> 32 {
        0 => DeviceKind::Cpu,
        _ => DeviceKind::Cuda,
    };
    Device {
        kind,
        index: v as u32,
    }
}

/// Sets the device programs are compiled for; an error when it has no backend. Programs
/// already compiled keep their device.
pub fn set_default_device(device: Device) -> Result<(), KernelError> {
    device::backend(device).map_err(|e| KernelError::NoBackend(e.message))?;
    CURRENT.store(pack(device), Ordering::Release);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use anfora_tensor::Tensor;

    #[test]
    fn every_tensor_primitive_has_a_cpu_kernel_for_every_dtype() {
        let keys = registered(Device::CPU);
        let n = Prim::all().iter().filter(|&&p| has_kernels(p)).count();
        assert_eq!(keys.len(), n * DType::ALL.len());
        let k = find(KernelKey {
            prim: Prim::Tanh,
            device: Device::CPU,
            dtype: DType::F32,
        })
        .unwrap();
        assert!(k.is_builtin());
        let x = Tensor::from_f32(vec![0.5, -1.0], &[2]).unwrap();
        let mut args = [Value::Tensor(x.clone())];
        let got = k.call(&mut args, &mut std::io::sink()).unwrap();
        let want = Tensor::unary(anfora_tensor::UnaryOp::Tanh, &x).unwrap();
        assert!(got.into_tensor().unwrap().same_as(&want));
    }

    #[test]
    fn registration_is_refused_for_non_tensor_primitives_and_unknown_devices() {
        let k = Kernel::new("mine", |_, _| Ok(Value::None));
        let key = KernelKey {
            prim: Prim::Print,
            device: Device::CPU,
            dtype: DType::F32,
        };
        assert_eq!(
            register(key, k.clone()).unwrap_err().to_string(),
            "Print has no kernels: only primitives that compute on tensors dispatch by device and dtype"
        );
        let cuda = Device::parse("cuda:1").unwrap();
        let key = KernelKey {
            prim: Prim::Exp,
            device: cuda,
            dtype: DType::F32,
        };
        assert_eq!(
            register(key, k).unwrap_err().to_string(),
            "no backend is registered for device 'cuda:1' (available: cpu)"
        );
        assert!(set_default_device(cuda).is_err());
        assert_eq!(default_device(), Device::CPU);
    }

    #[test]
    fn a_kernel_is_one_pointer() {
        // Instructions hold an `Option<Kernel>`: it must not grow them.
        assert_eq!(std::mem::size_of::<Option<Kernel>>(), 8);
    }

    #[test]
    fn dispatch_dtype_is_the_first_tensor_argument_after_where_s_condition() {
        use DType::*;
        assert_eq!(dispatch_dtype(Prim::Add, &[None, Some(F64)]), Some(F64));
        assert_eq!(dispatch_dtype(Prim::Add, &[None, None]), None);
        assert_eq!(
            dispatch_dtype(Prim::Where, &[Some(Bool), Some(I32), Some(F32)]),
            Some(I32)
        );
    }
}

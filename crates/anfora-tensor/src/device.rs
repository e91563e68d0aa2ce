//! Devices and backends: the southbound interface of seed 001.
//!
//! A [`Device`] names where kernels run (`cpu`, `cuda:0`, ...). A [`Backend`] is the
//! implementation behind one device: it says what the device can hold and compute, and is the
//! owner of that device's kernels (registered, per primitive and dtype, in the VM's kernel
//! registry). The CPU backend is built in and always present; another device is added by
//! registering a backend for it ([`register_backend`]) and then its kernels, without any change
//! to the compiler.

use std::fmt;
use std::sync::{Arc, RwLock};

use crate::{DType, ErrorKind, Result, Tensor, TensorError};

/// The kind of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeviceKind {
    Cpu,
    Cuda,
}

impl DeviceKind {
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Cuda => "cuda",
        }
    }
}

/// A device: its kind and its index among devices of that kind (always 0 for the CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Device {
    pub kind: DeviceKind,
    pub index: u32,
}

impl Device {
    pub const CPU: Device = Device {
        kind: DeviceKind::Cpu,
        index: 0,
    };

    /// Parses `cpu`, `cuda` (index 0) or `cuda:N`, as PyTorch spells devices (MindSpore's
    /// `CPU` and `GPU` are accepted too). A ValueError names the accepted forms.
    pub fn parse(text: &str) -> Result<Device> {
        let bad = || {
            TensorError::new(
                ErrorKind::Value,
                format!(
                    "unknown device '{text}': expected 'cpu', 'cuda' or 'cuda:N' (N a device index)"
                ),
            )
        };
        let (kind, index) = match text.split_once(':') {
            Some((k, i)) => (k, Some(i)),
            None => (text, None),
        };
        let kind = match kind.to_ascii_lowercase().as_str() {
            "cpu" => DeviceKind::Cpu,
            "cuda" | "gpu" => DeviceKind::Cuda,
            _ => return Err(bad()),
        };
        let index = match index {
            None => 0,
            Some(i) => i.parse::<u32>().map_err(|_| bad())?,
        };
        if kind == DeviceKind::Cpu && index != 0 {
            return Err(bad());
        }
        Ok(Device { kind, index })
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            DeviceKind::Cpu => f.write_str("cpu"),
            kind => write!(f, "{}:{}", kind.name(), self.index),
        }
    }
}

/// The implementation behind one device.
pub trait Backend: Send + Sync + 'static {
    /// The device this backend drives.
    fn device(&self) -> Device;
    /// One line on what the backend runs on (for `anfora info` and error messages).
    fn describe(&self) -> String;
    /// Whether tensors of `dtype` can live and be computed on this device.
    fn supports(&self, dtype: DType) -> bool;
    /// How many threads (or streams) its kernels may use.
    fn parallelism(&self) -> usize;
    /// Waits until all work queued on the device is done. Kernels of a synchronous backend
    /// (the CPU) are done when they return.
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    /// A buffer on this device holding `len` elements of `dtype` copied from `bytes` (their
    /// host representation, bools as bytes 0 and 1). A backend whose tensors live in host
    /// memory (the CPU's) is never asked.
    fn upload(&self, bytes: &[u8], dtype: DType, len: usize) -> Result<Arc<dyn DeviceBuffer>> {
        let _ = (bytes, len);
        Err(TensorError::new(
            ErrorKind::Type,
            format!("device '{}' cannot hold {dtype} tensors", self.device()),
        ))
    }
}

/// Elements of one dtype in a device's memory: what a tensor on a device other than the CPU
/// holds. The buffer is never written once a tensor holds it.
pub trait DeviceBuffer: Send + Sync + fmt::Debug + 'static {
    fn device(&self) -> Device;
    fn dtype(&self) -> DType;
    /// The number of elements.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Copies the elements into `dst` (`len` times the dtype's size bytes), waiting for the
    /// work that writes them.
    fn download(&self, dst: &mut [u8]) -> Result<()>;
    /// The backend's own type, for its kernels.
    fn as_any(&self) -> &dyn std::any::Any;
}

impl Tensor {
    /// The device the elements are on.
    pub fn device(&self) -> Device {
        self.device_buffer().map_or(Device::CPU, |b| b.device())
    }

    /// This tensor on `device`: itself when it is there already, else a copy (to the host for
    /// the CPU, else uploaded by the device's backend). PyTorch's `Tensor.to(device)`.
    pub fn to_device(&self, device: Device) -> Result<Tensor> {
        if self.device() == device {
            return Ok(self.clone());
        }
        if device == Device::CPU {
            return self.contiguous_host();
        }
        let b = backend(device)?;
        if !b.supports(self.dtype()) {
            return Err(TensorError::new(
                ErrorKind::Type,
                format!(
                    "device '{device}' does not support {} tensors",
                    self.dtype()
                ),
            ));
        }
        let buffer = b.upload(&self.host_bytes()?, self.dtype(), self.numel())?;
        Tensor::from_device_buffer(buffer, self.shape())
    }
}

/// The built-in CPU backend: the kernels of this crate, vectorized with `pulp` (the widest
/// instruction set the machine has, chosen at run time) and split over rayon's threads above
/// per-kernel size thresholds.
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn device(&self) -> Device {
        Device::CPU
    }

    fn describe(&self) -> String {
        format!(
            "cpu: {} threads, SIMD {}",
            self.parallelism(),
            crate::loops::simd_name()
        )
    }

    fn supports(&self, _dtype: DType) -> bool {
        true
    }

    fn parallelism(&self) -> usize {
        rayon::current_num_threads()
    }
}

fn registry() -> &'static RwLock<Vec<Arc<dyn Backend>>> {
    static BACKENDS: std::sync::OnceLock<RwLock<Vec<Arc<dyn Backend>>>> =
        std::sync::OnceLock::new();
    BACKENDS.get_or_init(|| RwLock::new(vec![Arc::new(CpuBackend)]))
}

/// Adds the backend of a new device. A ValueError when that device already has one (the CPU
/// always has).
pub fn register_backend(backend: Arc<dyn Backend>) -> Result<()> {
    let mut list = registry().write().unwrap_or_else(|e| e.into_inner());
    let device = backend.device();
    if list.iter().any(|b| b.device() == device) {
        return Err(TensorError::new(
            ErrorKind::Value,
            format!("device '{device}' already has a backend"),
        ));
    }
    list.push(backend);
    Ok(())
}

/// The backend of `device`, or a ValueError naming the devices that have one.
pub fn backend(device: Device) -> Result<Arc<dyn Backend>> {
    let list = registry().read().unwrap_or_else(|e| e.into_inner());
    list.iter()
        .find(|b| b.device() == device)
        .cloned()
        .ok_or_else(|| {
            let known: Vec<String> = list.iter().map(|b| b.device().to_string()).collect();
            TensorError::new(
                ErrorKind::Value,
                format!(
                    "no backend is registered for device '{device}' (available: {})",
                    known.join(", ")
                ),
            )
        })
}

/// The devices that have a backend, in registration order (the CPU first).
pub fn devices() -> Vec<Device> {
    let list = registry().read().unwrap_or_else(|e| e.into_inner());
    list.iter().map(|b| b.device()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_parse_and_print_as_pytorch_spells_them() {
        for (text, shown) in [
            ("cpu", "cpu"),
            ("CPU", "cpu"),
            ("cuda", "cuda:0"),
            ("GPU", "cuda:0"),
            ("cuda:3", "cuda:3"),
        ] {
            assert_eq!(Device::parse(text).unwrap().to_string(), shown);
        }
        for bad in ["", "tpu", "cuda:", "cuda:-1", "cpu:1", "cuda:0:1"] {
            let e = Device::parse(bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Value);
            assert_eq!(
                e.message,
                format!(
                    "unknown device '{bad}': expected 'cpu', 'cuda' or 'cuda:N' (N a device index)"
                )
            );
        }
    }

    #[test]
    fn the_cpu_backend_is_always_there() {
        let cpu = backend(Device::CPU).unwrap();
        assert_eq!(cpu.device(), Device::CPU);
        assert!(cpu.supports(DType::Bool) && cpu.supports(DType::F64));
        assert!(cpu.parallelism() >= 1);
        assert!(cpu.describe().starts_with("cpu: "));
        assert!(cpu.synchronize().is_ok());
        assert!(devices().contains(&Device::CPU));
        assert_eq!(
            register_backend(Arc::new(CpuBackend)).unwrap_err().message,
            "device 'cpu' already has a backend"
        );
    }
}

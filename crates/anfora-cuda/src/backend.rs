//! One CUDA device behind the southbound interface: its context and stream, its buffers, and
//! the kernels compiled for it.
//!
//! Every kernel of a device runs on the device's one stream, so work is ordered without
//! events: a compiled call queues its launches and the host waits only where it reads a result
//! (`DeviceBuffer::download`, `Backend::synchronize`). Buffers come from the stream-ordered
//! allocator, whose pool keeps freed memory for reuse (its release threshold is raised to
//! the maximum), so a steady-state call allocates nothing from the driver.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anfora_tensor::device::{Backend, DeviceBuffer};
use anfora_tensor::{DType, Device, DeviceKind, ErrorKind, Result, TensorError};
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, sys};

/// A driver, NVRTC or cuBLAS failure as the tensor error every kernel returns.
pub(crate) fn device_error(what: &str, e: impl std::fmt::Debug) -> TensorError {
    TensorError::new(ErrorKind::Runtime, format!("CUDA: {what} failed: {e:?}"))
}

/// A CUDA device: context, stream, compiled kernels.
pub struct CudaDevice {
    pub(crate) index: u32,
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    name: String,
    capability: (i32, i32),
    pub(crate) sm_count: u32,
    /// Kernels compiled for this device, by source.
    kernels: Mutex<HashMap<String, CudaFunction>>,
    /// The same, by a short key (reductions, broadcasts: no source is written to find them).
    named: Mutex<HashMap<String, CudaFunction>>,
    pub(crate) blas: Mutex<Option<cudarc::cublas::CudaBlas>>,
}

impl std::fmt::Debug for CudaDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cuda:{} ({})", self.index, self.name)
    }
}

impl CudaDevice {
    /// Opens device `index`: its primary context, the default stream, a memory pool that
    /// keeps what is freed.
    pub(crate) fn open(index: u32) -> Result<Arc<CudaDevice>> {
        let ctx =
            CudaContext::new(index as usize).map_err(|e| device_error("opening the device", e))?;
        // One stream per device orders all work: the per-buffer events cudarc records for
        // multi-stream use would only cost time.
        unsafe { ctx.disable_event_tracking() };
        keep_freed_memory(&ctx);
        let name = ctx
            .name()
            .map_err(|e| device_error("naming the device", e))?;
        let capability = ctx
            .compute_capability()
            .map_err(|e| device_error("reading the compute capability", e))?;
        let sm_count = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(|e| device_error("reading the multiprocessor count", e))?;
        let stream = ctx.default_stream();
        Ok(Arc::new(CudaDevice {
            index,
            ctx,
            stream,
            name,
            capability,
            sm_count: sm_count.max(1) as u32,
            kernels: Mutex::new(HashMap::new()),
            named: Mutex::new(HashMap::new()),
            blas: Mutex::new(None),
        }))
    }

    pub fn device(&self) -> Device {
        Device {
            kind: DeviceKind::Cuda,
            index: self.index,
        }
    }

    /// The kernel known as `key` (a short name of what it computes): its CUDA C from
    /// `source` compiled by NVRTC on first use, then kept.
    pub(crate) fn kernel_for(
        &self,
        key: &str,
        source: impl FnOnce() -> Result<String>,
        name: &str,
    ) -> Result<CudaFunction> {
        if let Some(f) = self.lock_named().get(key) {
            return Ok(f.clone());
        }
        let f = self.kernel(&source()?, name)?;
        self.lock_named().insert(key.to_string(), f.clone());
        Ok(f)
    }

    fn lock_named(&self) -> std::sync::MutexGuard<'_, HashMap<String, CudaFunction>> {
        self.named.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The kernel `name` of CUDA C `source`, compiled by NVRTC on first use and kept.
    pub(crate) fn kernel(&self, source: &str, name: &str) -> Result<CudaFunction> {
        let mut kernels = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = kernels.get(source) {
            return Ok(f.clone());
        }
        let arch: &'static str = match self.capability {
            (9, 0) => "compute_90",
            (8, 0) => "compute_80",
            (8, 6) => "compute_86",
            (8, 9) => "compute_89",
            (10, 0) => "compute_100",
            (12, 0) => "compute_120",
            (maj, min) => Box::leak(format!("compute_{maj}{min}").into_boxed_str()),
        };
        let opts = cudarc::nvrtc::CompileOptions {
            arch: Some(arch),
            // No contraction into fused multiply-adds: each operation rounds as on the CPU.
            fmad: Some(false),
            ..Default::default()
        };
        let ptx = cudarc::nvrtc::compile_ptx_with_opts(source, opts).map_err(|e| {
            TensorError::new(
                ErrorKind::Runtime,
                format!("CUDA: NVRTC could not compile a generated kernel: {e}"),
            )
        })?;
        let module = self
            .ctx
            .load_module(ptx)
            .map_err(|e| device_error("loading a compiled kernel", e))?;
        let f = module
            .load_function(name)
            .map_err(|e| device_error("finding a compiled kernel", e))?;
        kernels.insert(source.to_string(), f.clone());
        Ok(f)
    }

    /// A buffer of `len` elements of `dtype`, its contents unset.
    pub(crate) fn alloc(self: &Arc<Self>, dtype: DType, len: usize) -> Result<CudaBuffer> {
        let bytes = len
            .checked_mul(dtype.size_of())
            .ok_or_else(|| too_large(dtype, len))?;
        // SAFETY: every kernel writes all of its output before anything reads it.
        let slice = unsafe { self.stream.alloc::<u8>(bytes.max(1)) }.map_err(|e| {
            TensorError::new(
                ErrorKind::Memory,
                format!(
                    "CUDA: cannot allocate {bytes} bytes on cuda:{}: {e:?}",
                    self.index
                ),
            )
        })?;
        Ok(CudaBuffer {
            device: self.clone(),
            dtype,
            len,
            slice,
        })
    }
}

fn too_large(dtype: DType, len: usize) -> TensorError {
    TensorError::new(
        ErrorKind::Memory,
        format!("a buffer of {len} {dtype} elements does not fit in memory"),
    )
}

/// Raises the release threshold of the device's default memory pool, so that memory freed
/// by the stream-ordered allocator stays in the pool (a caching allocator) instead of going
/// back to the driver at each synchronization. Without a pool nothing changes.
fn keep_freed_memory(ctx: &Arc<CudaContext>) {
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: plain driver calls on a valid device; failures leave the default behaviour.
    unsafe {
        if sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) == sys::CUresult::CUDA_SUCCESS
        {
            let mut threshold: u64 = u64::MAX;
            let _ = sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut threshold as *mut u64).cast(),
            );
        }
    }
}

/// Elements on a CUDA device.
pub struct CudaBuffer {
    pub(crate) device: Arc<CudaDevice>,
    dtype: DType,
    len: usize,
    pub(crate) slice: CudaSlice<u8>,
}

impl std::fmt::Debug for CudaBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CudaBuffer({} x {} on cuda:{})",
            self.len, self.dtype, self.device.index
        )
    }
}

impl DeviceBuffer for CudaBuffer {
    fn device(&self) -> Device {
        self.device.device()
    }

    fn dtype(&self) -> DType {
        self.dtype
    }

    fn len(&self) -> usize {
        self.len
    }

    fn download(&self, dst: &mut [u8]) -> Result<()> {
        let n = self.len * self.dtype.size_of();
        if dst.len() != n {
            return Err(TensorError::new(
                ErrorKind::Value,
                format!("a download of {n} bytes into {} bytes", dst.len()),
            ));
        }
        if n == 0 {
            return Ok(());
        }
        let s = &self.device.stream;
        s.memcpy_dtoh(&self.slice.slice(..n), dst)
            .map_err(|e| device_error("copying to the host", e))?;
        s.synchronize()
            .map_err(|e| device_error("waiting for the device", e))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The backend of one CUDA device.
pub struct CudaBackend(pub(crate) Arc<CudaDevice>);

impl Backend for CudaBackend {
    fn device(&self) -> Device {
        self.0.device()
    }

    fn describe(&self) -> String {
        let d = &self.0;
        let (maj, min) = d.capability;
        let mem = d.ctx.total_mem().unwrap_or(0) as f64 / (1u64 << 30) as f64;
        format!(
            "cuda:{}: {}, compute capability {maj}.{min}, {} multiprocessors, {mem:.0} GiB",
            d.index, d.name, d.sm_count
        )
    }

    fn supports(&self, dtype: DType) -> bool {
        !dtype.is_half()
    }

    fn parallelism(&self) -> usize {
        self.0.sm_count as usize
    }

    fn synchronize(&self) -> Result<()> {
        self.0
            .stream
            .synchronize()
            .map_err(|e| device_error("waiting for the device", e))
    }

    fn upload(&self, bytes: &[u8], dtype: DType, len: usize) -> Result<Arc<dyn DeviceBuffer>> {
        let mut buf = self.0.alloc(dtype, len)?;
        if !bytes.is_empty() {
            self.0
                .stream
                .memcpy_htod(bytes, &mut buf.slice.slice_mut(..bytes.len()))
                .map_err(|e| device_error("copying to the device", e))?;
        }
        Ok(Arc::new(buf))
    }
}

/// The CUDA buffer of a tensor on `device` (uploading it when it is elsewhere).
pub(crate) fn on_device(
    device: &Arc<CudaDevice>,
    t: &anfora_tensor::Tensor,
) -> Result<(anfora_tensor::Tensor, Arc<dyn DeviceBuffer>)> {
    let t = t.to_device(device.device())?;
    let buf = t
        .device_buffer()
        .cloned()
        .expect("a tensor on a CUDA device holds a device buffer");
    Ok((t, buf))
}

/// The CUDA buffer behind a device buffer of this crate.
pub(crate) fn cuda_buffer(b: &dyn DeviceBuffer) -> &CudaBuffer {
    b.as_any()
        .downcast_ref::<CudaBuffer>()
        .expect("buffers on CUDA devices are this crate's")
}

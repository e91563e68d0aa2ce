//! Elementwise kernels: a fused program (or one elementwise primitive, as a program of one
//! op) compiled to CUDA C and launched over the broadcast output.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anfora_tensor::fused::{Const, FusedKernel, Slot};
use anfora_tensor::{ErrorKind, Result, Tensor, TensorError, broadcast_shapes_n};
use cudarc::driver::{DeviceRepr, LaunchConfig, PushKernelArg};

use crate::backend::{CudaBuffer, CudaDevice, cuda_buffer, device_error, on_device};
use crate::codegen::{self, Access, KERNEL_NAME, MAX_RANK, Unsupported};

/// Dimensions or strides, by value as a kernel argument (the generated `struct Dims`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Dims {
    pub(crate) v: [i64; MAX_RANK],
}

// SAFETY: a plain array of integers, laid out as the C struct it is passed as.
unsafe impl DeviceRepr for Dims {}

impl Dims {
    /// At most [`MAX_RANK`] sizes or strides, the rest 0.
    pub(crate) fn of<T: Copy + TryInto<i64>>(values: &[T]) -> Dims {
        let mut d = Dims::default();
        for (slot, &v) in d.v.iter_mut().zip(values) {
            *slot = v.try_into().unwrap_or(i64::MAX);
        }
        d
    }

    /// The strides reading a contiguous tensor of `shape` broadcast to `out` (0 along
    /// broadcast axes).
    fn broadcast(shape: &[usize], out: &[usize]) -> Dims {
        Dims::of(&anfora_tensor::broadcast_strides(shape, out))
    }
}

/// A fused program ready to run on one device, with its compiled variants (one per way of
/// reading the inputs).
pub struct CudaFused {
    device: Arc<CudaDevice>,
    program: FusedKernel,
    used: Vec<bool>,
    /// The scalars the kernel takes by value, in order.
    scalars: Vec<Const>,
    compiled: Mutex<HashMap<(Vec<Access>, usize), cudarc::driver::CudaFunction>>,
}

impl CudaFused {
    /// The program on `device`, or why it cannot run there.
    pub fn new(
        device: Arc<CudaDevice>,
        program: FusedKernel,
    ) -> std::result::Result<CudaFused, Unsupported> {
        if program.may_raise() {
            return Err(Unsupported::MayRaise);
        }
        for &d in program
            .input_dtypes()
            .iter()
            .chain(program.insts().iter().map(|i| &i.dtype))
        {
            codegen::memory_type(d)?;
        }
        Ok(CudaFused {
            used: codegen::used_inputs(&program),
            scalars: codegen::scalar_params(&program),
            device,
            program,
            compiled: Mutex::new(HashMap::new()),
        })
    }

    /// Runs the program on `inputs` (tensors of its input dtypes, uploaded when they are not
    /// on the device); the result stays on the device.
    pub fn run(&self, inputs: &[Tensor]) -> Result<Tensor> {
        let k = &self.program;
        if inputs.len() != k.n_inputs() {
            return Err(TensorError::new(
                ErrorKind::Type,
                format!(
                    "a fused kernel of {} inputs got {}",
                    k.n_inputs(),
                    inputs.len()
                ),
            ));
        }
        for (t, &d) in inputs.iter().zip(k.input_dtypes()) {
            if t.dtype() != d {
                return Err(TensorError::new(
                    ErrorKind::Type,
                    format!("a fused kernel for {d} inputs got a {} tensor", t.dtype()),
                ));
            }
        }
        let shape = output_shape(k, inputs)?;
        let n = shape.iter().product::<usize>();
        let out = self.device.alloc(k.output_dtype(), n)?;
        if n == 0 {
            return Tensor::from_device_buffer(Arc::new(out), &shape);
        }
        let access: Vec<Access> = inputs
            .iter()
            .zip(&self.used)
            .map(|(t, &used)| match () {
                _ if !used => Access::Unused,
                _ if t.shape() == shape.as_slice() => Access::Same,
                _ => Access::Strided,
            })
            .collect();
        let rank = shape.len();
        if rank > MAX_RANK && access.contains(&Access::Strided) {
            return Err(TensorError::new(
                ErrorKind::Value,
                format!("CUDA kernels broadcast over at most {MAX_RANK} dimensions"),
            ));
        }
        let f = self.function(&access, rank)?;
        let on: Vec<(Tensor, Arc<dyn anfora_tensor::device::DeviceBuffer>)> = inputs
            .iter()
            .map(|t| on_device(&self.device, t))
            .collect::<Result<_>>()?;
        let dims = Dims::of(&shape);
        let strides: Vec<Dims> = inputs
            .iter()
            .map(|t| Dims::broadcast(t.shape(), &shape))
            .collect();
        let n64 = n as i64;
        let mut out = out;
        let stream = &self.device.stream;
        let mut launch = stream.launch_builder(&f);
        launch.arg(&mut out.slice).arg(&n64).arg(&dims);
        for (i, (_, buf)) in on.iter().enumerate() {
            launch.arg(&cuda_buffer(&**buf).slice);
            if access[i] == Access::Strided {
                launch.arg(&strides[i]);
            }
        }
        for c in &self.scalars {
            match c {
                Const::Bool(v) => launch.arg(v),
                Const::I32(v) => launch.arg(v),
                Const::I64(v) => launch.arg(v),
                Const::F32(v) => launch.arg(v),
                Const::F64(v) => launch.arg(v),
            };
        }
        // SAFETY: the arguments are the generated kernel's parameters, in order and of the
        // types it declares; every buffer holds the elements the kernel indexes.
        unsafe { launch.launch(grid(&self.device, n)) }
            .map_err(|e| device_error("launching a kernel", e))?;
        Tensor::from_device_buffer(Arc::new(out), &shape)
    }

    fn function(&self, access: &[Access], rank: usize) -> Result<cudarc::driver::CudaFunction> {
        let key = (
            access.to_vec(),
            if access.contains(&Access::Strided) {
                rank
            } else {
                0
            },
        );
        let mut compiled = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = compiled.get(&key) {
            return Ok(f.clone());
        }
        let src = codegen::fused_source(&self.program, access, key.1)
            .map_err(|e| TensorError::new(ErrorKind::Type, e.to_string()))?;
        let f = self.device.kernel(&src, KERNEL_NAME)?;
        compiled.insert(key, f.clone());
        Ok(f)
    }
}

/// A new buffer holding `t` broadcast to `shape` (which `t`'s shape broadcasts to, in at
/// most [`MAX_RANK`] dimensions).
pub(crate) fn broadcast_to(
    device: &Arc<CudaDevice>,
    t: &Tensor,
    shape: &[usize],
) -> Result<CudaBuffer> {
    let n: usize = shape.iter().product();
    let mut out = device.alloc(t.dtype(), n)?;
    if n == 0 {
        return Ok(out);
    }
    if shape.len() > MAX_RANK {
        return Err(TensorError::new(
            ErrorKind::Value,
            format!("CUDA kernels broadcast over at most {MAX_RANK} dimensions"),
        ));
    }
    let source = || {
        codegen::broadcast_source(t.dtype())
            .map_err(|e| TensorError::new(ErrorKind::Type, e.to_string()))
    };
    let key = format!("broadcast {}", t.dtype());
    let f = device.kernel_for(&key, source, codegen::BROADCAST_NAME)?;
    let (_, buf) = on_device(device, t)?;
    let dims = Dims::of(shape);
    let strides = Dims::broadcast(t.shape(), shape);
    let (n64, rank) = (n as i64, shape.len() as i32);
    let mut launch = device.stream.launch_builder(&f);
    launch
        .arg(&mut out.slice)
        .arg(&n64)
        .arg(&dims)
        .arg(&cuda_buffer(&*buf).slice)
        .arg(&strides)
        .arg(&rank);
    // SAFETY: the arguments are the kernel's parameters, in order and of its types.
    unsafe { launch.launch(grid(device, n)) }.map_err(|e| device_error("launching a kernel", e))?;
    Ok(out)
}

/// A grid-stride launch over `n` elements: 256 threads a block, at most 32 blocks a
/// multiprocessor.
fn grid(device: &CudaDevice, n: usize) -> LaunchConfig {
    let threads = 256u32;
    let blocks = n
        .div_ceil(threads as usize)
        .min(device.sm_count as usize * 32) as u32;
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The output's shape, with the unfused ops' broadcasting errors.
fn output_shape(k: &FusedKernel, inputs: &[Tensor]) -> Result<Vec<usize>> {
    let mut shapes: Vec<Vec<usize>> = Vec::with_capacity(k.insts().len());
    let shape_of = |s: Slot, shapes: &[Vec<usize>]| -> Vec<usize> {
        match s {
            Slot::Input(i) => inputs[i].shape().to_vec(),
            Slot::Const(_) => Vec::new(),
            Slot::Inst(j) => shapes[j].clone(),
        }
    };
    for inst in k.insts() {
        let args: Vec<Vec<usize>> = inst.args.iter().map(|&s| shape_of(s, &shapes)).collect();
        let refs: Vec<&[usize]> = args.iter().map(Vec::as_slice).collect();
        shapes.push(broadcast_shapes_n(&refs)?);
    }
    Ok(shape_of(k.output_slot(), &shapes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_strides_are_zero_along_broadcast_axes() {
        assert_eq!(Dims::broadcast(&[3, 1], &[2, 3, 4]).v[..3], [0, 1, 0]);
        assert_eq!(Dims::broadcast(&[4], &[2, 3, 4]).v[..3], [0, 0, 1]);
        assert_eq!(Dims::broadcast(&[2, 3, 4], &[2, 3, 4]).v[..3], [12, 4, 1]);
        assert_eq!(Dims::broadcast(&[], &[5]).v[..1], [0]);
        assert_eq!(Dims::of(&[2usize, 3]).v, [2, 3, 0, 0, 0, 0, 0, 0]);
    }
}

//! Reductions over axes (`sum`, `mean`, `max`, `min`, `prod`) on the device, planned by the
//! CPU's rules (`anfora_tensor::reduce_plan`: result shape and dtype, numpy's errors).

use std::sync::Arc;

use anfora_tensor::{ErrorKind, ReduceOp, Result, Tensor, TensorError};
use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::backend::{CudaDevice, cuda_buffer, device_error, on_device};
use crate::codegen::{self, MAX_RANK, REDUCE_NAME, REDUCE_THREADS};
use crate::elementwise::Dims;

pub(crate) fn reduce(
    device: &Arc<CudaDevice>,
    op: ReduceOp,
    x: &Tensor,
    axes: Option<&[i64]>,
    keepdims: bool,
) -> Result<Tensor> {
    let plan = anfora_tensor::reduce_plan(op, x.shape(), x.dtype(), axes, keepdims)?;
    let n_out: usize = plan.shape.iter().product();
    let mut out = device.alloc(plan.acc_dtype, n_out)?;
    if n_out == 0 {
        return Tensor::from_device_buffer(Arc::new(out), &plan.shape);
    }
    if x.ndim() > MAX_RANK {
        return Err(TensorError::new(
            ErrorKind::Value,
            format!("reductions on CUDA devices take at most {MAX_RANK} dimensions"),
        ));
    }
    // The input's axes split into kept and reduced ones, each with its size and stride.
    let strides = anfora_tensor::contiguous_strides(x.shape());
    let (mut kept, mut red) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
    for (k, (&n, &s)) in x.shape().iter().zip(&strides).enumerate() {
        let side = if plan.reduced.get(k).copied().unwrap_or(true) {
            &mut red
        } else {
            &mut kept
        };
        side.0.push(n as i64);
        side.1.push(s as i64);
    }
    let (nk, nr) = (kept.0.len() as i32, red.0.len() as i32);
    let (kept, kept_st, red, red_st) = (
        Dims::of(&kept.0),
        Dims::of(&kept.1),
        Dims::of(&red.0),
        Dims::of(&red.1),
    );
    let source = || {
        codegen::reduce_source(op, x.dtype(), plan.acc_dtype)
            .map_err(|e| TensorError::new(ErrorKind::Type, e.to_string()))
    };
    let key = format!("reduce {op:?} {} {}", x.dtype(), plan.acc_dtype);
    let f = device.kernel_for(&key, source, REDUCE_NAME)?;
    let (_, buf) = on_device(device, x)?;
    let (n_out64, count) = (n_out as i64, plan.count as i64);
    let mut launch = device.stream.launch_builder(&f);
    launch
        .arg(&mut out.slice)
        .arg(&cuda_buffer(&*buf).slice)
        .arg(&n_out64)
        .arg(&count)
        .arg(&kept)
        .arg(&kept_st)
        .arg(&nk)
        .arg(&red)
        .arg(&red_st)
        .arg(&nr);
    let cfg = LaunchConfig {
        grid_dim: (n_out.min(1 << 16) as u32, 1, 1),
        block_dim: (REDUCE_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the arguments are the kernel's parameters, in order and of its types; the
    // offsets it computes stay inside the input's elements.
    unsafe { launch.launch(cfg) }.map_err(|e| device_error("launching a reduction", e))?;
    Tensor::from_device_buffer(Arc::new(out), &plan.shape)
}

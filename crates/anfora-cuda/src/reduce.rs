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
    let (mut kept, mut kept_st, mut red, mut red_st) = (
        Dims::default(),
        Dims::default(),
        Dims::default(),
        Dims::default(),
    );
    let (mut nk, mut nr) = (0usize, 0usize);
    let mut stride = 1i64;
    let mut axes_rev = Vec::new();
    for (k, &n) in x.shape().iter().enumerate().rev() {
        axes_rev.push((k, n as i64, stride));
        stride *= n as i64;
    }
    for &(k, n, s) in axes_rev.iter().rev() {
        if plan.reduced.get(k).copied().unwrap_or(true) {
            (red.v[nr], red_st.v[nr]) = (n, s);
            nr += 1;
        } else {
            (kept.v[nk], kept_st.v[nk]) = (n, s);
            nk += 1;
        }
    }
    let source = || {
        codegen::reduce_source(op, x.dtype(), plan.acc_dtype)
            .map_err(|e| TensorError::new(ErrorKind::Type, e.to_string()))
    };
    let key = format!("reduce {op:?} {} {}", x.dtype(), plan.acc_dtype);
    let f = device.kernel_for(&key, source, REDUCE_NAME)?;
    let (_, buf) = on_device(device, x)?;
    let (n_out64, count) = (n_out as i64, plan.count as i64);
    let (nk, nr) = (nk as i32, nr as i32);
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

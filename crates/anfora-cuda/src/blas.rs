//! Matrix products through cuBLAS, with numpy's `matmul` shape rules.
//!
//! cuBLAS is column-major; a row-major `C = A·B` is computed as the column-major
//! `Cᵀ = Bᵀ·Aᵀ`, which reads the row-major buffers as they are. Float32 products use full
//! float32 arithmetic unless the process-wide `kernels::matmul_precision` allows TensorFloat-32
//! (`set_context(matmul_precision="tf32")`, the switch JAX and PyTorch offer).

use std::sync::Arc;

use anfora_tensor::{DType, ErrorKind, Result, Tensor, TensorError};
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, StridedBatchedConfig, sys as bsys};

use anfora_ops::kernels;

use crate::backend::{CudaBuffer, CudaDevice, cuda_buffer, device_error, on_device};

/// How a `matmul` maps onto one strided-batched product: `batch` products of `m×k` by `k×n`,
/// the operands' batch strides (0: broadcast), and the result's shape.
#[derive(Debug, PartialEq)]
pub(crate) struct Plan {
    pub batch: usize,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    pub stride_a: usize,
    pub stride_b: usize,
    pub shape: Vec<usize>,
}

/// numpy's `matmul` rules for shapes `a` and `b` (the CPU's checks and errors), where they
/// fit one strided-batched product: each operand's batch dimensions are all of the result's
/// or none.
pub(crate) fn plan(a: &[usize], b: &[usize]) -> Result<Plan> {
    let anfora_tensor::MatmulShape {
        batch: batch_shape,
        m,
        k,
        n,
        shape,
    } = anfora_tensor::matmul_plan(a, b)?;
    let batch: usize = batch_shape.iter().product();
    let stride = |dims: &[usize], size: usize| -> Result<usize> {
        let own = &dims[..dims.len().saturating_sub(2)];
        if own.iter().product::<usize>() == 1 {
            Ok(0)
        } else if own == batch_shape.as_slice() {
            Ok(size)
        } else {
            Err(TensorError::new(
                ErrorKind::Value,
                "matmul on CUDA devices broadcasts batch dimensions only when an operand has \
                 all of them or none",
            ))
        }
    };
    Ok(Plan {
        batch,
        m,
        k,
        n,
        stride_a: stride(a, m * k)?,
        stride_b: stride(b, k * n)?,
        shape,
    })
}

/// One strided-batched row-major product `C = op(A)·op(B) (+ C)` over device buffers.
struct Product {
    transpose_a: bool,
    transpose_b: bool,
    m: usize,
    k: usize,
    n: usize,
    /// The row lengths of A's and B's buffers.
    row_a: usize,
    row_b: usize,
    batch: usize,
    stride_a: usize,
    stride_b: usize,
    /// Whether C holds an accumulator to add to.
    accumulate: bool,
}

/// `a @ b` on the device, for float32 or float64 tensors of one dtype.
pub(crate) fn matmul(device: &Arc<CudaDevice>, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dtype() != b.dtype() || !a.dtype().is_float() {
        return Err(TensorError::new(
            ErrorKind::Type,
            format!(
                "matmul on CUDA devices takes two float32 or two float64 tensors, not {} and {}",
                a.dtype(),
                b.dtype()
            ),
        ));
    }
    let p = plan(a.shape(), b.shape())?;
    let mut out = device.alloc(a.dtype(), p.batch * p.m * p.n)?;
    let product = Product {
        transpose_a: false,
        transpose_b: false,
        m: p.m,
        k: p.k,
        n: p.n,
        row_a: p.k,
        row_b: p.n,
        batch: p.batch,
        stride_a: p.stride_a,
        stride_b: p.stride_b,
        accumulate: false,
    };
    run(device, a, b, &mut out, &product)?;
    Tensor::from_device_buffer(Arc::new(out), &p.shape)
}

/// `Gemm(a, b, c, transpose_a, transpose_b)`: `op(a) @ op(b) + c` with the CPU's checks.
pub(crate) fn gemm(
    device: &Arc<CudaDevice>,
    a: &Tensor,
    b: &Tensor,
    c: Option<&Tensor>,
    transposes: (bool, bool),
) -> Result<Tensor> {
    let (m, k, n) = anfora_tensor::gemm_plan(a, b, c, transposes)?;
    let mut out = match c {
        Some(c) => crate::elementwise::broadcast_to(device, c, &[m, n])?,
        None => device.alloc(a.dtype(), m * n)?,
    };
    let product = Product {
        transpose_a: transposes.0,
        transpose_b: transposes.1,
        m,
        k,
        n,
        row_a: a.shape()[1],
        row_b: b.shape()[1],
        batch: 1,
        stride_a: 0,
        stride_b: 0,
        accumulate: c.is_some(),
    };
    run(device, a, b, &mut out, &product)?;
    Tensor::from_device_buffer(Arc::new(out), &[m, n])
}

/// Runs `p` into `out` (which holds the accumulator when `p.accumulate`).
fn run(
    device: &Arc<CudaDevice>,
    a: &Tensor,
    b: &Tensor,
    out: &mut CudaBuffer,
    p: &Product,
) -> Result<()> {
    let lc = p.batch * p.m * p.n;
    if lc == 0 {
        return Ok(());
    }
    if [p.m, p.n, p.k, p.batch, p.row_a, p.row_b]
        .iter()
        .any(|&d| d > i32::MAX as usize)
    {
        return Err(TensorError::new(
            ErrorKind::Value,
            "products on CUDA devices take dimensions below 2**31",
        ));
    }
    let (_, ab) = on_device(device, a)?;
    let (_, bb) = on_device(device, b)?;
    let mut guard = device.blas.lock().unwrap_or_else(|e| e.into_inner());
    if guard.is_none() {
        *guard = Some(
            CudaBlas::new(device.stream.clone()).map_err(|e| device_error("starting cuBLAS", e))?,
        );
    }
    let blas = guard.as_ref().expect("just set");
    let dtype = a.dtype();
    let tf32 = kernels::matmul_precision() == kernels::MatmulPrecision::TensorFloat32;
    let mode = if tf32 && dtype == DType::F32 {
        bsys::cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH
    } else {
        bsys::cublasMath_t::CUBLAS_DEFAULT_MATH
    };
    // SAFETY: a valid handle.
    unsafe { bsys::cublasSetMathMode(*blas.handle(), mode) }
        .result()
        .map_err(|e| device_error("setting cuBLAS's math mode", e))?;
    let (sa, sb) = (cuda_buffer(&*ab), cuda_buffer(&*bb));
    let (la, lb) = (a.numel(), b.numel());
    let beta = if p.accumulate { 1.0 } else { 0.0 };
    // SAFETY: the views cover the buffers' elements, of the dtype they hold; the product's
    // sizes and strides stay inside them.
    let r = unsafe {
        match dtype {
            DType::F32 => {
                let x = sa.slice.transmute::<f32>(la).expect("sized");
                let y = sb.slice.transmute::<f32>(lb).expect("sized");
                let mut c = out.slice.transmute_mut::<f32>(lc).expect("sized");
                blas.gemm_strided_batched(batched(p, 1.0f32, beta as f32), &y, &x, &mut c)
            }
            _ => {
                let x = sa.slice.transmute::<f64>(la).expect("sized");
                let y = sb.slice.transmute::<f64>(lb).expect("sized");
                let mut c = out.slice.transmute_mut::<f64>(lc).expect("sized");
                blas.gemm_strided_batched(batched(p, 1.0f64, beta), &y, &x, &mut c)
            }
        }
    };
    r.map_err(|e| device_error("cuBLAS gemm", e))
}

/// The column-major form of row-major `C = op(A)·op(B)`: `Cᵀ = op(B)ᵀ·op(A)ᵀ`, which reads
/// the row-major buffers as they are (B's buffer is cuBLAS's first operand).
fn batched<T>(p: &Product, alpha: T, beta: T) -> StridedBatchedConfig<T> {
    let op = |t: bool| {
        if t {
            bsys::cublasOperation_t::CUBLAS_OP_T
        } else {
            bsys::cublasOperation_t::CUBLAS_OP_N
        }
    };
    StridedBatchedConfig {
        gemm: GemmConfig {
            transa: op(p.transpose_b),
            transb: op(p.transpose_a),
            m: p.n as i32,
            n: p.m as i32,
            k: p.k as i32,
            alpha,
            lda: p.row_b as i32,
            ldb: p.row_a as i32,
            beta,
            ldc: p.n as i32,
        },
        batch_size: p.batch as i32,
        stride_a: p.stride_b as i64,
        stride_b: p.stride_a as i64,
        stride_c: (p.m * p.n) as i64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_follow_numpy_matmul_shapes() {
        let p = plan(&[128, 784], &[784, 512]).unwrap();
        assert_eq!(
            (p.batch, p.m, p.k, p.n, p.shape.clone()),
            (1, 128, 784, 512, vec![128, 512])
        );
        let p = plan(&[784], &[784, 10]).unwrap();
        assert_eq!((p.m, p.n, p.shape.clone()), (1, 10, vec![10]));
        let p = plan(&[5, 3], &[3]).unwrap();
        assert_eq!((p.m, p.n, p.shape.clone()), (5, 1, vec![5]));
        let p = plan(&[4, 2, 3], &[3, 6]).unwrap();
        assert_eq!(
            (p.batch, p.stride_a, p.stride_b, p.shape.clone()),
            (4, 6, 0, vec![4, 2, 6])
        );
        let p = plan(&[4, 2, 3], &[4, 3, 6]).unwrap();
        assert_eq!((p.stride_a, p.stride_b), (6, 18));
        assert_eq!(
            plan(&[2, 3], &[4, 5]).unwrap_err().message,
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature \
             (n?,k),(k,m?)->(n?,m?) (size 4 is different from 3)"
        );
        assert!(plan(&[2, 4, 2, 3], &[4, 1, 3, 5]).is_err());
    }
}

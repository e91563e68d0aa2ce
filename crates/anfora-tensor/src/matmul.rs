//! `matmul` with numpy's gufunc semantics `(n?,k),(k,m?)->(n?,m?)`.

use crate::alloc::{self, try_filled};
use crate::element::Element;
use crate::promote::promote_types;
use crate::shape::{broadcast_n, broadcast_strides, compact_shape, for_each_row};
use crate::{ErrorKind, Result, Storage, Tensor, TensorError};
use gemm::Parallelism;

const SIGNATURE: &str = "(n?,k),(k,m?)->(n?,m?)";

/// Problems at least this large (m·n·k) are worth spreading over threads.
const PARALLEL_FLOPS: usize = 1 << 18;

/// One matrix product `dst (m×n) = lhs (m×k) · rhs (k×n)`, all row-major and contiguous.
trait MatElem: Element {
    fn matmul(dst: &mut [Self], lhs: &[Self], rhs: &[Self], m: usize, k: usize, n: usize);
    fn zero() -> Self;
}

/// Integer and bool products: plain loops in i-p-j order (streams over rows of `rhs`).
macro_rules! impl_loop_matmul {
    ($t:ty, $zero:expr, |$acc:ident, $a:ident, $b:ident| $fma:expr) => {
        impl MatElem for $t {
            fn matmul(dst: &mut [Self], lhs: &[Self], rhs: &[Self], m: usize, k: usize, n: usize) {
                for i in 0..m {
                    let row = &mut dst[i * n..(i + 1) * n];
                    for p in 0..k {
                        let $a = lhs[i * k + p];
                        for ($acc, &$b) in row.iter_mut().zip(&rhs[p * n..(p + 1) * n]) {
                            *$acc = $fma;
                        }
                    }
                }
            }
            fn zero() -> Self {
                $zero
            }
        }
    };
}
impl_loop_matmul!(i32, 0, |acc, a, b| acc.wrapping_add(a.wrapping_mul(b)));
impl_loop_matmul!(i64, 0, |acc, a, b| acc.wrapping_add(a.wrapping_mul(b)));
// numpy's bool matmul is "any(a and b)".
impl_loop_matmul!(bool, false, |acc, a, b| *acc | (a & b));

macro_rules! impl_gemm_matmul {
    ($t:ty) => {
        impl MatElem for $t {
            fn matmul(dst: &mut [Self], lhs: &[Self], rhs: &[Self], m: usize, k: usize, n: usize) {
                assert!(dst.len() == m * n && lhs.len() == m * k && rhs.len() == k * n);
                if k == 0 {
                    // Nothing to accumulate; `dst` is already zero.
                    return;
                }
                let parallelism = if m.saturating_mul(n).saturating_mul(k) >= PARALLEL_FLOPS {
                    Parallelism::Rayon(0)
                } else {
                    Parallelism::None
                };
                // `dst` is zero and gemm adds the products to it (`alpha = 1`, `read_dst`): as
                // in numpy, sums start from +0.0, so a product of -0.0 alone gives +0.0.
                // SAFETY: the assert above guarantees `dst` holds m×n elements and `lhs`/`rhs`
                // hold m×k and k×n; with row strides n, k, n and column stride 1 every access
                // gemm makes stays inside those slices. `dst` is a unique borrow, so it does not
                // alias the shared `lhs`/`rhs`.
                unsafe {
                    gemm::gemm(
                        m,
                        n,
                        k,
                        dst.as_mut_ptr(),
                        1,
                        n as isize,
                        true,
                        lhs.as_ptr(),
                        1,
                        k as isize,
                        rhs.as_ptr(),
                        1,
                        n as isize,
                        1.0,
                        1.0,
                        false,
                        false,
                        false,
                        parallelism,
                    );
                }
            }
            fn zero() -> Self {
                0.0
            }
        }
    };
}
impl_gemm_matmul!(f32);
impl_gemm_matmul!(f64);

fn not_enough_dims(operand: usize) -> TensorError {
    TensorError::new(
        ErrorKind::Value,
        format!(
            "matmul: Input operand {operand} does not have enough dimensions (has 0, gufunc core \
             with signature {SIGNATURE} requires 1)"
        ),
    )
}

/// The core dimensions `(rows, cols)` of an operand and its batch shape; 1-d operands become a
/// row (`lhs`) or column (`rhs`) vector.
fn core(shape: &[usize], is_lhs: bool) -> (&[usize], usize, usize) {
    match shape {
        [k] if is_lhs => (&[], 1, *k),
        [k] => (&[], *k, 1),
        [batch @ .., r, c] => (batch, *r, *c),
        [] => unreachable!("0-d operands are rejected first"),
    }
}

struct Plan {
    batch: Vec<usize>,
    /// The result's shape: `batch` followed by `m` and `n` where the operands are matrices.
    shape: Vec<usize>,
    a_batch_strides: Vec<isize>,
    b_batch_strides: Vec<isize>,
    m: usize,
    k: usize,
    n: usize,
}

impl Plan {
    fn run<T: MatElem>(&self, a: &[T], b: &[T]) -> Result<Vec<T>> {
        let (m, k, n) = (self.m, self.k, self.n);
        let mut out = try_filled(&self.shape, T::zero())?;
        if out.is_empty() {
            return Ok(out);
        }
        let mut dst_chunks = out.chunks_exact_mut(m * n);
        for_each_row(
            &self.batch,
            [&self.a_batch_strides, &self.b_batch_strides],
            [0, 0],
            |[oa, ob], len, [sa, sb]| {
                for j in 0..len as isize {
                    let ia = (oa + j * sa) as usize * m * k;
                    let ib = (ob + j * sb) as usize * k * n;
                    let dst = dst_chunks.next().expect("one chunk per batch element");
                    T::matmul(dst, &a[ia..ia + m * k], &b[ib..ib + k * n], m, k, n);
                }
            },
        );
        Ok(out)
    }
}

pub(crate) fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.ndim() == 0 {
        return Err(not_enough_dims(0));
    }
    if b.ndim() == 0 {
        return Err(not_enough_dims(1));
    }
    let (a_batch, m, k) = core(&a.shape, true);
    let (b_batch, k2, n) = core(&b.shape, false);
    if k2 != k {
        return Err(TensorError::new(
            ErrorKind::Value,
            format!(
                "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc \
                 signature {SIGNATURE} (size {k2} is different from {k})"
            ),
        ));
    }
    let batch = broadcast_n(&[a_batch, b_batch]).map_err(|_| {
        let remapped = |shape: &[usize], batch: &[usize]| {
            let mut dims: Vec<String> = batch.iter().map(usize::to_string).collect();
            dims.extend(["newaxis".to_string(), "newaxis".to_string()]);
            format!("{}->({})", compact_shape(shape), dims.join(","))
        };
        TensorError::new(
            ErrorKind::Value,
            format!(
                "operands could not be broadcast together with remapped shapes \
                 [original->remapped]: {} {}  and requested shape ({m},{n})",
                remapped(&a.shape, a_batch),
                remapped(&b.shape, b_batch)
            ),
        )
    })?;
    let mut shape = batch.clone();
    if a.ndim() > 1 {
        shape.push(m);
    }
    if b.ndim() > 1 {
        shape.push(n);
    }
    let dtype = promote_types(a.dtype(), b.dtype());
    // numpy's size check of the result (its "array is too big"), then the memory cap, before
    // copying the operands.
    alloc::check_size(&shape, dtype)?;
    let plan = Plan {
        a_batch_strides: broadcast_strides(a_batch, &batch),
        b_batch_strides: broadcast_strides(b_batch, &batch),
        batch,
        shape,
        m,
        k,
        n,
    };
    let (a, b) = (a.try_cast(dtype)?, b.try_cast(dtype)?);
    let storage = match (&*a.storage, &*b.storage) {
        (Storage::Bool(x), Storage::Bool(y)) => Storage::Bool(plan.run(x, y)?),
        (Storage::I32(x), Storage::I32(y)) => Storage::I32(plan.run(x, y)?),
        (Storage::I64(x), Storage::I64(y)) => Storage::I64(plan.run(x, y)?),
        (Storage::F32(x), Storage::F32(y)) => Storage::F32(plan.run(x, y)?),
        (Storage::F64(x), Storage::F64(y)) => Storage::F64(plan.run(x, y)?),
        _ => unreachable!("operands were cast to {dtype}"),
    };
    Ok(Tensor::from_storage(storage, plan.shape))
}

//! `matmul` with numpy's gufunc semantics `(n?,k),(k,m?)->(n?,m?)`.

use crate::alloc::{self, try_filled};
use crate::element::Element;
use crate::promote::promote_types;
use crate::shape::{broadcast_n, broadcast_strides, for_each_row, gather};
use crate::shape_repr::compact_shape;
use crate::transpose::transpose;
use crate::{DType, ErrorKind, Result, Storage, Tensor, TensorError};
use gemm::Parallelism;
use pulp::bytemuck::{self, Pod};

const SIGNATURE: &str = "(n?,k),(k,m?)->(n?,m?)";

/// Problems at least this large (m·n·k) are worth spreading over threads. Below it, waking the
/// other threads costs more than they save: W1's 128×512×10 products take 23–26 µs on one
/// thread and 42–60 µs (median) on two.
pub(crate) const PARALLEL_FLOPS: usize = 1 << 20;

/// One matrix product `dst (m×n) = lhs (m×k) · rhs (k×n)`, all row-major and contiguous.
pub(crate) trait MatElem: Element {
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

/// How a matrix operand is read: its row and column strides (a transposed operand is the
/// stored matrix read with its strides swapped, never copied).
#[derive(Clone, Copy)]
pub(crate) struct Layout {
    row: isize,
    col: isize,
}

impl Layout {
    /// A stored `rows×cols` row-major matrix, read as itself or as its transpose.
    pub(crate) fn of(cols: usize, transposed: bool) -> Layout {
        if transposed {
            Layout {
                row: 1,
                col: cols as isize,
            }
        } else {
            Layout {
                row: cols as isize,
                col: 1,
            }
        }
    }
}

impl Layout {
    /// Whether a `rows×cols` matrix read with this layout stays inside `len` elements (the
    /// strides are non-negative).
    fn reads(self, len: usize, rows: usize, cols: usize) -> bool {
        if self.row < 0 || self.col < 0 {
            return false;
        }
        rows == 0
            || cols == 0
            || (rows - 1) * (self.row as usize) + (cols - 1) * (self.col as usize) < len
    }
}

/// What a product finds in its destination.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Dst {
    /// Anything: it is overwritten.
    Overwrite,
    /// Zeros, which the sums start from (numpy's `+0.0`, so a product of `-0.0` alone gives
    /// `+0.0`).
    Zeros,
    /// An accumulator the products are added to.
    Accumulate,
}

/// `dst (m×n) += lhs · rhs` with the operands read through `Layout`s.
pub(crate) trait GemmElem: MatElem + Pod {
    const ONE: Self;

    #[allow(clippy::too_many_arguments)]
    fn gemm_into(
        dst: &mut [Self],
        lhs: &[Self],
        l: Layout,
        rhs: &[Self],
        r: Layout,
        m: usize,
        k: usize,
        n: usize,
    ) {
        Self::gemm_with(
            dst,
            lhs,
            l,
            rhs,
            r,
            (m, k, n),
            Dst::Zeros,
            worth_threads::<Self>(m, k, n),
        );
    }

    /// `dst = lhs · rhs` (`dst += lhs · rhs` for an accumulator), on gemm's threads when
    /// `parallel` (the nn kernels run one product per thread instead).
    #[allow(clippy::too_many_arguments)]
    fn gemm_with(
        dst: &mut [Self],
        lhs: &[Self],
        l: Layout,
        rhs: &[Self],
        r: Layout,
        (m, k, n): (usize, usize, usize),
        found: Dst,
        parallel: bool,
    ) {
        // SAFETY: `dst` holds its elements initialized, borrowed for the call.
        unsafe {
            product(
                (dst.as_mut_ptr(), dst.len()),
                lhs,
                l,
                rhs,
                r,
                (m, k, n),
                found,
                parallel,
            )
        }
    }

    /// A new m×n matrix `lhs · rhs`, on gemm's threads when `parallel`. Where gemm's general
    /// kernel computes it (see [`FRESH_MIN`]), that kernel writes every element from sums
    /// started at `+0.0`, so the buffer is not zeroed first: W1's `xᵀ @ d` (1.6 MB) went from
    /// 514 to 439 µs (medians). A sum that underflows from below is then `-0.0`, as with numpy's
    /// BLAS, where adding it to zeros gave `+0.0`. Elsewhere the sums start from zeros
    /// ([`Dst::Zeros`]).
    fn gemm_fresh(
        lhs: &[Self],
        l: Layout,
        rhs: &[Self],
        r: Layout,
        (m, k, n): (usize, usize, usize),
        parallel: bool,
    ) -> Result<Vec<Self>> {
        if !general_kernel(m, k, n) {
            let mut out = try_filled(&[m, n], Self::zero())?;
            Self::gemm_with(&mut out, lhs, l, rhs, r, (m, k, n), Dst::Zeros, parallel);
            return Ok(out);
        }
        let mut out = alloc::try_vec::<Self>(&[m, n])?;
        let dst = out.spare_capacity_mut();
        let at = dst.as_mut_ptr().cast::<Self>();
        // SAFETY: `at` is valid for writing the m·n elements of `out`'s capacity, borrowed for
        // the call; with `Dst::Overwrite` nothing reads them before they are written.
        unsafe {
            product(
                (at, m * n),
                lhs,
                l,
                rhs,
                r,
                (m, k, n),
                Dst::Overwrite,
                parallel,
            );
            // Every element was written (every path writes the whole destination).
            out.set_len(m * n);
        }
        Ok(out)
    }
}

/// [`GemmElem::gemm_fresh`] leaves the sums of products with every dimension at least this
/// large (and more than 256 results) to gemm's general kernel, on an unwritten buffer. gemm's
/// other kernels (outer products for k ≤ 2, matrix-vector products, dot products for at most
/// 256 results) may not start their sums at `+0.0`, and give `-0.0` for a product of `-0.0`
/// alone where numpy gives `+0.0`.
const FRESH_MIN: usize = 16;

/// Whether gemm's general kernel computes an m×k by k×n product ([`FRESH_MIN`]).
fn general_kernel(m: usize, k: usize, n: usize) -> bool {
    m >= FRESH_MIN && k >= FRESH_MIN && n >= FRESH_MIN && m * n > 256
}

/// Whether gemm sums an m×n result in blocks of 512 along k, where it blocks larger ones by k
/// and the cache sizes alone: a product split into parts keeps the bits of the whole only
/// where no part is this small unless the whole is.
fn small_blocks(m: usize, n: usize) -> bool {
    m <= 64 && n <= 64
}

/// `dst (m×n, row-major) = lhs · rhs`, or `+=` per `found`: the special cases, then gemm's
/// general product.
///
/// # Safety
/// `dst.0` is valid for writing `dst.1 = m·n` elements that nothing else accesses during the
/// call; they are initialized unless `found` is [`Dst::Overwrite`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn product<T: GemmElem>(
    dst: (*mut T, usize),
    lhs: &[T],
    l: Layout,
    rhs: &[T],
    r: Layout,
    (m, k, n): (usize, usize, usize),
    found: Dst,
    parallel: bool,
) {
    assert!(dst.1 == m * n && l.reads(lhs.len(), m, k) && r.reads(rhs.len(), k, n));
    if m * n == 0 {
        return;
    }
    let mut p = Product {
        dst: dst.0,
        lhs,
        l,
        rhs,
        r,
        dims: (m, k, n),
        found,
    };
    if k == 0 {
        // An empty sum: zeros where `dst` is overwritten, `dst` itself otherwise.
        p.initialized_dst();
        return;
    }
    if vector_matrix(&mut p, parallel)
        || dense(&mut p, parallel)
        || (parallel && column_halves(&mut p))
    {
        return;
    }
    let parallelism = if parallel {
        Parallelism::Rayon(0)
    } else {
        Parallelism::None
    };
    if by_columns(&mut p, parallelism) {
        return;
    }
    // SAFETY: `lhs` holds an m×k matrix and `rhs` a k×n one read through their layouts'
    // non-negative strides, and the last element each reads is inside its slice (asserted
    // above). `dst` is valid for m×n elements written with row stride n (the caller's
    // contract).
    unsafe {
        raw_gemm(
            (m, k, n),
            (p.dst, n as isize, 1),
            found,
            (lhs, l),
            (rhs, r),
            parallelism,
        );
    }
}

/// One product as [`product`] received it (checked there), for the special cases it tries
/// before gemm's general one: `dst (m×n) = lhs · rhs`, or `+=` per `found`.
struct Product<'a, T> {
    /// m·n elements, uninitialized when `found` is [`Dst::Overwrite`] (see [`product`]).
    dst: *mut T,
    lhs: &'a [T],
    l: Layout,
    rhs: &'a [T],
    r: Layout,
    dims: (usize, usize, usize),
    found: Dst,
}

impl<T: GemmElem> Product<'_, T> {
    /// The destination as a slice, for the special cases that read or write it as one: zeroed
    /// first when it is overwritten (it may be uninitialized then).
    fn initialized_dst(&mut self) -> &mut [T] {
        let (m, _, n) = self.dims;
        if self.found == Dst::Overwrite {
            // SAFETY: `dst` is valid for writing its m·n elements (the contract of `product`,
            // which built `self`); all-zero bytes are a float zero.
            unsafe { std::ptr::write_bytes(self.dst, 0, m * n) };
        }
        // SAFETY: the m·n elements are initialized (just now when overwritten) and nothing
        // else accesses them while `self` is borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.dst, m * n) }
    }
}

/// Whether an m×k by k×n product of `T`s is large enough to spread over threads: float32
/// vector-matrix products from [`VECTOR_MATRIX_HALVES`] on (their kernel sums two halves,
/// one per core), any product from [`PARALLEL_FLOPS`] on. Never inside [`gemm_pair`]: there
/// the product already has a core of its own.
fn worth_threads<T: GemmElem>(m: usize, k: usize, n: usize) -> bool {
    (m.saturating_mul(n).saturating_mul(k) >= PARALLEL_FLOPS
        || (m == 1 && T::DTYPE == DType::F32 && k.saturating_mul(n) >= VECTOR_MATRIX_HALVES))
        && !ONE_CORE.get()
}

thread_local! {
    /// Set while this thread computes one product of a pair running side by side.
    static ONE_CORE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Vector-matrix products of at least this many multiply-adds are summed as two halves of the
/// rows ([`vector_matrix`]).
const VECTOR_MATRIX_HALVES: usize = 1 << 17;

/// Computes a product of one row (`m = 1`: batch-1 inference) by a row-major float32 matrix
/// with [`crate::avx512::vector_matrix`], and says whether it did. gemm streams such a matrix
/// at about half that kernel's rate (W6's 784×512 and 512×512 products at batch 1, weights in
/// L2: 60 and 20 µs against 26 and 8).
///
/// Products of at least [`VECTOR_MATRIX_HALVES`] are summed as two halves of the rows, the
/// second into a scratch row added at the end, each half on its own thread when `parallel`:
/// each core then reads the same half of the weights at every call, and keeps it in its own
/// L2 cache (W6's 2.6 MB of weights do not fit in one core's). The split depends on the sizes
/// alone, so the sums' bits do not depend on the number of threads.
fn vector_matrix<T: GemmElem>(p: &mut Product<T>, parallel: bool) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let (m, k, n) = p.dims;
        let (l, r) = (p.l, p.r);
        // `rhs` row-major (read by rows), or stored transposed (`x @ w.T`, read by columns).
        let by_rows = r.col == 1 && r.row >= n as isize;
        let by_columns = r.row == 1 && r.col >= k as isize;
        if m != 1
            || T::DTYPE != DType::F32
            || !(by_rows || by_columns)
            || !crate::avx512::available()
        {
            return false;
        }
        let (lhs, w): (&[f32], &[f32]) = (bytemuck::cast_slice(p.lhs), bytemuck::cast_slice(p.rhs));
        let dst: &mut [f32] = bytemuck::cast_slice_mut(p.initialized_dst());
        let gathered: Vec<f32>;
        let x = if l.col == 1 {
            &lhs[..k]
        } else {
            gathered = (0..k).map(|i| lhs[i * l.col as usize]).collect();
            &gathered
        };
        let halves = k.saturating_mul(n) >= VECTOR_MATRIX_HALVES;
        let both = |a: &mut (dyn FnMut() + Send), b: &mut (dyn FnMut() + Send)| {
            if parallel {
                rayon::join(a, b);
            } else {
                a();
                b();
            }
        };
        if by_columns {
            // Each result is one dot product: halves of the results are independent.
            let ld = r.col as usize;
            if !halves {
                crate::avx512::vector_matrix_transposed(dst, x, w, ld);
                return true;
            }
            let h = n / 2;
            let (first, second) = dst.split_at_mut(h);
            both(
                &mut || crate::avx512::vector_matrix_transposed(first, x, w, ld),
                &mut || crate::avx512::vector_matrix_transposed(second, x, &w[h * ld..], ld),
            );
            return true;
        }
        let ld = r.row as usize;
        if !halves {
            crate::avx512::vector_matrix(dst, x, w, ld);
            return true;
        }
        let h = k / 2;
        let mut second = vec![0.0f32; n];
        both(
            &mut || crate::avx512::vector_matrix(dst, &x[..h], w, ld),
            &mut || crate::avx512::vector_matrix(&mut second, &x[h..], &w[h * ld..], ld),
        );
        for (d, s) in dst.iter_mut().zip(&second) {
            *d += s;
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (p, parallel);
        false
    }
}

/// What [`crate::avx512::matrix_product`] does with its sums.
#[derive(Clone, Copy)]
pub(crate) enum Finish<'a> {
    /// Stores them: `c = a · b`.
    Store,
    /// Adds them to `c`: `c = (a · b) + c`.
    Accumulate,
    /// Adds the same row of n values to every row: `c = (a · b) + row` (a linear layer's bias
    /// broadcast, without writing it into `c` first).
    AddRow(&'a [f32]),
}

/// The most columns of the products [`dense`] computes with one partial vector per row of
/// results.
const NARROW_N: usize = 15;

/// The most terms per sum of those narrow products: the k vectors of the right operand
/// (32 KB) stay in L1 while the tiles of rows run past them.
const NARROW_K: usize = 512;

/// The most terms per sum of the products [`dense`] computes with whole vectors (16 columns
/// or more): a block of 64 columns of the right operand (k·256 bytes, 16 KB) stays in L1
/// beside the rows of the left one. `cargo bench --bench gemm -- narrow`, one thread, against
/// gemm's general kernel: 360×64·64×n 0.90–0.97× the time for n = 32, 64 and 128, 360×32·32×256
/// 0.93–0.96×, but 360×128·128×128 1.06–1.09× (a block of 32 KB), which gemm keeps.
const WIDE_K: usize = 64;

/// Whether [`crate::avx512::matrix_product`] computes an m×k by k×n product of `T`s read
/// through these layouts: float32 on a machine with AVX-512F, `rhs` row-major or stored
/// transposed (then copied into a row-major one first; `lhs` is read in place either way),
/// and either at most [`NARROW_N`] columns and [`NARROW_K`] terms per sum or at most
/// [`WIDE_K`] terms. The choice depends on `k` and `n` alone, never on `m` or on which
/// operand is transposed, so a product split by rows ([`sgd_product`]) takes the same kernel
/// as the whole, and `x @ w.T` gives the bits of `x @ w_t` with `w_t` stored.
fn dense_applies<T: GemmElem>(r: Layout, k: usize, n: usize) -> bool {
    cfg!(target_arch = "x86_64")
        && T::DTYPE == DType::F32
        && (r.col == 1 || (r.row == 1 && r.col as usize >= k))
        && ((n <= NARROW_N && k <= NARROW_K) || k <= WIDE_K)
        && available_avx512()
}

#[cfg(target_arch = "x86_64")]
fn available_avx512() -> bool {
    crate::avx512::available()
}

#[cfg(not(target_arch = "x86_64"))]
fn available_avx512() -> bool {
    false
}

/// Computes the product with [`dense_product`] where [`dense_applies`], and says whether it
/// did.
fn dense<T: GemmElem>(p: &mut Product<T>, parallel: bool) -> bool {
    let (_, k, n) = p.dims;
    if !dense_applies::<T>(p.r, k, n) {
        return false;
    }
    let finish = if p.found == Dst::Accumulate {
        Finish::Accumulate
    } else {
        Finish::Store
    };
    // SAFETY: `product` checked the operands against their layouts, and its contract makes
    // `dst` valid for the m×n results.
    unsafe {
        dense_product(
            p.dst.cast(),
            (p.lhs, p.l),
            (p.rhs, p.r),
            p.dims,
            finish,
            false,
            parallel,
        )
    };
    true
}

/// `dst (m×n, row stride n) = lhs · rhs`, finished per `finish`, then ReLU when `relu`, by
/// [`crate::avx512::matrix_product`]: split by rows over the pool's threads when `parallel`
/// (its rows do not depend on each other, so the parts give the bits of one thread).
///
/// # Safety
/// [`dense_applies`]; `lhs` and `rhs` hold the operands read through their layouts; `dst` is
/// valid for writing the m·n results (and reading them for [`Finish::Accumulate`]), which
/// nothing else accesses during the call.
unsafe fn dense_product<T: GemmElem>(
    dst: *mut f32,
    (lhs, l): (&[T], Layout),
    (rhs, r): (&[T], Layout),
    (m, k, n): (usize, usize, usize),
    finish: Finish,
    relu: bool,
    parallel: bool,
) {
    #[cfg(target_arch = "x86_64")]
    {
        let (a, b): (&[f32], &[f32]) = (bytemuck::cast_slice(lhs), bytemuck::cast_slice(rhs));
        let (lda, acol) = (l.row as usize, l.col as usize);
        let packed: Vec<f32>;
        let (b, ldb) = if r.col == 1 {
            (b, r.row as usize)
        } else {
            // Stored (n, k), row stride `r.col`: its transpose, row-major.
            let mut t = vec![0.0f32; k * n];
            transpose(b, r.col as usize, n, k, &mut t, n);
            packed = t;
            (&packed[..], n)
        };
        let tasks = if parallel {
            rayon::current_num_threads().min(m.div_ceil(DENSE_ROWS_PER_TASK))
        } else {
            1
        };
        let per = m.div_ceil(tasks.max(1)).max(1);
        // SAFETY: the caller's contract: `dst` holds the m·n results, which nothing else
        // accesses during the call (uninitialized ones are only written).
        let dst = unsafe {
            std::slice::from_raw_parts_mut(dst.cast::<std::mem::MaybeUninit<f32>>(), m * n)
        };
        crate::parallel::for_each_part(dst, per * n, |t, part| {
            let from = t * per;
            // SAFETY: AVX-512F ([`dense_applies`]); `part` holds rows `from..` of the
            // results, written (and, for `Finish::Accumulate`, read) by this task alone.
            unsafe {
                crate::avx512::matrix_product(
                    (part.len() / n, k, n),
                    (&a[from * lda..], lda, acol),
                    (b, ldb),
                    (part.as_mut_ptr().cast(), n),
                    finish,
                    relu,
                )
            }
        });
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (dst, lhs, l, rhs, r, m, k, n, finish, relu, parallel);
        unreachable!("dense_applies is false off x86-64")
    }
}

/// Parallel parts of a [`dense`] product have at least this many rows.
const DENSE_ROWS_PER_TASK: usize = 48;

/// Products of row-major operands with at least this many columns (and [`PARALLEL_FLOPS`]
/// multiply-adds) are split by [`column_halves`].
pub(crate) const COLUMN_HALVES_MIN: usize = 128;

/// Computes a product of a row-major `lhs` and `rhs` as two halves of its columns, one per
/// thread, each through gemm on one thread, and says whether it did. gemm's own threads
/// reached 191–207 GFLOP/s on W1's `x @ W1` (128×784×512) where the halves reached 218–224,
/// in alternation on this machine kind (fwd2 116–156 against 136–179): each core reads half of
/// the right operand, the large one, and packs only its own half.
///
/// The halves start at a multiple of 16 columns. gemm blocks the sums along k by k and the
/// cache sizes alone for products with more than 64 rows or columns, but in blocks of 512 for
/// smaller ones: a product of at most 64 rows is split only where both halves are wider than
/// 64 columns. The bits are then those of the whole product on one thread (tested; a
/// 48×1100×128 product split in two halves of 64 columns summed in other blocks).
fn column_halves<T: GemmElem>(p: &mut Product<T>) -> bool {
    let Product {
        dst,
        lhs,
        l,
        rhs,
        r,
        dims: (m, k, n),
        found,
    } = *p;
    if l.col != 1 || r.col != 1 || n < COLUMN_HALVES_MIN || rayon::current_num_threads() < 2 {
        return false;
    }
    let h = (n / 2).next_multiple_of(16);
    // The second half is the narrower.
    if small_blocks(m, n - h) {
        return false;
    }
    /// `dst`'s first element, shared by the two halves, which write disjoint columns.
    struct Shared<T>(*mut T);
    // SAFETY: the halves write disjoint elements and `join` returns after both.
    unsafe impl<T> Sync for Shared<T> {}
    let at = Shared(dst);
    let (at, row) = (&at, n as isize);
    // SAFETY: `lhs` and `rhs` are read as the caller checked; the second half of `rhs` starts
    // `h` columns in, inside the slice (h < n); the halves of `dst` are its columns `..h` and
    // `h..` of every row, each m×(width) with row stride n, inside `dst` (m·n elements) and
    // written by one thread each while `dst` is borrowed here.
    rayon::join(
        || unsafe {
            raw_gemm(
                (m, k, h),
                (at.0, row, 1),
                found,
                (lhs, l),
                (rhs, r),
                Parallelism::None,
            )
        },
        || unsafe {
            raw_gemm(
                (m, k, n - h),
                (at.0.add(h), row, 1),
                found,
                (lhs, l),
                (&rhs[h..], r),
                Parallelism::None,
            )
        },
    );
    true
}

/// gemm's product on raw strides: `dst` (its row and column strides) `= lhs · rhs`, or `+=`
/// unless `found` is [`Dst::Overwrite`].
///
/// # Safety
/// Every element of `lhs` and `rhs` read through their strides must lie inside its slice; `dst`
/// must be valid for writing its m×n elements, no two of which share a position, and nothing
/// else may access them during the call.
unsafe fn raw_gemm<T: GemmElem>(
    (m, k, n): (usize, usize, usize),
    (dst, dst_row, dst_col): (*mut T, isize, isize),
    found: Dst,
    (lhs, l): (&[T], Layout),
    (rhs, r): (&[T], Layout),
    parallelism: Parallelism,
) {
    // gemm adds the products to `dst` (`alpha = 1`, `read_dst`) unless it is overwritten.
    // SAFETY: the caller's contract.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst,
            dst_col,
            dst_row,
            found != Dst::Overwrite,
            lhs.as_ptr(),
            l.col,
            l.row,
            rhs.as_ptr(),
            r.col,
            r.row,
            T::ONE,
            T::ONE,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// Right operands at least this large (k·n elements) that are read column by column go
/// through [`by_columns`] when their copy costs more than the transposes. Smaller ones stay in
/// cache while gemm packs them, and there the two transposes and scratch buffers cost more
/// than they save (LeNet's first filter gradient, 25×576 per image: 191 µs a batch through gemm
/// against 549 column-major).
const BY_COLUMNS_MIN: usize = 1 << 16;

/// How many times more an element of gemm's packing copy of a column-read operand costs than
/// an element of [`transpose`] (about 2 ns against 0.2 on this machine kind, measured on the
/// W1 products).
const PACK_PER_TRANSPOSE: usize = 4;

/// Computes a product whose right operand is stored column by column (`a @ w.T` with `w`
/// row-major, as in every backward pass through a linear layer) as its transpose, when that is
/// faster, and says whether it did.
///
/// gemm computes a row-major result as the column-major product `dstᵀ = rhsᵀ · lhsᵀ`, and
/// copies (packs) its left operand `rhsᵀ` into blocks first; when `rhs` is read by columns
/// that copy reads element by element across rows, and for the 512×512 weights of the W1 MLP
/// it makes the product 2.5× slower than the same product on `w` stored transposed. Here the
/// product is computed column-major instead (`dst` as its transpose): gemm then reads `rhs`
/// in place, and only the smaller `lhs` (when row-major) and `dst` are transposed, by the
/// blocked [`transpose`]. gemm's block sizes along k do not depend on the orientation, so the
/// sums have the bits of the same product on `w` stored transposed (tested). Read in place
/// instead, a product of at most 256 results may go to gemm's dot-product kernel, which
/// rounds differently.
fn by_columns<T: GemmElem>(p: &mut Product<T>, parallelism: Parallelism) -> bool {
    let Product {
        lhs,
        l,
        rhs,
        r,
        dims: (m, k, n),
        found,
        ..
    } = *p;
    let packed = k.saturating_mul(n);
    if r.row != 1 || m < 2 || n < 2 || packed < BY_COLUMNS_MIN {
        return false;
    }
    // Elements transposed instead: `dst` out (and in, for an accumulator), and a row-major
    // `lhs`.
    let transposed =
        m * n * if found == Dst::Accumulate { 2 } else { 1 } + if l.row == 1 { 0 } else { m * k };
    if packed.saturating_mul(PACK_PER_TRANSPOSE) < transposed {
        return false;
    }
    // The left operand column-major: as it is, or transposed from row-major.
    let lhs_t: Vec<T>;
    let lhs_cols = if l.row == 1 {
        (lhs, l)
    } else if l.col == 1 {
        lhs_t = {
            let mut t = vec![T::zero(); m * k];
            transpose(lhs, l.row as usize, m, k, &mut t, m);
            t
        };
        // Stored k×m row-major, read as its transpose.
        (&lhs_t[..], Layout::of(m, true))
    } else {
        return false;
    };
    let dst = p.initialized_dst();
    // `dst` transposed: n×m row-major is m×n column-major. gemm writes all of it when it
    // overwrites.
    let mut dst_t: Vec<T> = if found == Dst::Overwrite {
        Vec::with_capacity(m * n)
    } else {
        vec![T::zero(); m * n]
    };
    if found == Dst::Accumulate {
        transpose(dst, n, m, n, &mut dst_t, m);
    }
    // SAFETY: `lhs_cols` reads m×k elements with row stride 1, inside `lhs` (the caller's
    // `reads` checked these very strides) or inside `lhs_t` (m·k elements, column stride m);
    // `rhs` is read as the caller checked;
    // `dst_t` has room for m·n elements written with row stride 1 and column stride m, all of
    // them initialized after the call (read by gemm unless overwritten, written by it).
    unsafe {
        raw_gemm(
            (m, k, n),
            (dst_t.as_mut_ptr(), 1, m as isize),
            found,
            lhs_cols,
            (rhs, r),
            parallelism,
        );
        dst_t.set_len(m * n);
    }
    transpose(&dst_t, m, n, m, dst, n);
    true
}

/// Float products go through gemm; `matmul` is `gemm_into` on untransposed operands.
macro_rules! impl_gemm_elem {
    ($t:ty) => {
        impl MatElem for $t {
            fn matmul(dst: &mut [Self], lhs: &[Self], rhs: &[Self], m: usize, k: usize, n: usize) {
                let (l, r) = (Layout::of(k, false), Layout::of(n, false));
                <Self as GemmElem>::gemm_into(dst, lhs, l, rhs, r, m, k, n);
            }
            fn zero() -> Self {
                0.0
            }
        }

        impl GemmElem for $t {
            const ONE: Self = 1.0;
        }
    };
}
impl_gemm_elem!(f32);
impl_gemm_elem!(f64);

/// `t` itself when gemm can read it in place (contiguous, or a view with non-negative strides),
/// else its contiguous copy.
fn in_place(t: &Tensor) -> Tensor {
    if t.matrix_layout().is_some() {
        t.clone()
    } else {
        t.contiguous()
    }
}

/// The elements of matrix `t` from its first one, and the layout that reads it (or its
/// transpose) there.
fn operand<T: GemmElem>(t: &Tensor, transposed: bool) -> (&[T], Layout) {
    let (offset, row, col) = t.matrix_layout().expect("in_place checked");
    let base = T::slice(t.raw_storage()).expect("dtype checked");
    let layout = if transposed {
        Layout { row: col, col: row }
    } else {
        Layout { row, col }
    };
    (&base[offset as usize..], layout)
}

fn gemm_error(message: String) -> TensorError {
    TensorError::new(ErrorKind::Value, format!("gemm: {message}"))
}

/// The accumulator of `gemm`: `c` broadcast to `shape`, in `c`'s own buffer when it is uniquely
/// owned and already has that shape.
fn accumulator<T: GemmElem>(mut c: Tensor, shape: &[usize]) -> Result<Vec<T>> {
    if c.shape[..] == shape[..]
        && let Some(v) = c.storage_mut().and_then(T::vec_mut)
    {
        return Ok(std::mem::take(v));
    }
    let src = T::slice(c.try_data()?).expect("gemm: the accumulator has the operands' dtype");
    gather(src, 0, shape, &broadcast_strides(&c.shape, shape))
}

/// The dimensions `(m, k, n)` of `gemm(a, b, c, transposes)`, or its errors: operands that
/// are not matrices, dtypes that are not one float dtype, inner dimensions that differ, an
/// accumulator that does not broadcast to the result, a result too large. Every device's
/// `Gemm` checks its arguments with it.
pub fn gemm_plan(
    a: &Tensor,
    b: &Tensor,
    c: Option<&Tensor>,
    (transpose_a, transpose_b): (bool, bool),
) -> Result<(usize, usize, usize)> {
    let dtype = a.dtype();
    let (&[ar, ac], &[br, bc]) = (&a.shape[..], &b.shape[..]) else {
        return Err(gemm_error(format!(
            "operands must be matrices, got shapes {} and {}",
            compact_shape(&a.shape),
            compact_shape(&b.shape)
        )));
    };
    if !dtype.is_float() || b.dtype() != dtype || c.is_some_and(|c| c.dtype() != dtype) {
        return Err(TensorError::new(
            ErrorKind::Type,
            "gemm: operands and accumulator must share one float dtype".to_string(),
        ));
    }
    let (m, k) = if transpose_a { (ac, ar) } else { (ar, ac) };
    let (k2, n) = if transpose_b { (bc, br) } else { (br, bc) };
    if k != k2 {
        return Err(gemm_error(format!("inner dimensions differ ({k} != {k2})")));
    }
    if let Some(c) = c {
        // Broadcasting may stretch `c` to the result but not grow the result.
        if broadcast_n(&[&c.shape, &[m, n]]).ok().as_deref() != Some(&[m, n][..]) {
            return Err(gemm_error(format!(
                "accumulator of shape {} does not broadcast to ({m}, {n})",
                compact_shape(&c.shape)
            )));
        }
    }
    alloc::check_size(&[m, n], dtype)?;
    Ok((m, k, n))
}

/// [`Tensor::gemm`], and [`Tensor::gemm_relu`] when `relu`. The optimizer emits `Gemm` for
/// products whose operands and accumulator it knows, so transposed operands and added biases
/// cost no copy and no pass; the executor fuses a ReLU that only reads the product.
pub(crate) fn gemm(
    a: &Tensor,
    b: &Tensor,
    c: Option<Tensor>,
    (transpose_a, transpose_b): (bool, bool),
    relu: bool,
) -> Result<Tensor> {
    let dtype = a.dtype();
    let (m, k, n) = gemm_plan(a, b, c.as_ref(), (transpose_a, transpose_b))?;
    let shape = vec![m, n];
    let dims = (m, k, n);
    // Views (transposes, slices) are read through their strides, without a copy.
    let (a, b) = (in_place(a), in_place(b));
    /// The product, and whether ReLU was applied to it.
    fn run<T: GemmElem>(
        a: (&Tensor, bool),
        b: (&Tensor, bool),
        c: Option<Tensor>,
        (m, k, n): (usize, usize, usize),
        relu: bool,
    ) -> Result<(Storage, bool)> {
        let (x, la) = operand::<T>(a.0, a.1);
        let (y, lb) = operand::<T>(b.0, b.1);
        let parallel = worth_threads::<T>(m, k, n);
        if let Some(out) = finished::<T>((x, la), (y, lb), c.as_ref(), (m, k, n), relu, parallel)? {
            return Ok((T::into_storage(out), relu));
        }
        let Some(c) = c else {
            let out = T::gemm_fresh(x, la, y, lb, (m, k, n), parallel)?;
            return Ok((T::into_storage(out), false));
        };
        let mut dst = accumulator::<T>(c, &[m, n])?;
        T::gemm_with(&mut dst, x, la, y, lb, (m, k, n), Dst::Accumulate, parallel);
        Ok((T::into_storage(dst), false))
    }
    let (storage, applied) = match dtype {
        DType::F32 => run::<f32>((&a, transpose_a), (&b, transpose_b), c, dims, relu)?,
        DType::F64 => run::<f64>((&a, transpose_a), (&b, transpose_b), c, dims, relu)?,
        _ => unreachable!("checked float"),
    };
    let product = Tensor::from_storage(storage, shape);
    if relu && !applied {
        return crate::elementwise::unary_in_place(crate::UnaryOp::Relu, product);
    }
    Ok(product)
}

/// `lhs · rhs`, plus `c` when it is one row (shape `(n,)` or `(1, n)`), then ReLU when `relu`,
/// in one pass where [`dense_applies`]: the kernel adds the row and applies ReLU to its sums
/// as it stores them, with the bits of the unfused ops (the product rounded, then the row
/// added, then ReLU), without writing `c` broadcast into the result first or a pass of ReLU
/// over it (together 15 % of the digits MLP at batch 360). `None` elsewhere (and for `c` of
/// the result's shape, which the general path accumulates into in place).
fn finished<T: GemmElem>(
    (lhs, l): (&[T], Layout),
    (rhs, r): (&[T], Layout),
    c: Option<&Tensor>,
    (m, k, n): (usize, usize, usize),
    relu: bool,
    parallel: bool,
) -> Result<Option<Vec<T>>> {
    // One row is left to `vector_matrix`, which adds its sums to the bias.
    let row_shape = |c: &Tensor| c.shape[..] == [n] || c.shape[..] == [1, n];
    if c.is_some_and(|c| !row_shape(c)) || m == 1 || k == 0 || !dense_applies::<T>(r, k, n) {
        return Ok(None);
    }
    let row: Option<&[f32]> = match c {
        Some(c) => Some(bytemuck::cast_slice(
            T::slice(c.try_data()?).expect("gemm: the operands' dtype"),
        )),
        None => None,
    };
    let finish = row.map_or(Finish::Store, Finish::AddRow);
    let mut out = alloc::try_vec::<T>(&[m, n])?;
    // SAFETY: `dense_applies`; `gemm` checked the operands' shapes, and `out` has room for the
    // m·n results, all written (neither `Store` nor `AddRow` reads them) before the length is
    // set.
    unsafe {
        dense_product(
            out.spare_capacity_mut().as_mut_ptr().cast(),
            (lhs, l),
            (rhs, r),
            (m, k, n),
            finish,
            relu,
            parallel,
        );
        out.set_len(m * n);
    }
    Ok(Some(out))
}

/// [`Tensor::sgd_product`]: `param -= rate * (op(a) @ op(b))` without the product as a tensor.
///
/// The product is computed by parts of its rows (two halves, one per thread, or the whole on
/// this thread), each into a scratch buffer that the update then reads while it is still in
/// the core's cache; each part updates a contiguous run of `param`. The unfused step writes
/// the whole gradient (W1's 784×512 `xᵀ @ d`, 1.6 MB) and reads it back from memory in a
/// separate pass. Rows, not columns: the weight gradients this serves have a small right
/// operand (batch × outputs), which each part packs whole, and a part of the columns would
/// update half of every row, which the hardware prefetchers stream poorly (W1's update took
/// twice as long so).
///
/// Returns `Ok(false)`, changing nothing, unless every value is that of the unfused ops:
/// `param` a uniquely owned float32 or float64 matrix (not a view) of the product's shape and
/// dtype, and a product that gemm's general kernel computes (every dimension at least
/// [`FRESH_MIN`], more than 256 results), as are its parts. Its sums then do not depend on
/// how the rows are split: gemm blocks them along k by k and the cache sizes alone (for
/// products with more than 64 rows or columns; parts of at most 64 rows are not made when the
/// product has at most 64 columns). The update rounds `rate * g` to the dtype before the
/// subtraction, as the unfused `param - rate * g` with `rate` a weak scalar.
pub(crate) fn sgd_product(
    param: &mut Tensor,
    a: &Tensor,
    b: &Tensor,
    (transpose_a, transpose_b): (bool, bool),
    rate: crate::Scalar,
) -> Result<bool> {
    let dtype = param.dtype();
    if !matches!(dtype, DType::F32 | DType::F64) || a.dtype() != dtype || b.dtype() != dtype {
        return Ok(false);
    }
    let (&[ar, ac], &[br, bc]) = (&a.shape[..], &b.shape[..]) else {
        return Ok(false);
    };
    let (m, k) = if transpose_a { (ac, ar) } else { (ar, ac) };
    let (k2, n) = if transpose_b { (bc, br) } else { (br, bc) };
    // Checked before any copy of the operands is made, and again where `param` is borrowed.
    if k != k2
        || param.shape[..] != [m, n]
        || !general_kernel(m, k, n)
        || param.storage_mut().is_none()
    {
        return Ok(false);
    }
    let rate = Tensor::scalar(rate, dtype)?;
    let (a, b) = (in_place(a), in_place(b));
    fn run<T: GemmElem + std::ops::Mul<Output = T> + std::ops::Sub<Output = T>>(
        param: &mut Tensor,
        a: (&Tensor, bool),
        b: (&Tensor, bool),
        rate: T,
        (m, k, n): (usize, usize, usize),
    ) -> Result<bool> {
        let (lhs, l) = operand::<T>(a.0, a.1);
        let (rhs, r) = operand::<T>(b.0, b.1);
        let Some(p) = param.storage_mut().and_then(T::vec_mut) else {
            return Ok(false);
        };
        debug_assert_eq!(p.len(), m * n);
        let h = m / 2;
        // The first half is the shorter.
        let halves = worth_threads::<T>(m, k, n)
            && rayon::current_num_threads() > 1
            && general_kernel(h, k, n)
            && !small_blocks(h, n);
        // Rows `from..from + p.len() / n`: the product into scratch `g`, then the update.
        let part = |p: &mut [T], from: usize, mut g: Vec<T>| {
            let rows = p.len() / n;
            // SAFETY: `g` has room for the rows·n elements (allocated so below), written with
            // row stride n and never read before (`Overwrite`); `lhs` from row `from` reads
            // the product's rows `from..from + rows`, inside the slice (the whole product's
            // reads are, checked by `product`, and `from < m`).
            unsafe {
                product(
                    (g.as_mut_ptr(), rows * n),
                    &lhs[from * l.row as usize..],
                    l,
                    rhs,
                    r,
                    (rows, k, n),
                    Dst::Overwrite,
                    false,
                );
                g.set_len(rows * n);
            }
            update(p, &g, rate);
        };
        // Scratch for every part first: an allocation that fails leaves `param` unchanged.
        if halves {
            let (g0, g1) = (
                alloc::try_vec::<T>(&[h, n])?,
                alloc::try_vec::<T>(&[m - h, n])?,
            );
            let (first, second) = p.split_at_mut(h * n);
            rayon::join(|| part(first, 0, g0), || part(second, h, g1));
        } else {
            part(p, 0, alloc::try_vec::<T>(&[m, n])?);
        }
        Ok(true)
    }
    let (a, b) = ((&a, transpose_a), (&b, transpose_b));
    match dtype {
        DType::F32 => run::<f32>(
            param,
            a,
            b,
            f32::slice(rate.try_data()?).expect("float32")[0],
            (m, k, n),
        ),
        DType::F64 => run::<f64>(
            param,
            a,
            b,
            f64::slice(rate.try_data()?).expect("float64")[0],
            (m, k, n),
        ),
        _ => unreachable!("checked float"),
    }
}

/// `p = p - rate * g` elementwise with the unfused update's roundings (`rate * g` rounded,
/// then the subtraction; never contracted into one fused multiply-add), compiled for the
/// machine's vector instruction set.
fn update<T>(p: &mut [T], g: &[T], rate: T)
where
    T: Copy + std::ops::Mul<Output = T> + std::ops::Sub<Output = T>,
{
    crate::loops::dispatch_fn(
        #[inline(always)]
        || {
            for (p, &g) in p.iter_mut().zip(g) {
                *p = *p - rate * g;
            }
        },
    )
}

/// The operands of one [`Tensor::gemm`]: `op(a) @ op(b) + c`.
pub struct GemmCall<'a> {
    pub a: &'a Tensor,
    pub b: &'a Tensor,
    pub c: Option<Tensor>,
    pub transpose_a: bool,
    pub transpose_b: bool,
}

impl GemmCall<'_> {
    /// Multiply-adds of the product, if its operands are matrices.
    fn size(&self) -> Option<usize> {
        let (&[ar, ac], &[br, bc]) = (&self.a.shape[..], &self.b.shape[..]) else {
            return None;
        };
        let n = if self.transpose_b { br } else { bc };
        Some(ar.saturating_mul(ac).saturating_mul(n))
    }

    fn run(self) -> Result<Tensor> {
        Tensor::gemm(self.a, self.b, self.c, self.transpose_a, self.transpose_b)
    }

    /// [`GemmCall::run`] on this thread alone. The flag is restored however the call ends,
    /// so that a panic caught further up does not leave this pool thread single-threaded.
    fn run_on_one_core(self) -> Result<Tensor> {
        struct Restore(bool);
        impl Drop for Restore {
            fn drop(&mut self) {
                ONE_CORE.set(self.0);
            }
        }
        let _restore = Restore(ONE_CORE.replace(true));
        self.run()
    }
}

/// Products smaller than this run one after the other in [`gemm_pair`]: below it, waking a
/// second thread costs more than the overlap saves.
const PAIR_MIN: usize = 1 << 18;

/// A pair runs side by side only when the larger product is at most this many times the
/// smaller: otherwise one core would finish early and wait while the larger ran alone on one
/// thread, where gemm's own threads would have used both.
const PAIR_RATIO: usize = 4;

/// [`Tensor::gemm_pair`].
pub(crate) fn gemm_pair(first: GemmCall, second: GemmCall) -> (Result<Tensor>, Result<Tensor>) {
    let side_by_side = match (first.size(), second.size()) {
        (Some(p), Some(q)) => {
            let (small, large) = (p.min(q), p.max(q));
            small >= PAIR_MIN && large / PAIR_RATIO <= small
        }
        _ => false,
    };
    if side_by_side && rayon::current_num_threads() > 1 && !ONE_CORE.get() {
        rayon::join(|| first.run_on_one_core(), || second.run_on_one_core())
    } else {
        (first.run(), second.run())
    }
}

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

/// The shapes of a product `a @ b`: `batch` products of `m×k` by `k×n` matrices, and the
/// result's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatmulShape {
    pub batch: Vec<usize>,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    pub shape: Vec<usize>,
}

/// The shapes of `a @ b` by numpy's `matmul` rules, or numpy's errors (too few dimensions,
/// core dimensions that differ, batch dimensions that do not broadcast). Every device's
/// product checks shapes with it.
pub fn matmul_plan(a_shape: &[usize], b_shape: &[usize]) -> Result<MatmulShape> {
    if a_shape.is_empty() {
        return Err(not_enough_dims(0));
    }
    if b_shape.is_empty() {
        return Err(not_enough_dims(1));
    }
    let (a_batch, m, k) = core(a_shape, true);
    let (b_batch, k2, n) = core(b_shape, false);
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
                remapped(a_shape, a_batch),
                remapped(b_shape, b_batch)
            ),
        )
    })?;
    let mut shape = batch.clone();
    if a_shape.len() > 1 {
        shape.push(m);
    }
    if b_shape.len() > 1 {
        shape.push(n);
    }
    Ok(MatmulShape {
        batch,
        m,
        k,
        n,
        shape,
    })
}

pub(crate) fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let MatmulShape {
        batch,
        m,
        k,
        n,
        shape,
    } = matmul_plan(&a.shape, &b.shape)?;
    let (a_batch, b_batch) = (
        core(&a.shape, true).0.to_vec(),
        core(&b.shape, false).0.to_vec(),
    );
    let dtype = promote_types(a.dtype(), b.dtype());
    // numpy's size check of the result (its "array is too big"), then the memory cap, before
    // copying the operands.
    alloc::check_size(&shape, dtype)?;
    let plan = Plan {
        a_batch_strides: broadcast_strides(&a_batch, &batch),
        b_batch_strides: broadcast_strides(&b_batch, &batch),
        batch,
        shape,
        m,
        k,
        n,
    };
    let (a, b) = (a.try_cast(dtype)?, b.try_cast(dtype)?);
    let storage = match (a.try_data()?, b.try_data()?) {
        (Storage::Bool(x), Storage::Bool(y)) => Storage::Bool(plan.run(x, y)?),
        (Storage::I32(x), Storage::I32(y)) => Storage::I32(plan.run(x, y)?),
        (Storage::I64(x), Storage::I64(y)) => Storage::I64(plan.run(x, y)?),
        (Storage::F32(x), Storage::F32(y)) => Storage::F32(plan.run(x, y)?),
        (Storage::F64(x), Storage::F64(y)) => Storage::F64(plan.run(x, y)?),
        _ => unreachable!("operands were cast to {dtype}"),
    };
    Ok(Tensor::from_storage(storage, plan.shape))
}

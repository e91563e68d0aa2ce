//! Float32 products for linear layers on a batch: `c = a · b`, then `+ c`, `+ row` and ReLU
//! as the sums are stored, for right operands whose block of 64 columns stays in L1 while
//! the tiles of rows run past it.
//!
//! Each result is one sum taken in order of `p`, from `+0.0`, one fused multiply-add per
//! term; what `finish` adds is added last (`(a · b) + c`, as the unfused ops round it), and
//! ReLU is applied to that (`maximum(x, 0)`, NaN kept). So a row's bits depend neither on the
//! other rows nor on the tiling: any split of the rows or columns gives the same bits.

use std::arch::x86_64::*;

use super::{available, lane_mask};
use crate::matmul::Finish;

/// The columns of one block: four vectors, so a tile of six rows keeps its 24 sums, the
/// block's four vectors of `b` and a broadcast element of `a` in the 32 registers.
const BLOCK: usize = 64;

/// `c = a · b`, finished per `finish`, then ReLU when `relu`: `a` is m×k read with row and
/// column strides `(lda, acol)` (a transposed operand read in place), `b` k×n (row stride
/// `ldb`), `c` m×n (row stride `ldc`), both with unit column stride.
///
/// The columns go in blocks of up to 64 (four vectors, the last masked), each block's rows in
/// tiles whose sums stay in registers over all of `k`: 24 sums per tile (24 rows of one
/// vector, 12 of two, 8 of three, 6 of four), then tiles of 4 and 1 rows for the rest.
///
/// # Safety
/// `c` is valid for writing (and, with [`Finish::Accumulate`], reading) the m rows of n
/// elements at stride `ldc`, and nothing else accesses them during the call.
pub(crate) unsafe fn matrix_product(
    (m, k, n): (usize, usize, usize),
    (a, lda, acol): (&[f32], usize, usize),
    (b, ldb): (&[f32], usize),
    (c, ldc): (*mut f32, usize),
    finish: Finish,
    relu: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(available() && n <= ldc);
    assert!(k == 0 || ((m - 1) * lda + (k - 1) * acol < a.len() && (k - 1) * ldb + n <= b.len()));
    let (accumulate, row) = match finish {
        Finish::Store => (false, std::ptr::null()),
        Finish::Accumulate => (true, std::ptr::null()),
        Finish::AddRow(row) => {
            assert_eq!(row.len(), n);
            (false, row.as_ptr())
        }
    };
    let ops = Operands {
        row,
        a: a.as_ptr(),
        lda,
        acol,
        b: b.as_ptr(),
        ldb,
        c,
        ldc,
        k,
        accumulate,
        relu,
        last: 0,
    };
    let mut j = 0;
    while j < n {
        let cols = (n - j).min(BLOCK);
        let vectors = cols.div_ceil(16);
        let block = ops.at_column(j, lane_mask(cols - 16 * (vectors - 1)));
        // SAFETY: AVX-512F is checked; the block's columns are below `n`, inside `b`'s and
        // `c`'s rows (asserted above), its last vector masked to them.
        unsafe {
            match vectors {
                1 => rows::<24, 1>(&block, m),
                2 => rows::<12, 2>(&block, m),
                3 => rows::<8, 3>(&block, m),
                _ => rows::<6, 4>(&block, m),
            }
        }
        j += cols;
    }
}

/// The operands of [`matrix_product`] from one row and column on.
#[derive(Clone, Copy)]
struct Operands {
    a: *const f32,
    lda: usize,
    acol: usize,
    b: *const f32,
    ldb: usize,
    c: *mut f32,
    ldc: usize,
    k: usize,
    accumulate: bool,
    relu: bool,
    /// The row added to every row of sums ([`Finish::AddRow`]), or null.
    row: *const f32,
    /// The lanes of the block's last vector.
    last: __mmask16,
}

impl Operands {
    /// The same operands from row `i` of the result on.
    fn at_row(&self, i: usize) -> Operands {
        Operands {
            a: self.a.wrapping_add(i * self.lda),
            c: self.c.wrapping_add(i * self.ldc),
            ..*self
        }
    }

    /// The block of columns from `j` on whose last vector has lanes `last`.
    fn at_column(&self, j: usize, last: __mmask16) -> Operands {
        Operands {
            b: self.b.wrapping_add(j),
            c: self.c.wrapping_add(j),
            row: if self.row.is_null() {
                self.row
            } else {
                self.row.wrapping_add(j)
            },
            last,
            ..*self
        }
    }
}

/// The m rows of one block of `V` vectors: tiles of `R` rows, then of 4 and 1.
///
/// # Safety
/// AVX-512F; `ops` holds m rows of the block.
#[target_feature(enable = "avx512f")]
unsafe fn rows<const R: usize, const V: usize>(ops: &Operands, m: usize) {
    let mut i = 0;
    // SAFETY: the caller's contract; each tile takes rows below `m`.
    unsafe {
        while m - i >= R {
            tile::<R, V>(&ops.at_row(i));
            i += R;
        }
        while m - i >= 4 {
            tile::<4, V>(&ops.at_row(i));
            i += 4;
        }
        while i < m {
            tile::<1, V>(&ops.at_row(i));
            i += 1;
        }
    }
}

/// The lanes of vector `v` of a block of `V`.
#[inline(always)]
fn lanes<const V: usize>(ops: &Operands, v: usize) -> __mmask16 {
    if v + 1 == V { ops.last } else { 0xffff }
}

/// `R` rows of a block of `V` vectors: the sums in registers over all of `k`, then finished
/// and stored. Constant index loops, so that LLVM keeps the sums in registers.
///
/// # Safety
/// AVX-512F; `ops` holds `R` rows of the block from its first.
#[target_feature(enable = "avx512f")]
#[allow(clippy::needless_range_loop)]
unsafe fn tile<const R: usize, const V: usize>(ops: &Operands) {
    // SAFETY: the caller's contract; masked lanes are neither read nor written.
    unsafe {
        let mut acc = [[_mm512_setzero_ps(); V]; R];
        for p in 0..ops.k {
            let bp = ops.b.add(p * ops.ldb);
            let mut bv = [_mm512_setzero_ps(); V];
            for v in 0..V {
                bv[v] = _mm512_maskz_loadu_ps(lanes::<V>(ops, v), bp.add(16 * v));
            }
            for r in 0..R {
                let x = _mm512_set1_ps(*ops.a.add(r * ops.lda + p * ops.acol));
                for v in 0..V {
                    acc[r][v] = _mm512_fmadd_ps(x, bv[v], acc[r][v]);
                }
            }
        }
        let mut row = [_mm512_setzero_ps(); V];
        if !ops.row.is_null() {
            for v in 0..V {
                row[v] = _mm512_maskz_loadu_ps(lanes::<V>(ops, v), ops.row.add(16 * v));
            }
        }
        let zero = _mm512_setzero_ps();
        for r in 0..R {
            for v in 0..V {
                let lanes = lanes::<V>(ops, v);
                let out = ops.c.add(r * ops.ldc + 16 * v);
                let mut s = acc[r][v];
                if ops.accumulate {
                    s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(lanes, out));
                } else if !ops.row.is_null() {
                    s = _mm512_add_ps(s, row[v]);
                }
                if ops.relu {
                    // `s` where `s > 0` or NaN, else +0.0 (`-0.0` too), as ReLU's kernel.
                    let keep = _mm512_cmp_ps_mask::<_CMP_NLE_UQ>(s, zero);
                    s = _mm512_maskz_mov_ps(keep, s);
                }
                _mm512_mask_storeu_ps(out, lanes, s);
            }
        }
    }
}

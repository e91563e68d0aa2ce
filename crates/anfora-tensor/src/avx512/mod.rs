//! Kernels written out with AVX-512 intrinsics, where LLVM's vectorization of the plain loops
//! depends on how they are inlined or falls back to library calls.
//!
//! * Rows of float32 max pooling over 2×2 tiles (windows 2×2, stride 2, no padding, even plane
//!   sizes): sixteen windows at a time, the even and odd columns of each input row separated
//!   with one permutation each, and the first-maximum rule of `nn::pool::replaces` as mask
//!   operations. LLVM's vectorization of the same loops gave anything from 1.5× faster to 6×
//!   slower than the scalar code depending on inlining; written out, the kernels are the same
//!   wherever they are called from. Results are bitwise those of the scalar rows in `nn::pool`
//!   (tested there): the same comparisons in the same order select the same elements.
//! * Short runs of float32 for the convolutions' `im2col` ([`Runs`]): copies of 4 to 30
//!   elements, one masked vector operation each instead of a `memmove` call (LeNet's
//!   convolution forward and filter gradient 5–8 % faster). Not for `col2im`'s additions: a
//!   masked load that overlaps the previous masked store cannot take its value from the store
//!   buffer, and the input gradient ran 1.7× slower.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;
use std::sync::OnceLock;

mod product;

pub(crate) use product::matrix_product;

/// Whether the machine has AVX-512F.
pub(crate) fn available() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::arch::is_x86_feature_detected!("avx512f"))
}

/// The mask of the first `k` of a vector's 16 lanes (all of them from 16 on).
#[inline(always)]
pub(crate) fn lane_mask(k: usize) -> __mmask16 {
    if k >= 16 { 0xffff } else { (1u16 << k) - 1 }
}

/// Lane masks of a block of `m` (≤ 16) windows: the two input halves (2m elements) and the
/// output.
#[inline(always)]
fn masks(m: usize) -> (__mmask16, __mmask16, __mmask16) {
    (
        lane_mask(2 * m),
        lane_mask((2 * m).saturating_sub(16)),
        lane_mask(m),
    )
}

/// Where `v`, met after `best`, becomes the maximum: `v > best` or either is NaN, unless `best`
/// is NaN (`nn::pool::replaces`).
#[inline]
#[target_feature(enable = "avx512f")]
fn replaces(v: __m512, best: __m512) -> __mmask16 {
    let wins = _mm512_cmp_ps_mask::<_CMP_NLE_UQ>(v, best);
    let best_nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(best, best);
    wins & !best_nan
}

/// The first maximum of `a` then `b` lane by lane, and where it is `b`.
#[inline]
#[target_feature(enable = "avx512f")]
fn first_max(a: __m512, b: __m512) -> (__m512, __mmask16) {
    let take = replaces(b, a);
    (_mm512_mask_blend_ps(take, a, b), take)
}

/// The even and odd elements of `2m` consecutive floats at `p`.
///
/// # Safety
/// `p` is valid for reading `2m` floats (masked loads read no more).
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn split(p: *const f32, lo: __mmask16, hi: __mmask16) -> (__m512, __m512) {
    let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    // SAFETY: the masks cover the elements the caller vouches for.
    let (a, b) = unsafe {
        (
            _mm512_maskz_loadu_ps(lo, p),
            _mm512_maskz_loadu_ps(hi, p.add(16)),
        )
    };
    (
        _mm512_permutex2var_ps(a, even, b),
        _mm512_permutex2var_ps(a, odd, b),
    )
}

/// Stores one input row's share of sixteen windows' gradient as `2m` consecutive floats at
/// `p`: window `i`'s `s[i]` in its left column where `row & !right` holds for it, in its right
/// column where `row & right` holds, zeros elsewhere.
///
/// # Safety
/// `p` is valid for writing `2m` floats.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn join(
    p: *mut f32,
    s: __m512,
    (row, right): (__mmask16, __mmask16),
    lo: __mmask16,
    hi: __mmask16,
) {
    let even = _mm512_maskz_mov_ps(row & !right, s);
    let odd = _mm512_maskz_mov_ps(row & right, s);
    let first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    let second = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    // SAFETY: the masks cover the elements the caller vouches for.
    unsafe {
        _mm512_mask_storeu_ps(p, lo, _mm512_permutex2var_ps(even, first, odd));
        _mm512_mask_storeu_ps(p.add(16), hi, _mm512_permutex2var_ps(even, second, odd));
    }
}

/// Sixteen windows of two rows (their columns from `r0` and `r1`, `lo`/`hi` as in [`split`]):
/// each window's first maximum, and where it is: in the right column of the top row, in the
/// right column of the bottom row, in the bottom row.
///
/// # Safety
/// As for [`split`], for both rows.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn windows(
    r0: *const f32,
    r1: *const f32,
    lo: __mmask16,
    hi: __mmask16,
) -> (__m512, [__mmask16; 3]) {
    // SAFETY: the caller's contract.
    let ((a, b), (c, d)) = unsafe { (split(r0, lo, hi), split(r1, lo, hi)) };
    let (top, right0) = first_max(a, b);
    let (bottom, right1) = first_max(c, d);
    let (best, low) = first_max(top, bottom);
    (best, [right0, right1, low])
}

/// Rows of output: for each pair of input rows of `x` (rows `w` long, `w = 2 · ow`), the row of
/// `out` (`ow` long) whose element `i` is the first maximum of the window of columns `2i, 2i + 1`
/// of the first row then the second.
#[target_feature(enable = "avx512f")]
pub(crate) fn forward(x: &[f32], out: &mut [MaybeUninit<f32>], ow: usize) {
    let w = 2 * ow;
    assert!(ow > 0 && x.len() == 2 * w * (out.len() / ow) && out.len().is_multiple_of(ow));
    for (rows, o) in x.chunks_exact(2 * w).zip(out.chunks_exact_mut(ow)) {
        let (r0, r1) = rows.split_at(w);
        for j in (0..ow).step_by(16) {
            let (lo, hi, m) = masks(ow - j);
            // SAFETY: windows j..j + 16 (masked to ow) read columns 2j..w of both rows and
            // write o[j..ow].
            unsafe {
                let (best, _) = windows(r0.as_ptr().add(2 * j), r1.as_ptr().add(2 * j), lo, hi);
                _mm512_mask_storeu_ps(o.as_mut_ptr().cast::<f32>().add(j), m, best);
            }
        }
    }
}

/// The gradient of [`forward`]: each window's sensitivity (`d`, shaped like `out`, added to
/// zero) goes to its first maximum in `dx` (shaped like `x`), zero to its three other elements.
#[target_feature(enable = "avx512f")]
pub(crate) fn backward(x: &[f32], d: &[f32], dx: &mut [MaybeUninit<f32>], ow: usize) {
    let w = 2 * ow;
    assert!(ow > 0 && x.len() == 2 * w * (d.len() / ow) && d.len().is_multiple_of(ow));
    assert_eq!(dx.len(), x.len());
    let zero = _mm512_setzero_ps();
    for ((r0, r1), (dx0, dx1), dr) in crate::loops::tile_row_pairs(x, dx, d, (w, ow)) {
        for j in (0..ow).step_by(16) {
            let (lo, hi, m) = masks(ow - j);
            // SAFETY: as in `forward`, plus dr[j..ow] read and columns 2j..w of the two
            // rows of dx written.
            unsafe {
                let (_, [right0, right1, low]) =
                    windows(r0.as_ptr().add(2 * j), r1.as_ptr().add(2 * j), lo, hi);
                let s = _mm512_add_ps(zero, _mm512_maskz_loadu_ps(m, dr.as_ptr().add(j)));
                join(
                    dx0.as_mut_ptr().cast::<f32>().add(2 * j),
                    s,
                    (!low, right0),
                    lo,
                    hi,
                );
                join(
                    dx1.as_mut_ptr().cast::<f32>().add(2 * j),
                    s,
                    (low, right1),
                    lo,
                    hi,
                );
            }
        }
    }
}

/// Moves runs of consecutive float32 elements with 16-lane vector operations, the last one
/// masked.
pub(crate) struct Runs;

impl Runs {
    /// `dst = src` (same lengths), 16 elements at a time, the last vector masked. Inlined
    /// only into functions compiled with AVX-512F.
    ///
    /// # Safety
    /// The machine has AVX-512F.
    #[inline(always)]
    pub(crate) unsafe fn copy(dst: &mut [f32], src: &[f32]) {
        let n = dst.len();
        assert_eq!(n, src.len());
        let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
        let mut i = 0;
        // SAFETY: every access is below n in both slices (full vectors while i + 16 <= n, then
        // masked to n); the caller vouches for the instructions.
        unsafe {
            while i + 16 <= n {
                _mm512_storeu_ps(d.add(i), _mm512_loadu_ps(s.add(i)));
                i += 16;
            }
            if i < n {
                let m: __mmask16 = (1 << (n - i)) - 1;
                _mm512_mask_storeu_ps(d.add(i), m, _mm512_maskz_loadu_ps(m, s.add(i)));
            }
        }
    }
}

/// `y[j] += Σ_p x[p] · w[p·ld + j]` over `p < x.len()`, `j < y.len()`: a row vector times a
/// row-major matrix (row stride `ld`), each sum taken in order of `p` with one fused
/// multiply-add per term.
///
/// The columns go in blocks of up to 256 (sixteen vectors held in registers while the rows
/// stream past), then smaller blocks and one masked vector for the last columns.
pub(crate) fn vector_matrix(y: &mut [f32], x: &[f32], w: &[f32], ld: usize) {
    let Some((k, n)) = checked_sizes(y, x, w, ld, false) else {
        return;
    };
    // SAFETY: AVX-512F is checked; `columns` reads rows `p < k` at `p·ld + j0 + ..` for
    // columns below `n`, inside `w` (asserted), and writes `y[j0..]` within `n`.
    unsafe {
        let (y, x, w) = (y.as_mut_ptr(), x.as_ptr(), w.as_ptr());
        let mut j = 0;
        while n - j >= 256 {
            columns::<16, false>(y.add(j), x, k, w.add(j), ld, 0);
            j += 256;
        }
        for (width, step) in [(128, 8), (64, 4), (32, 2), (16, 1)] {
            if n - j >= width {
                match step {
                    8 => columns::<8, false>(y.add(j), x, k, w.add(j), ld, 0),
                    4 => columns::<4, false>(y.add(j), x, k, w.add(j), ld, 0),
                    2 => columns::<2, false>(y.add(j), x, k, w.add(j), ld, 0),
                    _ => columns::<1, false>(y.add(j), x, k, w.add(j), ld, 0),
                }
                j += width;
            }
        }
        if j < n {
            columns::<1, true>(y.add(j), x, k, w.add(j), ld, (1 << (n - j)) - 1);
        }
    }
}

/// [`vector_matrix`] over `16·V` columns; with `MASKED`, the last vector's lanes are limited
/// to `last`.
///
/// # Safety
/// AVX-512F; `y` holds the block's columns and `w` its `k` rows at stride `ld`.
#[target_feature(enable = "avx512f")]
unsafe fn columns<const V: usize, const MASKED: bool>(
    y: *mut f32,
    x: *const f32,
    k: usize,
    w: *const f32,
    ld: usize,
    last: __mmask16,
) {
    // Only the last vector of a masked block is masked.
    let lanes = |v: usize| if MASKED && v + 1 == V { last } else { 0xffff };
    // SAFETY: the caller's contract; masked lanes are neither read nor written.
    unsafe {
        let mut acc = [_mm512_setzero_ps(); V];
        for (v, a) in acc.iter_mut().enumerate() {
            *a = _mm512_maskz_loadu_ps(lanes(v), y.add(16 * v));
        }
        for p in 0..k {
            let xp = _mm512_set1_ps(*x.add(p));
            let row = w.add(p * ld);
            for (v, a) in acc.iter_mut().enumerate() {
                let wv = if MASKED && v + 1 == V {
                    _mm512_maskz_loadu_ps(last, row.add(16 * v))
                } else {
                    _mm512_loadu_ps(row.add(16 * v))
                };
                *a = _mm512_fmadd_ps(xp, wv, *a);
            }
        }
        for (v, a) in acc.iter().enumerate() {
            _mm512_mask_storeu_ps(y.add(16 * v), lanes(v), *a);
        }
    }
}

/// `y[j] += Σ_p x[p] · w[j·ld + p]` over `p < x.len()`, `j < y.len()`: a row vector times the
/// transpose of a row-major matrix (`x @ w.T` with `w` stored (n, k), row stride `ld`, as a
/// linear layer's weight often is). One dot product per result: lane `l` of a vector sums the
/// terms `p ≡ l (mod 16)` in order of `p` with fused multiply-adds, the sixteen lanes are
/// then added pairwise (`l` and `l + 8`, then `+ 4`, `+ 2`, `+ 1`), and the sum is added to
/// `y[j]` last. Four rows of `w` go at a time.
pub(crate) fn vector_matrix_transposed(y: &mut [f32], x: &[f32], w: &[f32], ld: usize) {
    let Some((k, n)) = checked_sizes(y, x, w, ld, true) else {
        return;
    };
    let fours = n - n % 4;
    // SAFETY: AVX-512F is checked; `dots` reads rows `j < n` of `w`, `k` elements each, inside
    // `w` (asserted), and writes `y[j..j + R]` within `n`.
    unsafe {
        let (y, x, w) = (y.as_mut_ptr(), x.as_ptr(), w.as_ptr());
        for j in (0..fours).step_by(4) {
            dots::<4>(y.add(j), x, k, w.add(j * ld), ld);
        }
        for j in fours..n {
            dots::<1>(y.add(j), x, k, w.add(j * ld), ld);
        }
    }
}

/// The sizes `(k, n)` of `y += x · W`, with `W` (`k×n`, or its transpose `n×k` when
/// `transposed`) stored at row stride `ld` in `w`, once the machine's AVX-512F and the bounds
/// of `w` are checked; `None` for an empty product.
fn checked_sizes(
    y: &[f32],
    x: &[f32],
    w: &[f32],
    ld: usize,
    transposed: bool,
) -> Option<(usize, usize)> {
    let (k, n) = (x.len(), y.len());
    if k == 0 || n == 0 {
        return None;
    }
    // The rows of `w` read, and the elements read of each.
    let (rows, row) = if transposed { (n, k) } else { (k, n) };
    assert!(available() && row <= ld && (rows - 1) * ld + row <= w.len());
    Some((k, n))
}

/// [`vector_matrix_transposed`] for `R` consecutive rows of `w`.
///
/// # Safety
/// AVX-512F; `y` holds `R` results and `w` `R` rows of `k` elements at stride `ld`.
#[target_feature(enable = "avx512f")]
unsafe fn dots<const R: usize>(y: *mut f32, x: *const f32, k: usize, w: *const f32, ld: usize) {
    // SAFETY: the caller's contract; the last vector is masked to `k`.
    unsafe {
        let mut acc = [_mm512_setzero_ps(); R];
        let mut p = 0;
        while p < k {
            let lanes: __mmask16 = if k - p >= 16 {
                0xffff
            } else {
                (1 << (k - p)) - 1
            };
            let xv = _mm512_maskz_loadu_ps(lanes, x.add(p));
            for (r, a) in acc.iter_mut().enumerate() {
                let wv = _mm512_maskz_loadu_ps(lanes, w.add(r * ld + p));
                *a = _mm512_fmadd_ps(xv, wv, *a);
            }
            p += 16;
        }
        for (r, a) in acc.iter().enumerate() {
            *y.add(r) += lane_sum(*a);
        }
    }
}

/// The sixteen lanes of `v` added pairwise: `l` and `l + 8`, then `+ 4`, `+ 2`, `+ 1`.
#[target_feature(enable = "avx512f")]
fn lane_sum(v: __m512) -> f32 {
    let halves = _mm256_add_ps(
        _mm512_castps512_ps256(v),
        _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v))),
    );
    let quarters = _mm_add_ps(
        _mm256_castps256_ps128(halves),
        _mm256_extractf128_ps::<1>(halves),
    );
    let pairs = _mm_add_ps(quarters, _mm_movehl_ps(quarters, quarters));
    _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps::<1>(pairs, pairs)))
}

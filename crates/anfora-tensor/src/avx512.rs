//! Kernels written out with AVX-512 intrinsics, where LLVM's vectorization of the plain loops
//! depends on how they are inlined or falls back to library calls.
//!
//! * Rows of float32 max pooling over 2×2 tiles (windows 2×2, stride 2, no padding, even plane
//!   sizes): sixteen windows at a time, the even and odd columns of each input row separated
//!   with one permutation each, and the first-maximum rule of `nn::replaces` as mask
//!   operations. LLVM's vectorization of the same loops gave anything from 1.5× faster to 6×
//!   slower than the scalar code depending on inlining; written out, the kernels are the same
//!   wherever they are called from. Results are bitwise those of the scalar rows in `nn`
//!   (tested there): the same comparisons in the same order select the same elements.
//! * Short runs of float32 for the convolutions' `im2col` ([`Runs`]): copies of 4 to 30
//!   elements, one masked vector operation each instead of a `memmove` call (LeNet's
//!   convolution forward and filter gradient 5–8 % faster). Not for `col2im`'s additions: a
//!   masked load that overlaps the previous masked store cannot take its value from the store
//!   buffer, and the input gradient ran 1.7× slower.

use std::arch::x86_64::*;
use std::sync::OnceLock;

/// Whether the machine has AVX-512F.
pub(crate) fn available() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::arch::is_x86_feature_detected!("avx512f"))
}

/// Lane masks of a block of `m` (≤ 16) windows: the two input halves (2m elements) and the
/// output.
#[inline(always)]
fn masks(m: usize) -> (__mmask16, __mmask16, __mmask16) {
    let bits = |k: usize| -> __mmask16 { if k >= 16 { 0xffff } else { (1u16 << k) - 1 } };
    (bits(2 * m), bits((2 * m).saturating_sub(16)), bits(m))
}

/// Where `v`, met after `best`, becomes the maximum: `v > best` or either is NaN, unless `best`
/// is NaN (`nn::replaces`).
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
pub(crate) fn forward(x: &[f32], out: &mut [f32], ow: usize) {
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
                _mm512_mask_storeu_ps(o.as_mut_ptr().add(j), m, best);
            }
        }
    }
}

/// The gradient of [`forward`]: each window's sensitivity (`d`, shaped like `out`, added to
/// zero) goes to its first maximum in `dx` (shaped like `x`), zero to its three other elements.
#[target_feature(enable = "avx512f")]
pub(crate) fn backward(x: &[f32], d: &[f32], dx: &mut [f32], ow: usize) {
    let w = 2 * ow;
    assert!(ow > 0 && x.len() == 2 * w * (d.len() / ow) && d.len().is_multiple_of(ow));
    assert_eq!(dx.len(), x.len());
    let zero = _mm512_setzero_ps();
    for ((rows, dxr), dr) in x
        .chunks_exact(2 * w)
        .zip(dx.chunks_exact_mut(2 * w))
        .zip(d.chunks_exact(ow))
    {
        let (r0, r1) = rows.split_at(w);
        let (dx0, dx1) = dxr.split_at_mut(w);
        for j in (0..ow).step_by(16) {
            let (lo, hi, m) = masks(ow - j);
            // SAFETY: as in `forward`, plus dr[j..ow] read and columns 2j..w of the two
            // rows of dx written.
            unsafe {
                let (_, [right0, right1, low]) =
                    windows(r0.as_ptr().add(2 * j), r1.as_ptr().add(2 * j), lo, hi);
                let s = _mm512_add_ps(zero, _mm512_maskz_loadu_ps(m, dr.as_ptr().add(j)));
                join(dx0.as_mut_ptr().add(2 * j), s, (!low, right0), lo, hi);
                join(dx1.as_mut_ptr().add(2 * j), s, (low, right1), lo, hi);
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

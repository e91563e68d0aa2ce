//! Direct float32 convolutions for small stride-1 kernels (LeNet's), with the output channels
//! as the sixteen lanes of AVX-512 vectors, instead of `im2col` and a matrix product.
//!
//! Small convolutions make small products (LeNet's second layer: 16×150 by 150×64 per image),
//! on which gemm runs far below its peak, and `im2col` copies every input element `KH·KW`
//! times on top. Here each output position's vector of channels is a sum of tap weight
//! vectors (one per `(c, ki, kj)`, the weights transposed once per call) times input elements
//! broadcast straight from the image: the image is read in place and every multiply-add is a
//! useful one, except for the lanes past the last channel of a group.
//!
//! * The forward pass keeps up to 24 output positions of one output row in registers and runs
//!   the taps past them: one weight vector load for up to 24 multiply-adds.
//! * The filter gradient keeps up to 28 taps of one input channel (rows of `KW ≤ 7` taps) in
//!   registers and runs the output positions past them, the output gradient transposed per
//!   image so that a position's channels are one vector.
//!
//! Sums are taken in a fixed order with one fused multiply-add per term: each output over the
//! taps `(c, ki, kj)` in order, starting from zero; each filter-gradient element over the
//! images of a part and their output positions in order, added to what the part's buffer
//! holds.

use std::arch::x86_64::*;

use crate::transpose::transpose;

/// Lanes of a vector: output channels per group.
const LANES: usize = 16;

/// The sizes of a direct convolution: one image `C×H×W`, weights `O×C×KH×KW`, stride 1, no
/// padding or dilation, one group; the output is `O×OH×OW` with `OH = H - KH + 1`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub o: usize,
    pub kh: usize,
    pub kw: usize,
}

impl Shape {
    pub fn oh(&self) -> usize {
        self.h + 1 - self.kh
    }
    pub fn ow(&self) -> usize {
        self.w + 1 - self.kw
    }
    /// Taps `(c, ki, kj)`.
    pub fn taps(&self) -> usize {
        self.c * self.kh * self.kw
    }
    /// Lane groups of the output channels.
    pub fn groups(&self) -> usize {
        self.o.div_ceil(LANES)
    }
    /// The lanes of all groups: the row length of the matrices with a vector per tap or
    /// position.
    pub fn width(&self) -> usize {
        self.groups() * LANES
    }
    /// Floats in a taps-by-lanes matrix (weights or their gradient, transposed).
    pub fn tap_matrix_len(&self) -> usize {
        self.taps() * self.width()
    }
    /// Floats in an image's output gradient transposed to positions by lanes.
    pub fn positions_len(&self) -> usize {
        self.oh() * self.ow() * self.width()
    }
}

/// Whether these kernels take a convolution of these sizes: AVX-512F, at least one input and
/// one output channel, kernels at most 7 wide, and small enough that gemm would run far below
/// its peak on it (at most 32 output channels and 512 taps), with at most 2^16 output
/// positions (the filter gradient's transposed output gradient is then at most 8 MB).
pub(crate) fn suits(s: &Shape) -> bool {
    crate::avx512::available()
        && s.c >= 1
        && s.o >= 1
        && s.kh >= 1
        && (1..=7).contains(&s.kw)
        && s.kh <= s.h
        && s.kw <= s.w
        && s.o <= 32
        && s.taps() <= 512
        && s.oh() * s.ow() <= 1 << 16
}

/// The weights `O×C×KH×KW` as taps by lanes: `wt[t·L + o]` (`L` the lanes of all groups),
/// zeros in the lanes past `O`.
pub(crate) fn tap_matrix(w: &[f32], s: &Shape) -> Vec<f32> {
    let mut wt = vec![0.0; s.tap_matrix_len()];
    transpose(w, s.taps(), s.o, s.taps(), &mut wt, s.width());
    wt
}

/// The transpose of [`tap_matrix`]: a taps-by-lanes matrix back to `O×C×KH×KW`.
pub(crate) fn from_tap_matrix(wt: &[f32], s: &Shape, w: &mut [f32]) {
    transpose(wt, s.width(), s.taps(), s.o, w, s.taps());
}

/// One image's output `out` (`O×OH×OW`) from its input `x` (`C×H×W`) and the weights as
/// [`tap_matrix`]. `out` is overwritten.
pub(crate) fn forward(x: &[f32], wt: &[f32], s: &Shape, out: &mut [f32]) {
    let (oh, ow, width) = (s.oh(), s.ow(), s.width());
    assert!(
        suits(s)
            && x.len() >= s.c * s.h * s.w
            && wt.len() >= s.tap_matrix_len()
            && out.len() >= s.o * oh * ow
    );
    let mut tile = [0.0f32; 24 * LANES];
    for g in 0..s.groups() {
        let lanes = (s.o - g * LANES).min(LANES);
        for oy in 0..oh {
            let mut ox = 0;
            while ox < ow {
                let q = [24, 16, 8, 4, 2, 1]
                    .into_iter()
                    .find(|&q| q <= ow - ox)
                    .expect("ow - ox >= 1");
                // SAFETY: AVX-512F is checked (`suits`); the tile reads input rows `oy + ki`
                // (< H), columns `ox + kj + q'` (< W since ox + q <= OW), of channels < C, all
                // inside `x`; tap rows `t < taps` of group `g` inside `wt`; and writes `q`
                // vectors into `tile`.
                unsafe {
                    let (xp, wp, tp) = (
                        x.as_ptr().add(oy * s.w + ox),
                        wt.as_ptr().add(g * LANES),
                        tile.as_mut_ptr(),
                    );
                    match q {
                        24 => forward_tile::<24>(xp, wp, width, s, tp),
                        16 => forward_tile::<16>(xp, wp, width, s, tp),
                        8 => forward_tile::<8>(xp, wp, width, s, tp),
                        4 => forward_tile::<4>(xp, wp, width, s, tp),
                        2 => forward_tile::<2>(xp, wp, width, s, tp),
                        _ => forward_tile::<1>(xp, wp, width, s, tp),
                    }
                }
                for o in 0..lanes {
                    let row = &mut out[(g * LANES + o) * oh * ow + oy * ow + ox..][..q];
                    for (i, v) in row.iter_mut().enumerate() {
                        *v = tile[i * LANES + o];
                    }
                }
                ox += q;
            }
        }
    }
}

/// `Q` consecutive output positions of one row, all sixteen lanes of one group, into `tile`
/// (`Q` vectors): the taps in order, each weight vector times the input element under it.
///
/// # Safety
/// AVX-512F; `x` points at the input element under the first position's tap `(0, 0, 0)` and
/// every tap of every position reads inside the image; `wt` at the group's lanes of tap 0,
/// with `taps` rows `width` apart; `tile` holds `Q` vectors.
#[target_feature(enable = "avx512f")]
unsafe fn forward_tile<const Q: usize>(
    x: *const f32,
    wt: *const f32,
    width: usize,
    s: &Shape,
    tile: *mut f32,
) {
    // SAFETY: the caller's contract.
    unsafe {
        let mut acc = [_mm512_setzero_ps(); Q];
        let mut tap = wt;
        for c in 0..s.c {
            for ki in 0..s.kh {
                let row = x.add((c * s.h + ki) * s.w);
                for kj in 0..s.kw {
                    let wv = _mm512_loadu_ps(tap);
                    tap = tap.add(width);
                    let src = row.add(kj);
                    for (q, a) in acc.iter_mut().enumerate() {
                        *a = _mm512_fmadd_ps(wv, _mm512_set1_ps(*src.add(q)), *a);
                    }
                }
            }
        }
        for (q, a) in acc.iter().enumerate() {
            _mm512_storeu_ps(tile.add(q * LANES), *a);
        }
    }
}

/// Adds one image's share of the filter gradient to `dwt` (a taps-by-lanes matrix, as
/// [`tap_matrix`]): `d` is the image's output gradient (`O×OH×OW`), `x` its input, `dt`
/// scratch of [`Shape::positions_len`] floats whose lanes past `O` hold zeros (as allocated;
/// only the lanes below `O` are written, so one buffer serves every image).
pub(crate) fn filter(d: &[f32], x: &[f32], s: &Shape, dt: &mut [f32], dwt: &mut [f32]) {
    let (positions, width) = (s.oh() * s.ow(), s.width());
    assert!(
        suits(s)
            && d.len() >= s.o * positions
            && x.len() >= s.c * s.h * s.w
            && dt.len() >= s.positions_len()
            && dwt.len() >= s.tap_matrix_len()
    );
    // Positions by lanes: each position's output channels one vector.
    transpose(d, positions, s.o, positions, dt, width);
    // Blocks of `rows` kernel rows of one input channel: rows × KW accumulators.
    let block = (28 / s.kw).min(5);
    for g in 0..s.groups() {
        for c in 0..s.c {
            let mut ki = 0;
            while ki < s.kh {
                let rows = block.min(s.kh - ki);
                let first_tap = (c * s.kh + ki) * s.kw;
                // SAFETY: AVX-512F is checked; the block reads `dt`'s positions (inside, as
                // filled above) at group `g`'s lanes, input rows `oy + ki + r < H` and columns
                // `ox + kj < W` of channel `c`, and the taps `first_tap ..` of its rows, which
                // lie inside `dwt`.
                unsafe {
                    let args = (
                        dt.as_ptr().add(g * LANES),
                        width,
                        x.as_ptr().add((c * s.h + ki) * s.w),
                        s,
                        dwt.as_mut_ptr().add(first_tap * width + g * LANES),
                    );
                    filter_block_dispatch(s.kw, rows, args);
                }
                ki += rows;
            }
        }
    }
}

type FilterArgs<'a> = (*const f32, usize, *const f32, &'a Shape, *mut f32);

/// [`filter_block`] for `kw` taps a row and `rows` rows (`rows · kw ≤ 28`, `kw ≤ 7`).
///
/// # Safety
/// As [`filter_block`].
unsafe fn filter_block_dispatch(kw: usize, rows: usize, (dt, width, x, s, dwt): FilterArgs<'_>) {
    macro_rules! by_rows {
        ($kw:literal, $($r:literal)*) => {
            match rows {
                // SAFETY: the caller's contract.
                $($r => unsafe { filter_block::<$kw, $r>(dt, width, x, s, dwt) },)*
                _ => unreachable!("rows per block are at most 28 / KW"),
            }
        };
    }
    match kw {
        1 => by_rows!(1, 1 2 3 4 5),
        2 => by_rows!(2, 1 2 3 4 5),
        3 => by_rows!(3, 1 2 3 4 5),
        4 => by_rows!(4, 1 2 3 4 5),
        5 => by_rows!(5, 1 2 3 4 5),
        6 => by_rows!(6, 1 2 3 4),
        7 => by_rows!(7, 1 2 3 4),
        _ => unreachable!("suits() takes kernels at most 7 wide"),
    }
}

/// `R` kernel rows of `KW` taps of one input channel, one lane group: each tap's vector of
/// output channels gains, over the output positions in order, the position's output-gradient
/// vector times the input element under the tap.
///
/// # Safety
/// AVX-512F; `dt` points at the group's lanes of position 0 (positions `width` apart); `x`
/// at row `ki` of the channel, with rows `ki .. ki + R + OH - 1` inside the image; `dwt` at
/// the group's lanes of the block's first tap, its `R·KW` taps `width` apart.
#[target_feature(enable = "avx512f")]
unsafe fn filter_block<const KW: usize, const R: usize>(
    dt: *const f32,
    width: usize,
    x: *const f32,
    s: &Shape,
    dwt: *mut f32,
) {
    let (oh, ow) = (s.oh(), s.ow());
    // SAFETY: the caller's contract.
    unsafe {
        let mut acc = [[_mm512_setzero_ps(); KW]; R];
        for (r, taps) in acc.iter_mut().enumerate() {
            for (kj, a) in taps.iter_mut().enumerate() {
                *a = _mm512_loadu_ps(dwt.add((r * KW + kj) * width));
            }
        }
        let mut dp = dt;
        for oy in 0..oh {
            let row = x.add(oy * s.w);
            for ox in 0..ow {
                let dv = _mm512_loadu_ps(dp);
                dp = dp.add(width);
                for (r, taps) in acc.iter_mut().enumerate() {
                    let src = row.add(r * s.w + ox);
                    for (kj, a) in taps.iter_mut().enumerate() {
                        *a = _mm512_fmadd_ps(dv, _mm512_set1_ps(*src.add(kj)), *a);
                    }
                }
            }
        }
        for (r, taps) in acc.iter().enumerate() {
            for (kj, a) in taps.iter().enumerate() {
                _mm512_storeu_ps(dwt.add((r * KW + kj) * width), *a);
            }
        }
    }
}

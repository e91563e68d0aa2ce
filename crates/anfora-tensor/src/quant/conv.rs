//! The direct 8-bit convolution (AVX-512 VNNI): no column matrix and no transpose.
//!
//! Each image is copied once into a buffer padded with the zero point. A kernel row of a
//! channel is then read as 4-byte words of that buffer (one word per four taps, the weights
//! past `KW` zero), gathered for 16 output pixels at a time, so one `vpdpbusd` adds four taps
//! of 16 pixels for one output channel. The sums of up to 16 channels stay in registers and
//! are requantized (or dequantized) straight into the (N, O, OH, OW) result: the pixels are
//! the lanes, so each channel's 16 results are adjacent.
//!
//! The sums are the integers the column-matrix path computes (padding bytes are the zero
//! point, taken out by the same per-channel offset), so both paths give identical results.

use std::sync::Arc;

use super::{DEPTH, PackCache, Sink};
use crate::Tensor;

/// Output channels whose sums one tile keeps in registers.
const CHANNELS: usize = 16;
/// The bytes one vector load reads.
const WINDOW: usize = 64;

/// A (C·KH·KW)×O `i8` weight matrix laid out for the direct kernel: for each group (channel
/// `c`, kernel row `i`, word `b` of the row) the O channels' words of four taps, channels
/// padded with zeros to a multiple of [`CHANNELS`].
#[derive(Clone, Debug)]
pub struct ConvWeights {
    kernel: [usize; 2],
    o: usize,
    /// Words per kernel row: `⌈KW / 4⌉`.
    row_words: usize,
    /// The channels of a group, padded.
    stride: usize,
    words: Vec<i32>,
    column_sums: Vec<i32>,
}

impl ConvWeights {
    /// Packs `w`, (C·KH·KW)×O row-major, the rows channel by channel and kernel row by row.
    pub fn pack(w: &[i8], k: usize, o: usize, kernel: [usize; 2]) -> ConvWeights {
        let [kh, kw] = kernel;
        assert_eq!(w.len(), k * o, "a {k}×{o} matrix");
        assert!(
            kh * kw > 0 && k.is_multiple_of(kh * kw),
            "{k} rows of {kh}×{kw} kernels"
        );
        let row_words = kw.div_ceil(DEPTH);
        let rows = k / kw;
        let stride = o.div_ceil(CHANNELS) * CHANNELS;
        let mut words = vec![0i32; rows * row_words * stride];
        for row in 0..rows {
            for b in 0..row_words {
                let group = row * row_words + b;
                for ch in 0..o {
                    let mut bytes = [0u8; DEPTH];
                    for (t, byte) in bytes.iter_mut().enumerate() {
                        let j = b * DEPTH + t;
                        if j < kw {
                            *byte = w[(row * kw + j) * o + ch] as u8;
                        }
                    }
                    words[group * stride + ch] = i32::from_le_bytes(bytes);
                }
            }
        }
        let column_sums = super::column_sums(w, k, o);
        ConvWeights {
            kernel,
            o,
            row_words,
            stride,
            words,
            column_sums,
        }
    }

    /// `Σ_p w[p, j]` for each output channel `j`.
    pub fn column_sums(&self) -> &[i32] {
        &self.column_sums
    }

    fn groups(&self) -> usize {
        self.words.len() / self.stride
    }
}

/// `w` packed for the direct kernel of `kernel`, once per weight tensor.
pub fn conv_weights(w: &Tensor, kernel: [usize; 2]) -> crate::Result<Arc<ConvWeights>> {
    static CACHE: PackCache<ConvWeights> = PackCache::new();
    let pack = || -> crate::Result<ConvWeights> {
        let (v, k, o) = super::i8_matrix(w)?;
        Ok(ConvWeights::pack(v, k, o, kernel))
    };
    let packed = CACHE.get(w, pack)?;
    if packed.kernel != kernel {
        // The same weights read as another kernel shape: packed for this call alone.
        return Ok(Arc::new(pack()?));
    }
    Ok(packed)
}

/// The geometry the direct kernel takes: `c` channels of `h`×`w` images, padded at the top
/// and left by `pt`, `pl` into `hp`×`wp` planes (the zero point around them), giving `oh`×`ow`
/// outputs at strides `sh`, `sw` (no dilation: a word's four taps are adjacent bytes).
#[derive(Clone, Copy, Debug)]
pub struct DirectGeometry {
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub pt: usize,
    pub pl: usize,
    pub oh: usize,
    pub ow: usize,
    pub sh: usize,
    pub sw: usize,
}

impl DirectGeometry {
    /// The padded planes' `(hp, wp)`: the image and every window inside.
    fn padded(&self, kernel: [usize; 2]) -> (usize, usize) {
        let hp = (self.pt + self.h).max((self.oh.max(1) - 1) * self.sh + kernel[0]);
        let wp = (self.pl + self.w).max((self.ow.max(1) - 1) * self.sw + kernel[1]);
        (hp, wp)
    }

    /// The padded image's length, with room past the last window for a word's bytes or a
    /// 64-byte window read from within it.
    fn padded_len(&self, kernel: [usize; 2]) -> usize {
        let (hp, wp) = self.padded(kernel);
        self.c * hp * wp + WINDOW
    }
}

/// Whether the direct kernel runs here (AVX-512 VNNI) for geometry `g` and weights `w`: both
/// not empty, of one channel count, the padded image addressable by 32-bit offsets.
pub fn direct_available(g: &DirectGeometry, w: &ConvWeights) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let (hp, wp) = g.padded(w.kernel);
        super::x86::vnni_available()
            && g.c * w.kernel[0] * w.kernel[1] * w.o > 0
            && g.oh * g.ow > 0
            && g.h * g.w > 0
            && g.padded_len(w.kernel) < i32::MAX as usize
            && g.c == w.groups() / (w.kernel[0] * w.row_words)
            && hp * wp > 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (g, w);
        false
    }
}

/// The convolution of the `u8` images `x` ((N, C, H, W), padded with `zero`) with `w` into
/// `sink` ((N, O, OH, OW)). The caller checked [`direct_available`].
pub(crate) fn conv_u8i8_direct(
    x: &[u8],
    zero: u8,
    g: &DirectGeometry,
    w: &ConvWeights,
    sink: Sink<'_>,
) {
    let image = g.c * g.h * g.w;
    let n = x.len().checked_div(image).unwrap_or(0);
    let len = sink.len();
    let result = w.o * g.oh * g.ow;
    assert_eq!(x.len(), n * image, "whole images");
    assert_eq!(len, n * result, "an (N, O, OH, OW) result");
    assert!(direct_available(g, w), "the direct kernel's conditions");
    // Whole images per task, split between the kernel threads.
    let images = super::units_per_task(n, result * g.c * w.kernel[0] * w.kernel[1]);
    sink.for_each_part(images * result, &|i, part| {
        let first = i * images * image;
        let x = &x[first..(first + images * image).min(x.len())];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX-512 VNNI (asserted above); `part` holds the results of
        // exactly the images of `x`.
        unsafe {
            x86::convolve(x, zero, g, w, part)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (x, zero, part);
    });
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::super::Sink;
    use super::super::x86::byte_lanes;
    use super::{CHANNELS, ConvWeights, DEPTH, DirectGeometry};
    use crate::avx512::lane_mask;

    /// Output pixels per tile: one vector of `i32` lanes.
    const PIXELS: usize = 16;

    /// Where the words of a tile's 16 pixels are read, relative to a group's first byte.
    struct Chunk {
        /// Each pixel's offset (the last pixel's for lanes past the end).
        at: __m512i,
        /// The lanes that exist.
        mask: __mmask16,
        /// Where every byte the tile reads lies within one 64-byte window (the CPU having
        /// VBMI): the window's offset and the byte permutation that makes the words of it.
        window: Option<(usize, __m512i)>,
    }

    /// The chunks of an image's `OH·OW` pixels, 16 at a time.
    #[target_feature(enable = "avx512f")]
    fn chunks(g: &DirectGeometry, wp: usize, vbmi: bool) -> Vec<Chunk> {
        let ohw = g.oh * g.ow;
        (0..ohw.div_ceil(PIXELS))
            .map(|chunk| {
                let first = chunk * PIXELS;
                let lanes = (ohw - first).min(PIXELS);
                let at: [usize; PIXELS] = std::array::from_fn(|l| {
                    let p = (first + l).min(ohw - 1);
                    (p / g.ow) * g.sh * wp + (p % g.ow) * g.sw
                });
                let span = at[PIXELS - 1] - at[0] + DEPTH;
                let window = (vbmi && span <= 64).then(|| {
                    let bytes: [u8; 64] =
                        std::array::from_fn(|b| (at[b / DEPTH] - at[0] + b % DEPTH) as u8);
                    // SAFETY: 64 bytes.
                    (at[0], unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) })
                });
                let offsets = at.map(|a| a as i32);
                Chunk {
                    // SAFETY: 16 `i32`s.
                    at: unsafe { _mm512_loadu_si512(offsets.as_ptr().cast()) },
                    mask: lane_mask(lanes),
                    window,
                }
            })
            .collect()
    }

    /// Whether the machine has AVX-512 VBMI (`vpermb`).
    fn vbmi_available() -> bool {
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *ON.get_or_init(|| std::arch::is_x86_feature_detected!("avx512vbmi"))
    }

    /// # Safety
    /// AVX-512F, BW and VNNI; `x` holds whole images and `sink` their results (the caller's
    /// asserts), the padded image addressable by `i32` offsets.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn convolve(
        x: &[u8],
        zero: u8,
        g: &DirectGeometry,
        w: &ConvWeights,
        mut sink: Sink<'_>,
    ) {
        let (hp, wp) = g.padded(w.kernel);
        let mut padded = vec![zero; g.padded_len(w.kernel)];
        // Each group's first byte: channel `c`, kernel row `i`, word `b`.
        let kh = w.kernel[0];
        let bases: Vec<usize> = (0..w.groups())
            .map(|group| {
                let (row, b) = (group / w.row_words, group % w.row_words);
                let (c, i) = (row / kh, row % kh);
                c * hp * wp + i * wp + b * DEPTH
            })
            .collect();
        let vbmi = vbmi_available();
        let chunks = chunks(g, wp, vbmi);
        let (image, ohw) = (g.c * g.h * g.w, g.oh * g.ow);
        for (n, img) in x.chunks_exact(image).enumerate() {
            for (c, plane) in img.chunks_exact(g.h * g.w).enumerate() {
                for (iy, row) in plane.chunks_exact(g.w).enumerate() {
                    let at = c * hp * wp + (g.pt + iy) * wp + g.pl;
                    copy_row(row, &mut padded[at..at + g.w]);
                }
            }
            for (chunk, c) in chunks.iter().enumerate() {
                let first = n * w.o * ohw + chunk * PIXELS;
                let mut ch = 0;
                while ch < w.o {
                    let out = Out {
                        ch,
                        first,
                        ohw,
                        mask: c.mask,
                    };
                    let t = Tile {
                        padded: &padded,
                        bases: &bases,
                        chunk: c,
                        w,
                        out: &out,
                    };
                    // SAFETY: channels `ch..` exist in the padded layout; the sink holds
                    // every (image, channel, pixel) of the masked lanes.
                    unsafe {
                        match (w.o - ch, c.window.is_some()) {
                            (9.., true) => tile_window::<CHANNELS>(t, &mut sink),
                            (9.., false) => tile_gather::<CHANNELS>(t, &mut sink),
                            (5..=8, true) => tile_window::<8>(t, &mut sink),
                            (5..=8, false) => tile_gather::<8>(t, &mut sink),
                            (_, true) => tile_window::<4>(t, &mut sink),
                            (_, false) => tile_gather::<4>(t, &mut sink),
                        }
                    }
                    ch += CHANNELS;
                }
            }
        }
    }

    /// `src` into `dst` (of one length): a masked load and store per 64 bytes, as an image
    /// row is often a few bytes (a call to `memcpy` each would cost more than the copy).
    #[target_feature(enable = "avx512f,avx512bw")]
    fn copy_row(src: &[u8], dst: &mut [u8]) {
        for (s, d) in src.chunks(64).zip(dst.chunks_mut(64)) {
            let mask = if s.len() == 64 {
                u64::MAX
            } else {
                (1u64 << s.len()) - 1
            };
            // SAFETY: the masked bytes are inside both chunks.
            unsafe {
                let v = _mm512_maskz_loadu_epi8(mask, s.as_ptr().cast());
                _mm512_mask_storeu_epi8(d.as_mut_ptr().cast(), mask, v);
            }
        }
    }

    /// What a tile reads.
    #[derive(Clone, Copy)]
    struct Tile<'a> {
        padded: &'a [u8],
        bases: &'a [usize],
        chunk: &'a Chunk,
        w: &'a ConvWeights,
        out: &'a Out,
    }

    /// Where a tile's results go: channels from `ch`, pixels from `first` in channel 0 of
    /// the image, the lanes in `mask`.
    struct Out {
        ch: usize,
        first: usize,
        ohw: usize,
        mask: __mmask16,
    }

    /// [`tile`] reading windows (a chunk has one only where the CPU has VBMI).
    ///
    /// # Safety
    /// As [`tile`]; AVX-512 VBMI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx512vbmi")]
    unsafe fn tile_window<const C: usize>(t: Tile<'_>, sink: &mut Sink<'_>) {
        // SAFETY: the caller's contract.
        unsafe { tile::<C, true>(t, sink) }
    }

    /// [`tile`] gathering the words.
    ///
    /// # Safety
    /// As [`tile`].
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn tile_gather<const C: usize>(t: Tile<'_>, sink: &mut Sink<'_>) {
        // SAFETY: the caller's contract.
        unsafe { tile::<C, false>(t, sink) }
    }

    /// The sums of channels `out.ch..out.ch + C` for 16 pixels, and their epilogue: each
    /// group's words by one permutation of a 64-byte window (`WINDOW`) or by a gather.
    /// Inlined into the two callers above, which give it their instruction sets.
    ///
    /// # Safety
    /// As [`convolve`]; `out` inside the sink; VBMI where `WINDOW`.
    #[inline(always)]
    unsafe fn tile<const C: usize, const WINDOW: bool>(t: Tile<'_>, sink: &mut Sink<'_>) {
        let Tile {
            padded,
            bases,
            chunk,
            w,
            out,
        } = t;
        // SAFETY (the whole body): the instruction sets are the callers'; a window's 64 bytes
        // and the masked lanes' words are inside `padded` (see `DirectGeometry::padded_len`);
        // the masked lanes of each channel stored are inside the result.
        unsafe {
            let mut acc = [_mm512_setzero_si512(); C];
            let zero = _mm512_setzero_si512();
            let (first, permutation) = chunk.window.unwrap_or((0, zero));
            for (group, &base) in bases.iter().enumerate() {
                let v = if WINDOW {
                    let bytes = _mm512_loadu_si512(padded.as_ptr().add(base + first).cast());
                    _mm512_permutexvar_epi8(permutation, bytes)
                } else {
                    let from = padded.as_ptr().add(base).cast();
                    _mm512_mask_i32gather_epi32::<1>(zero, chunk.mask, chunk.at, from)
                };
                let words: &[i32; C] = (w.words[group * w.stride + out.ch..][..C])
                    .try_into()
                    .expect("C words");
                #[allow(clippy::needless_range_loop)]
                for c in 0..C {
                    acc[c] = _mm512_dpbusd_epi32(acc[c], v, _mm512_set1_epi32(words[c]));
                }
            }
            // A loop of constant length, unrolled, so the sums stay in registers.
            let valid = w.o - out.ch;
            #[allow(clippy::needless_range_loop)]
            for c in 0..C {
                if c < valid {
                    store(acc[c], out.ch + c, out, sink);
                }
            }
        }
    }

    /// The epilogue of channel `ch`'s 16 sums, stored in the sink.
    ///
    /// # Safety
    /// AVX-512F and BW; the masked lanes of channel `ch` are inside the result.
    #[inline(always)]
    unsafe fn store(sum: __m512i, ch: usize, out: &Out, sink: &mut Sink<'_>) {
        let at = out.first + ch * out.ohw;
        // SAFETY: the caller's contract.
        unsafe {
            match sink {
                Sink::Sums(s) => {
                    _mm512_mask_storeu_epi32(s[at..].as_mut_ptr().cast(), out.mask, sum)
                }
                Sink::Bytes {
                    offset,
                    scale,
                    zero,
                    lo,
                    out: bytes,
                } => {
                    let v = scaled(sum, offset[ch], scale[ch]);
                    let q = byte_lanes(v, _mm512_set1_ps(*zero), _mm512_set1_ps(*lo));
                    let to = bytes[at..].as_mut_ptr().cast();
                    _mm512_mask_cvtepi32_storeu_epi8(to, out.mask, q)
                }
                Sink::Floats {
                    offset,
                    scale,
                    out: floats,
                } => {
                    let v = scaled(sum, offset[ch], scale[ch]);
                    _mm512_mask_storeu_ps(floats[at..].as_mut_ptr(), out.mask, v)
                }
            }
        }
    }

    /// `(sum + offset) · scale`, as the product's epilogue computes it.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn scaled(sum: __m512i, offset: i32, scale: f32) -> __m512 {
        let s = _mm512_add_epi32(sum, _mm512_set1_epi32(offset));
        _mm512_mul_ps(_mm512_cvtepi32_ps(s), _mm512_set1_ps(scale))
    }

    const _: () = assert!(CHANNELS == 16);
}

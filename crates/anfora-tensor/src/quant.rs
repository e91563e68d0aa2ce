//! 8-bit integer arithmetic for quantized models: `u8` activations with a zero point, `i8`
//! weights quantized per output channel (zero point 0), products accumulated in `i32`.
//!
//! * [`quantize_u8`] / [`dequantize_u8`]: `q = clamp(round_half_even(x / scale) + zero)`
//!   and back, as onnxruntime's `QuantizeLinear` / `DequantizeLinear` compute them.
//! * [`PackedWeights`]: a k×n `i8` matrix laid out once for the product kernel (a model's
//!   weights are packed when it loads), with its column sums for the activations' zero point.
//! * [`matmul_u8i8`]: `c[i, j] = Σ_p (a[i, p] − zero) · w[p, j]` in `i32`. With AVX-512 VNNI
//!   (`vpdpbusd`: four `u8 × i8` products added into each `i32` lane) where the CPU has it, a
//!   portable loop otherwise. Integer sums are exact, so both give the same integers; the
//!   zero point is taken out after the sum (`Σ a·w − zero · Σ w`), as the unsigned operand of
//!   `vpdpbusd` must be the raw byte.
//! * [`requantize_u8`]: the `i32` sums scaled per column to the next layer's `u8`, with
//!   round-half-even and saturation.
//! * [`WeightOnly`] / [`matmul_f32_i8`]: weight-only quantization, float32 activations times
//!   `i8` weights with a scale per column, widened inside the kernel (the weights stay 8-bit
//!   in memory) and scaled once per sum.
//!
//! A sum of `k` products of at most 255 · 128 in magnitude fits `i32` for `k` ≤ 65,793; the
//! product refuses longer rows ([`MAX_DEPTH`]).

use crate::Tensor;

mod conv;
pub(crate) use conv::conv_u8i8_direct;
pub use conv::{ConvWeights, DirectGeometry, conv_weights, direct_available};

/// The longest row a product takes: `255 · 128 · k` stays below `2^31`.
pub const MAX_DEPTH: usize = (i32::MAX as usize) / (255 * 128);

/// Column blocks of the packed layout: one 512-bit vector of `i32` sums.
const COLS: usize = 16;
/// Rows of the packed layout per group: the four bytes one `vpdpbusd` lane multiplies.
const DEPTH: usize = 4;

/// `1.5 · 2^23`: adding it to a float below `2^22` in magnitude rounds it to an integer, half
/// to even (the sum's unit in the last place is 1), and subtracting it back is exact.
const ROUNDER: f32 = 12_582_912.0;

/// `round_half_even(v) + zero` clamped to `[lo, 255]`, as a byte; `v` far outside the byte
/// range saturates first (so the rounding trick's range holds), NaN gives 0. The same value as
/// `(v.round_ties_even() + zero).clamp(lo, 255)`, in operations the compiler vectorizes.
#[inline(always)]
fn to_byte(v: f32, zero: f32, lo: f32) -> u8 {
    let v = v.clamp(-512.0, 512.0);
    let r = (v + ROUNDER) - ROUNDER;
    (r + zero).clamp(lo, 255.0) as u8
}

/// `clamp(round_half_even(x / scale) + zero, 0, 255)` for each `x`.
pub fn quantize_u8(x: &[f32], scale: f32, zero: u8, out: &mut [u8]) {
    assert_eq!(x.len(), out.len());
    let zero = f32::from(zero);
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if crate::avx512::available() {
        // SAFETY: AVX-512F is present; the lengths are equal (asserted above).
        done = unsafe { x86::to_bytes(x, scale, zero, 0.0, out) };
    }
    for (q, &v) in out[done..].iter_mut().zip(&x[done..]) {
        // NaN saturates to 0, as the cast of a NaN float does.
        *q = to_byte(v / scale, zero, 0.0);
    }
}

/// `(q − zero) · scale` for each `q`.
pub fn dequantize_u8(q: &[u8], scale: f32, zero: u8, out: &mut [f32]) {
    assert_eq!(q.len(), out.len());
    for (v, &b) in out.iter_mut().zip(q) {
        *v = (i32::from(b) - i32::from(zero)) as f32 * scale;
    }
}

/// A k×n `i8` matrix laid out for [`matmul_u8i8`]: for each block of 16 columns and each
/// group of 4 rows, 64 bytes in which column `j`'s four bytes follow each other (rows past
/// `k` and columns past `n` are zeros). The column sums take the activations' zero point out.
#[derive(Clone, Debug)]
pub struct PackedWeights {
    k: usize,
    n: usize,
    data: Vec<i8>,
    column_sums: Vec<i32>,
}

impl PackedWeights {
    /// Packs `w`, k×n row-major.
    pub fn pack(w: &[i8], k: usize, n: usize) -> PackedWeights {
        assert_eq!(w.len(), k * n, "a {k}×{n} matrix");
        let groups = k.div_ceil(DEPTH);
        let blocks = n.div_ceil(COLS);
        let mut data = vec![0i8; blocks * groups * COLS * DEPTH];
        for p in 0..k {
            for j in 0..n {
                let (block, col) = (j / COLS, j % COLS);
                let at = ((block * groups + p / DEPTH) * COLS + col) * DEPTH + p % DEPTH;
                data[at] = w[p * n + j];
            }
        }
        let column_sums = column_sums(w, k, n);
        PackedWeights {
            k,
            n,
            data,
            column_sums,
        }
    }

    pub fn rows(&self) -> usize {
        self.k
    }

    /// `Σ_p w[p, j]` for each column `j`.
    pub fn column_sums(&self) -> &[i32] {
        &self.column_sums
    }

    pub fn columns(&self) -> usize {
        self.n
    }

    /// The 64 bytes of column block `block`, row group `group`.
    fn group(&self, block: usize, group: usize) -> &[i8] {
        let groups = self.k.div_ceil(DEPTH);
        let at = (block * groups + group) * COLS * DEPTH;
        &self.data[at..at + COLS * DEPTH]
    }
}

/// `Σ_p w[p, j]` for each column `j` of a k×n row-major matrix: what the activations' zero
/// point takes out of a layer's sums.
fn column_sums(w: &[i8], k: usize, n: usize) -> Vec<i32> {
    (0..n)
        .map(|j| (0..k).map(|p| i32::from(w[p * n + j])).sum())
        .collect()
}

/// `c[i, j] = Σ_p (a[i, p] − zero) · w[p, j]`: `a` is m×k `u8` with row stride `lda`, `c` m×n
/// `i32` row-major. Uses VNNI where the CPU has it.
pub fn matmul_u8i8(a: &[u8], lda: usize, m: usize, zero: u8, w: &PackedWeights, c: &mut [i32]) {
    matmul_u8i8_raw(a, lda, m, w, c);
    take_out_zero(c, m, zero, w);
}

/// Where a product's sums go: stored as they are, or with a per-column offset added and
/// scaled, as requantized bytes or as floats.
pub(crate) enum Sink<'a> {
    Sums(&'a mut [i32]),
    Bytes {
        offset: &'a [i32],
        scale: &'a [f32],
        zero: f32,
        lo: f32,
        out: &'a mut [u8],
    },
    Floats {
        offset: &'a [i32],
        scale: &'a [f32],
        out: &'a mut [f32],
    },
}

impl Sink<'_> {
    /// The number of results it holds.
    fn len(&self) -> usize {
        match self {
            Sink::Sums(c) => c.len(),
            Sink::Bytes { out, .. } => out.len(),
            Sink::Floats { out, .. } => out.len(),
        }
    }

    /// Calls `work(i, part)` on its consecutive parts of `len` results (the last may be
    /// shorter), on the kernel threads: each part a sink of its own with the same epilogue.
    pub(crate) fn for_each_part(self, len: usize, work: &(dyn Fn(usize, Sink<'_>) + Sync)) {
        use crate::parallel::for_each_part;
        match self {
            Sink::Sums(c) => for_each_part(c, len, |i, part| work(i, Sink::Sums(part))),
            Sink::Bytes {
                offset,
                scale,
                zero,
                lo,
                out,
            } => for_each_part(out, len, |i, part| {
                let sink = Sink::Bytes {
                    offset,
                    scale,
                    zero,
                    lo,
                    out: part,
                };
                work(i, sink)
            }),
            Sink::Floats { offset, scale, out } => for_each_part(out, len, |i, part| {
                work(
                    i,
                    Sink::Floats {
                        offset,
                        scale,
                        out: part,
                    },
                )
            }),
        }
    }
}

/// The multiply-adds a task of the 8-bit kernels does at least, where the pool has several
/// threads (a smaller task's scheduling would cost more than it saves).
const PARALLEL_MACS: usize = 1 << 20;

/// How many of `units` (rows, images) of `macs` multiply-adds each one task takes: all of
/// them on one thread.
fn units_per_task(units: usize, macs: usize) -> usize {
    if rayon::current_num_threads() < 2 {
        return units.max(1);
    }
    (PARALLEL_MACS / macs.max(1)).clamp(1, units.max(1))
}

/// The raw sums of `a @ w` into `sink`, rows split between the kernel threads: on each tile
/// where the CPU has VNNI, else through a buffer of sums and the same epilogue's portable
/// loop.
pub(crate) fn matmul_u8i8_into(a: &[u8], lda: usize, m: usize, w: &PackedWeights, sink: Sink<'_>) {
    let n = w.n;
    if let Sink::Bytes { offset, scale, .. } | Sink::Floats { offset, scale, .. } = &sink {
        assert!(
            offset.len() == n && scale.len() == n,
            "{n} offsets and scales"
        );
    }
    check_operands(a, lda, m, w, sink.len());
    // Whole tiles of 8 rows per task.
    let rows = units_per_task(m, w.k * n).next_multiple_of(8).min(m.max(1));
    sink.for_each_part(rows * n, &|i, part| {
        let first = i * rows;
        let count = rows.min(m - first);
        matmul_rows(&a[first * lda..], lda, count, w, part)
    });
}

/// [`matmul_u8i8_into`] of `m` rows on this thread.
fn matmul_rows(a: &[u8], lda: usize, m: usize, w: &PackedWeights, mut sink: Sink<'_>) {
    let n = w.n;
    #[cfg(target_arch = "x86_64")]
    if x86::vnni_available() {
        // SAFETY: the CPU has the instructions; the sizes are checked above.
        unsafe { x86::matmul_into(a, lda, m, w, &mut sink) };
        return;
    }
    match sink {
        Sink::Sums(c) => matmul_portable(a, lda, m, w, c),
        Sink::Bytes {
            offset,
            scale,
            zero,
            lo,
            out,
        } => {
            let mut sums = vec![0i32; m * n];
            matmul_portable(a, lda, m, w, &mut sums);
            requantize_from(&sums, n, offset, scale, zero, lo, out);
        }
        Sink::Floats { offset, scale, out } => {
            let mut sums = vec![0i32; m * n];
            matmul_portable(a, lda, m, w, &mut sums);
            dequantize_sums(&sums, n, offset, scale, out);
        }
    }
}

/// The raw sums `Σ_p a[i, p] · w[p, j]` (no zero point taken out: a caller folds
/// `−zero · Σ_p w[p, j]` into its per-column offset, see [`requantize_u8_from`]).
pub fn matmul_u8i8_raw(a: &[u8], lda: usize, m: usize, w: &PackedWeights, c: &mut [i32]) {
    matmul_u8i8_into(a, lda, m, w, Sink::Sums(c));
}

/// [`matmul_u8i8`] by the portable loop alone (the reference the vector kernel is tested
/// against).
pub fn matmul_u8i8_portable(
    a: &[u8],
    lda: usize,
    m: usize,
    zero: u8,
    w: &PackedWeights,
    c: &mut [i32],
) {
    check_operands(a, lda, m, w, c.len());
    matmul_portable(a, lda, m, w, c);
    take_out_zero(c, m, zero, w);
}

fn check_operands(a: &[u8], lda: usize, m: usize, w: &PackedWeights, c_len: usize) {
    assert!(
        w.k <= MAX_DEPTH,
        "rows of {} products overflow i32 sums",
        w.k
    );
    check_shapes(a.len(), lda, (m, w.k, w.n), c_len);
}

/// An m×k operand of `a_len` elements at row stride `lda`, and an m×n result of `c_len`.
fn check_shapes(a_len: usize, lda: usize, (m, k, n): (usize, usize, usize), c_len: usize) {
    assert!(lda >= k, "a row stride of {lda} under {k} columns");
    assert!(
        m == 0 || (m - 1) * lda + k <= a_len,
        "{m} rows of {k} in {a_len} elements"
    );
    assert_eq!(c_len, m * n, "an {m}×{n} result");
}

/// The raw sums `Σ_p a[i, p] · w[p, j]`.
fn matmul_portable(a: &[u8], lda: usize, m: usize, w: &PackedWeights, c: &mut [i32]) {
    let (k, n) = (w.k, w.n);
    for i in 0..m {
        let row = &a[i * lda..i * lda + k];
        for j in 0..n {
            let (block, col) = (j / COLS, j % COLS);
            let mut sum = 0i32;
            for (g, four) in row.chunks(DEPTH).enumerate() {
                let bytes = &w.group(block, g)[col * DEPTH..col * DEPTH + DEPTH];
                for (&x, &y) in four.iter().zip(bytes) {
                    sum += i32::from(x) * i32::from(y);
                }
            }
            c[i * n + j] = sum;
        }
    }
}

/// `Σ a·w − zero · Σ w`: the sums of `(a − zero) · w`.
fn take_out_zero(c: &mut [i32], m: usize, zero: u8, w: &PackedWeights) {
    if zero == 0 {
        return;
    }
    let n = w.n;
    for row in c.chunks_mut(n).take(m) {
        for (s, &cs) in row.iter_mut().zip(&w.column_sums) {
            *s -= i32::from(zero) * cs;
        }
    }
}

/// A k×n matrix of 8-bit or 4-bit weights with one scale per column, for products with
/// float32 activations that keep the weights narrow in memory (weight-only quantization):
/// column blocks of 16, row by row (16 bytes per row of a block, or 8 for 4-bit weights: two
/// per byte, the even column in the low nibble; columns past `n` are zeros).
#[derive(Clone, Debug)]
pub struct WeightOnly {
    k: usize,
    n: usize,
    /// 8 or 4.
    bits: usize,
    data: Vec<u8>,
    scales: Vec<f32>,
}

impl WeightOnly {
    /// Packs `w`, k×n row-major `i8`, with column scales `scales`: weight `(p, j)` stands for
    /// `w[p, j] · scales[j]`.
    pub fn pack(w: &[i8], k: usize, n: usize, scales: &[f32]) -> WeightOnly {
        assert_eq!(w.len(), k * n, "a {k}×{n} matrix");
        WeightOnly::packed(k, n, 8, scales, |p, j| w[p * n + j] as u8)
    }

    /// Packs 4-bit weights given two per byte, k rows of `n.div_ceil(2)` bytes (column `2t` in
    /// the low nibble of byte `t`, `2t + 1` in the high one; each a two's-complement value in
    /// `-8..=7`), with column scales `scales`.
    pub fn pack_int4(pairs: &[u8], k: usize, n: usize, scales: &[f32]) -> WeightOnly {
        let row = n.div_ceil(2);
        assert_eq!(pairs.len(), k * row, "{k} rows of {row} bytes");
        WeightOnly::packed(k, n, 4, scales, |p, j| {
            (pairs[p * row + j / 2] >> (4 * (j % 2))) & 15
        })
    }

    /// The layout for `bits`-bit weights, `value(p, j)` giving weight `(p, j)`'s bits.
    fn packed(
        k: usize,
        n: usize,
        bits: usize,
        scales: &[f32],
        value: impl Fn(usize, usize) -> u8,
    ) -> WeightOnly {
        assert_eq!(scales.len(), n, "one scale per column");
        let row_bytes = COLS * bits / 8;
        let mut data = vec![0u8; n.div_ceil(COLS) * k * row_bytes];
        for p in 0..k {
            for j in 0..n {
                let at = ((j / COLS) * k + p) * row_bytes;
                let col = j % COLS;
                match bits {
                    8 => data[at + col] = value(p, j),
                    _ => data[at + col / 2] |= (value(p, j) & 15) << (4 * (col % 2)),
                }
            }
        }
        WeightOnly {
            k,
            n,
            bits,
            data,
            scales: scales.to_vec(),
        }
    }

    /// Row `p` of column block `block`: 16 bytes, or 8 of 4-bit pairs.
    fn row(&self, block: usize, p: usize) -> &[u8] {
        let row_bytes = COLS * self.bits / 8;
        let at = (block * self.k + p) * row_bytes;
        &self.data[at..at + row_bytes]
    }

    /// Weight `(p, j)` as an integer.
    fn weight(&self, p: usize, j: usize) -> i8 {
        let row = self.row(j / COLS, p);
        match self.bits {
            8 => row[j % COLS] as i8,
            _ => {
                let nibble = (row[(j % COLS) / 2] >> (4 * (j % 2))) & 15;
                ((nibble ^ 8) as i8) - 8
            }
        }
    }
}

/// `c[i, j] = scales[j] · Σ_p a[i, p] · w[p, j]` for float32 `a` (m×k, row stride `lda`) and
/// the 8-bit weights of `w`, which are widened inside the kernel, never into a float copy.
/// Each sum is taken in order of `p` with one fused multiply-add per term, so the AVX-512
/// kernel and the portable loop give the same bits.
pub fn matmul_f32_i8(a: &[f32], lda: usize, m: usize, w: &WeightOnly, c: &mut [f32]) {
    check_shapes(a.len(), lda, (m, w.k, w.n), c.len());
    #[cfg(target_arch = "x86_64")]
    if crate::avx512::available() {
        // SAFETY: AVX-512F is present; the sizes are checked above.
        unsafe {
            match w.bits {
                8 => x86::matmul_weight_only::<8>(a, lda, m, w, c),
                _ => x86::matmul_weight_only::<4>(a, lda, m, w, c),
            }
        };
        return;
    }
    matmul_f32_i8_portable(a, lda, m, w, c);
}

/// [`matmul_f32_i8`] by the portable loop alone.
pub fn matmul_f32_i8_portable(a: &[f32], lda: usize, m: usize, w: &WeightOnly, c: &mut [f32]) {
    let (k, n) = (w.k, w.n);
    check_shapes(a.len(), lda, (m, k, n), c.len());
    for i in 0..m {
        for j in 0..n {
            let mut sum = 0.0f32;
            for p in 0..k {
                let v = f32::from(w.weight(p, j));
                sum = a[i * lda + p].mul_add(v, sum);
            }
            c[i * n + j] = sum * w.scales[j];
        }
    }
}

/// `clamp(round_half_even(sum · scale[j]) + zero, 0, 255)`: `i32` sums m×n scaled per column
/// `j` (the activations' scale times column `j`'s weight scale over the output's scale).
pub fn requantize_u8(sums: &[i32], n: usize, scale: &[f32], zero: u8, out: &mut [u8]) {
    requantize_u8_from(sums, n, &vec![0; n], scale, zero, 0, out);
}

/// [`requantize_u8`] of `sums[i, j] + offset[j]` (wrapping: a bias and the input's zero-point
/// term), clamped below at `lo` instead of 0 (`lo = zero` is a fused ReLU).
pub fn requantize_u8_from(
    sums: &[i32],
    n: usize,
    offset: &[i32],
    scale: &[f32],
    zero: u8,
    lo: u8,
    out: &mut [u8],
) {
    assert_eq!(scale.len(), n);
    assert_eq!(offset.len(), n);
    assert_eq!(sums.len(), out.len());
    requantize_from(sums, n, offset, scale, f32::from(zero), f32::from(lo), out);
}

/// [`requantize_u8_from`] with the zero point and the lower clamp as floats.
fn requantize_from(
    sums: &[i32],
    n: usize,
    offset: &[i32],
    scale: &[f32],
    zero: f32,
    lo: f32,
    out: &mut [u8],
) {
    if n == 0 {
        return;
    }
    // The scales repeated over a stretch of whole rows that is a whole number of 16-wide
    // vectors, so narrow rows (a convolution's few channels) are vectorized across rows too.
    let period = n / gcd(n, 16) * 16;
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if crate::avx512::available() && period <= 4096 {
        let tiled: Vec<f32> = scale.iter().copied().cycle().take(period).collect();
        let offsets: Vec<i32> = offset.iter().copied().cycle().take(period).collect();
        for (s, q) in sums.chunks_exact(period).zip(out.chunks_exact_mut(period)) {
            // SAFETY: AVX-512F is present; a stretch, its offsets, scales and bytes are
            // `period` long, a multiple of 16.
            unsafe { x86::requantize_row(s, &offsets, &tiled, zero, lo, q) };
        }
        done = sums.len() / period * period;
    }
    for (i, (q, &s)) in out.iter_mut().zip(sums).enumerate().skip(done) {
        *q = to_byte(
            s.wrapping_add(offset[i % n]) as f32 * scale[i % n],
            zero,
            lo,
        );
    }
}

/// `(sums[i, j] + offset[j]) · scale[j]` as float32: a quantized product's float result.
pub fn dequantize_sums(sums: &[i32], n: usize, offset: &[i32], scale: &[f32], out: &mut [f32]) {
    assert_eq!((scale.len(), offset.len()), (n, n));
    assert_eq!(sums.len(), out.len());
    for (row, o) in sums.chunks(n.max(1)).zip(out.chunks_mut(n.max(1))) {
        for (((o, &s), &b), &f) in o.iter_mut().zip(row).zip(offset).zip(scale) {
            *o = s.wrapping_add(b) as f32 * f;
        }
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Packed forms of weight tensors, each made once per tensor: keyed by the tensor's storage,
/// held weakly, so a weight that is dropped (or replaced by a new value) is packed again and
/// never confused with a later allocation at the same address.
struct PackCache<P> {
    entries: std::sync::Mutex<Vec<(std::sync::Weak<crate::Storage>, Arc<P>)>>,
}

use std::sync::Arc;

impl<P> PackCache<P> {
    const fn new() -> Self {
        PackCache {
            entries: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn get(&self, w: &Tensor, pack: impl FnOnce() -> crate::Result<P>) -> crate::Result<Arc<P>> {
        let key = Arc::downgrade(&w.storage);
        {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            entries.retain(|(k, _)| k.strong_count() > 0);
            if let Some((_, p)) = entries.iter().find(|(k, _)| k.ptr_eq(&key)) {
                return Ok(p.clone());
            }
        }
        let packed = Arc::new(pack()?);
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.push((key, packed.clone()));
        Ok(packed)
    }
}

/// The elements of a 2-D `i8` tensor and its `(k, n)`.
fn i8_matrix(w: &Tensor) -> crate::Result<(&[i8], usize, usize)> {
    match (w.as_i8_slice(), w.shape()) {
        (Some(v), &[k, n]) => Ok((v, k, n)),
        _ => Err(crate::TensorError::new(
            crate::ErrorKind::Type,
            format!(
                "quantized weights are a 2-D int8 tensor, not {} {:?}",
                w.dtype(),
                w.shape()
            ),
        )),
    }
}

/// `w` (a k×n `i8` tensor) packed for [`matmul_u8i8`], once per tensor.
pub fn packed(w: &Tensor) -> crate::Result<Arc<PackedWeights>> {
    static CACHE: PackCache<PackedWeights> = PackCache::new();
    CACHE.get(w, || {
        let (v, k, n) = i8_matrix(w)?;
        Ok(PackedWeights::pack(v, k, n))
    })
}

/// `w` with its column scales packed for [`matmul_f32_i8`], once per weight tensor (the
/// scales are read when it is packed: a model's are constants). `w` is a k×n `i8` tensor, or
/// a k×⌈n/2⌉ `u8` tensor of 4-bit pairs ([`WeightOnly::pack_int4`]; `n` is the number of
/// scales).
pub fn weight_only(w: &Tensor, scales: &Tensor) -> crate::Result<Arc<WeightOnly>> {
    static CACHE: PackCache<WeightOnly> = PackCache::new();
    let s = scales.as_f32_slice().unwrap_or_default();
    let pack = || -> crate::Result<WeightOnly> {
        let refuse = |what: String| Err(crate::TensorError::new(crate::ErrorKind::Type, what));
        if let (Some(pairs), &[k, row]) = (w.as_u8_slice(), w.shape()) {
            let n = s.len();
            if row != n.div_ceil(2) {
                return refuse(format!(
                    "{row} bytes of 4-bit pairs do not hold {n} columns"
                ));
            }
            return Ok(WeightOnly::pack_int4(pairs, k, n, s));
        }
        let (v, k, n) = i8_matrix(w)?;
        if s.len() != n {
            return refuse(format!("{n} columns need {n} float32 scales"));
        }
        Ok(WeightOnly::pack(v, k, n, s))
    };
    let packed = CACHE.get(w, pack)?;
    if s != &packed.scales[..] {
        // The same weights with other scales: packed for this call alone.
        return Ok(Arc::new(pack()?));
    }
    Ok(packed)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    use super::{COLS, DEPTH, PackedWeights, ROUNDER};
    use crate::avx512::lane_mask;

    /// [`super::to_byte`] of 16 floats, as 16 int32 lanes.
    #[target_feature(enable = "avx512f")]
    pub(super) fn byte_lanes(v: __m512, zero: __m512, lo: __m512) -> __m512i {
        let v = _mm512_min_ps(
            _mm512_max_ps(v, _mm512_set1_ps(-512.0)),
            _mm512_set1_ps(512.0),
        );
        let r = _mm512_sub_ps(
            _mm512_add_ps(v, _mm512_set1_ps(ROUNDER)),
            _mm512_set1_ps(ROUNDER),
        );
        let q = _mm512_min_ps(
            _mm512_max_ps(_mm512_add_ps(r, zero), lo),
            _mm512_set1_ps(255.0),
        );
        _mm512_cvttps_epi32(q)
    }

    /// [`super::to_byte`] of 16 floats, stored as 16 bytes.
    ///
    /// # Safety
    /// AVX-512F; `out` holds 16 bytes.
    #[target_feature(enable = "avx512f")]
    unsafe fn store_bytes(v: __m512, zero: __m512, lo: __m512, out: *mut u8) {
        let q = byte_lanes(v, zero, lo);
        // SAFETY: 16 bytes at `out` (the caller's contract).
        unsafe { _mm_storeu_si128(out.cast(), _mm512_cvtepi32_epi8(q)) };
    }

    /// The bytes of `x / scale` (`quantize_u8`: one division per value, as the portable loop
    /// divides), 16 at a time; returns how many were done (a multiple of 16; the caller does
    /// the rest).
    ///
    /// # Safety
    /// AVX-512F; `out` as long as `x`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn to_bytes(
        x: &[f32],
        scale: f32,
        zero: f32,
        lo: f32,
        out: &mut [u8],
    ) -> usize {
        let (vs, vz, vl) = (
            _mm512_set1_ps(scale),
            _mm512_set1_ps(zero),
            _mm512_set1_ps(lo),
        );
        let n = x.len() / 16 * 16;
        for i in (0..n).step_by(16) {
            // SAFETY: i + 16 ≤ x.len() = out.len().
            unsafe {
                let v = _mm512_div_ps(_mm512_loadu_ps(x.as_ptr().add(i)), vs);
                store_bytes(v, vz, vl, out.as_mut_ptr().add(i));
            }
        }
        n
    }

    /// [`super::requantize_u8_from`] of one stretch, 16 values at a time; returns how many were
    /// done (a multiple of 16).
    ///
    /// # Safety
    /// AVX-512F; `row`, `scale` and `out` of one length.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn requantize_row(
        row: &[i32],
        offset: &[i32],
        scale: &[f32],
        zero: f32,
        lo: f32,
        out: &mut [u8],
    ) -> usize {
        let (vz, vl) = (_mm512_set1_ps(zero), _mm512_set1_ps(lo));
        let n = row.len() / 16 * 16;
        for j in (0..n).step_by(16) {
            // SAFETY: j + 16 ≤ the common length.
            unsafe {
                let raw = _mm512_loadu_si512(row.as_ptr().add(j).cast());
                let b = _mm512_loadu_si512(offset.as_ptr().add(j).cast());
                let s = _mm512_cvtepi32_ps(_mm512_add_epi32(raw, b));
                let v = _mm512_mul_ps(s, _mm512_loadu_ps(scale.as_ptr().add(j)));
                store_bytes(v, vz, vl, out.as_mut_ptr().add(j));
            }
        }
        n
    }

    /// Whether the machine has AVX-512 VNNI (and the AVX-512F and BW every such CPU has).
    pub(super) fn vnni_available() -> bool {
        static ON: OnceLock<bool> = OnceLock::new();
        *ON.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vnni")
        })
    }

    /// The sums `Σ_p a[i, p] · w[p, j]` into `c` (with its epilogue applied to each tile's
    /// sums in registers), in tiles of up to 8 rows × 32 columns whose 16 sums stay in
    /// registers: per group of four `p`, one load of the weights' 64 bytes per column block and
    /// one `vpdpbusd` per row and block, the row's four bytes of `a` broadcast to every lane.
    ///
    /// # Safety
    /// AVX-512F and VNNI; the operands' sizes are those `check_operands` asserts, `c` holding
    /// m×n values (and n offsets and scales).
    #[target_feature(enable = "avx512f,avx512vnni")]
    pub(super) unsafe fn matmul_into(
        a: &[u8],
        lda: usize,
        m: usize,
        w: &PackedWeights,
        c: &mut super::Sink<'_>,
    ) {
        let blocks = w.n.div_ceil(COLS);
        let mut block = 0;
        // SAFETY (all tiles): rows below `m`, column blocks below `blocks`.
        unsafe {
            while block < blocks {
                let pair = blocks - block >= 2;
                let mut i = 0;
                while i < m {
                    match (m - i >= 8, pair) {
                        (true, true) => tile::<8, 2>(a, lda, i, w, block, c),
                        (true, false) => tile::<8, 1>(a, lda, i, w, block, c),
                        (false, true) => tile::<1, 2>(a, lda, i, w, block, c),
                        (false, false) => tile::<1, 1>(a, lda, i, w, block, c),
                    }
                    i += if m - i >= 8 { 8 } else { 1 };
                }
                block += if pair { 2 } else { 1 };
            }
        }
    }

    /// `R` rows from row `i` × `B` column blocks from `block`.
    ///
    /// # Safety
    /// As [`matmul`]; rows `i..i + R` and blocks `block..block + B` exist.
    #[target_feature(enable = "avx512f,avx512vnni")]
    unsafe fn tile<const R: usize, const B: usize>(
        a: &[u8],
        lda: usize,
        i: usize,
        w: &PackedWeights,
        block: usize,
        c: &mut super::Sink<'_>,
    ) {
        let (k, n) = (w.k, w.n);
        let full = k / DEPTH;
        let mut acc = [[_mm512_setzero_si512(); B]; R];
        let rows: [*const u8; R] = std::array::from_fn(|r| a[(i + r) * lda..].as_ptr());
        // SAFETY: a full group's four bytes are inside the row's `k`; a group is 64 bytes.
        unsafe {
            for g in 0..full {
                let wv: [__m512i; B] = std::array::from_fn(|b| {
                    _mm512_loadu_si512(w.group(block + b, g).as_ptr().cast())
                });
                // Index loops over constant ranges, so the sums stay in registers.
                #[allow(clippy::needless_range_loop)]
                for r in 0..R {
                    let four =
                        _mm512_set1_epi32(rows[r].add(g * DEPTH).cast::<i32>().read_unaligned());
                    for b in 0..B {
                        acc[r][b] = _mm512_dpbusd_epi32(acc[r][b], four, wv[b]);
                    }
                }
            }
            if full * DEPTH < k {
                let wv: [__m512i; B] = std::array::from_fn(|b| {
                    _mm512_loadu_si512(w.group(block + b, full).as_ptr().cast())
                });
                #[allow(clippy::needless_range_loop)]
                for r in 0..R {
                    let row = &a[(i + r) * lda..(i + r) * lda + k];
                    let four = _mm512_set1_epi32(four_bytes(row, full * DEPTH));
                    for b in 0..B {
                        acc[r][b] = _mm512_dpbusd_epi32(acc[r][b], four, wv[b]);
                    }
                }
            }
            // Each column block's mask, offsets and scales loaded once for all rows; then row
            // by row, so each row's stores are adjacent (measured faster for wide layers).
            let masks: [__mmask16; B] = std::array::from_fn(|b| lane_mask(n - (block + b) * COLS));
            let (offsets, scales): ([__m512i; B], [__m512; B]) = match c {
                super::Sink::Sums(_) => ([_mm512_setzero_si512(); B], [_mm512_setzero_ps(); B]),
                super::Sink::Bytes { offset, scale, .. }
                | super::Sink::Floats { offset, scale, .. } => {
                    let first = |b: usize| (block + b) * COLS;
                    (
                        std::array::from_fn(|b| {
                            _mm512_maskz_loadu_epi32(masks[b], offset[first(b)..].as_ptr().cast())
                        }),
                        std::array::from_fn(|b| {
                            _mm512_maskz_loadu_ps(masks[b], scale[first(b)..].as_ptr())
                        }),
                    )
                }
            };
            // Index loops over constant ranges with the sums copied out: no reference into
            // `acc` escapes, so the sums stay in registers.
            #[allow(clippy::needless_range_loop)]
            for r in 0..R {
                for b in 0..B {
                    let (sum, mask) = (acc[r][b], masks[b]);
                    let at = (i + r) * n + (block + b) * COLS;
                    let scaled = _mm512_mul_ps(
                        _mm512_cvtepi32_ps(_mm512_add_epi32(sum, offsets[b])),
                        scales[b],
                    );
                    match c {
                        super::Sink::Sums(c) => {
                            _mm512_mask_storeu_epi32(c[at..].as_mut_ptr().cast(), mask, sum)
                        }
                        super::Sink::Bytes { zero, lo, out, .. } => {
                            let (z, l) = (_mm512_set1_ps(*zero), _mm512_set1_ps(*lo));
                            let q = byte_lanes(scaled, z, l);
                            let to = out[at..].as_mut_ptr().cast();
                            _mm512_mask_cvtepi32_storeu_epi8(to, mask, q);
                        }
                        super::Sink::Floats { out, .. } => {
                            _mm512_mask_storeu_ps(out[at..].as_mut_ptr(), mask, scaled);
                        }
                    }
                }
            }
        }
    }

    /// The weight-only product, in tiles of 24 rows (then 8, then 1) × one block of 16 columns:
    /// per `p`, the block's 16 bytes widened to float32 once and one fused multiply-add per
    /// row, so each result is the portable loop's sum in the same order.
    ///
    /// # Safety
    /// AVX-512F; the operands' sizes are those `matmul_f32_i8` asserts.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn matmul_weight_only<const BITS: usize>(
        a: &[f32],
        lda: usize,
        m: usize,
        w: &super::WeightOnly,
        c: &mut [f32],
    ) {
        for block in 0..w.n.div_ceil(COLS) {
            let mut i = 0;
            while i < m {
                let rows = match m - i {
                    24.. => 24,
                    8..=23 => 8,
                    _ => 1,
                };
                // SAFETY: rows `i..i + rows` and column block `block` exist.
                unsafe {
                    match rows {
                        24 => weight_only_tile::<BITS, 24>(a, lda, i, w, block, c),
                        8 => weight_only_tile::<BITS, 8>(a, lda, i, w, block, c),
                        _ => weight_only_tile::<BITS, 1>(a, lda, i, w, block, c),
                    }
                }
                i += rows;
            }
        }
    }

    /// `R` rows from row `i` of one column block of the weight-only product, the sums in
    /// registers (index loops over constant ranges, so LLVM keeps them there).
    ///
    /// # Safety
    /// AVX-512F; as [`matmul_weight_only`], with rows `i..i + R` and block `block` existing.
    #[target_feature(enable = "avx512f")]
    unsafe fn weight_only_tile<const BITS: usize, const R: usize>(
        a: &[f32],
        lda: usize,
        i: usize,
        w: &super::WeightOnly,
        block: usize,
        c: &mut [f32],
    ) {
        let (k, n) = (w.k, w.n);
        let first = block * COLS;
        let mask = lane_mask(n - first);
        // SAFETY: the lanes of columns below `n` from `first` exist.
        let scales = unsafe { _mm512_maskz_loadu_ps(mask, w.scales[first..].as_ptr()) };
        // The tile's rows of `a`, read through one base pointer (checked once here).
        assert!(
            k == 0 || (i + R - 1) * lda + k <= a.len(),
            "the tile's rows of a"
        );
        let base = a[i * lda..].as_ptr();
        let mut acc = [_mm512_setzero_ps(); R];
        for p in 0..k {
            let wv = weights::<BITS>(w.row(block, p));
            #[allow(clippy::needless_range_loop)]
            for r in 0..R {
                // SAFETY: row `r` < R of the tile holds `k` > `p` elements (asserted above).
                let x = unsafe { *base.add(r * lda + p) };
                acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(x), wv, acc[r]);
            }
        }
        #[allow(clippy::needless_range_loop)]
        for r in 0..R {
            let out = c[(i + r) * n + first..].as_mut_ptr();
            // SAFETY: the masked results of row `i + r` are inside `c`.
            unsafe { _mm512_mask_storeu_ps(out, mask, _mm512_mul_ps(acc[r], scales)) };
        }
    }

    /// A block row's 16 weights as floats: 16 bytes sign-extended, or 8 bytes of 4-bit pairs
    /// split into nibbles (low first), interleaved in column order and sign-extended.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn weights<const BITS: usize>(row: &[u8]) -> __m512 {
        // SAFETY (the loads): a block row holds 16 bytes, or 8 for 4-bit weights.
        let ints = if BITS == 8 {
            _mm512_cvtepi8_epi32(unsafe { _mm_loadu_si128(row.as_ptr().cast()) })
        } else {
            let b = unsafe { _mm_loadl_epi64(row.as_ptr().cast()) };
            let low = _mm_and_si128(b, _mm_set1_epi8(15));
            let high = _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi8(15));
            let nibbles = _mm512_cvtepu8_epi32(_mm_unpacklo_epi8(low, high));
            let eight = _mm512_set1_epi32(8);
            _mm512_sub_epi32(_mm512_xor_si512(nibbles, eight), eight)
        };
        _mm512_cvtepi32_ps(ints)
    }

    /// Bytes `p..p + 4` of `row` as one little-endian word, zeros past its end (the packed
    /// weights are zeros there too).
    #[inline(always)]
    fn four_bytes(row: &[u8], p: usize) -> i32 {
        match row.get(p..p + DEPTH) {
            Some(b) => i32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            None => {
                let mut b = [0u8; DEPTH];
                let tail = &row[p..];
                b[..tail.len()].copy_from_slice(tail);
                i32::from_le_bytes(b)
            }
        }
    }
}

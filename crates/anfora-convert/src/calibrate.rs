//! Quantization parameters from calibration data.
//!
//! Activations are quantized to `u8` with a zero point: a range `[lo, hi]` that holds 0 maps
//! onto 0..=255, `scale = (hi − lo) / 255`, `zero = round(−lo / scale)`. A [`Calibrator`]
//! observes the values a tensor takes over the calibration batches and chooses the range:
//! * [`Method::MinMax`]: the smallest and largest values seen;
//! * [`Method::Percentile`]: `|x|` clipped at a percentile of its distribution (outliers
//!   saturate instead of stretching every step);
//! * [`Method::Entropy`]: the clipping threshold whose 128-level quantization of the `|x|`
//!   histogram diverges least (Kullback–Leibler) from the histogram itself, as TensorRT's
//!   entropy calibration chooses it.
//!
//! The histogram of `|x|` has [`BINS`] bins over `[0, range]`; when a value exceeds the
//! range, the range doubles and pairs of bins merge, so one pass over the data suffices.
//!
//! Weights are quantized to `i8` symmetrically, one scale per output channel:
//! `scale[j] = max_p |w[p, j]| / 127` ([`weight_scales`]).

use thiserror::Error;

/// Bins of the `|x|` histogram.
pub const BINS: usize = 2048;
/// Levels of the quantized histogram the entropy method compares with (a signed 8-bit
/// magnitude's).
const LEVELS: usize = 128;

/// How a calibrator chooses an activation's range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    MinMax,
    /// The percentile of `|x|`, in (0, 100].
    Percentile(f64),
    Entropy,
}

impl Method {
    /// `minmax`, `percentile` (99.999) or `kl`, as the converter's `--method` names them.
    pub fn parse(name: &str) -> Result<Method, CalibrationError> {
        match name {
            "minmax" => Ok(Method::MinMax),
            "percentile" => Ok(Method::Percentile(99.999)),
            "kl" | "entropy" => Ok(Method::Entropy),
            other => Err(CalibrationError::UnknownMethod(other.to_string())),
        }
    }
}

/// A `u8` quantization: `x ≈ (q − zero) · scale` (the tensor crate's, whose `of_range` the
/// converter, the kernels and fake quantization share).
pub use anfora_tensor::U8Quant as QuantParams;

#[derive(Debug, Error, PartialEq)]
pub enum CalibrationError {
    #[error("calibration data holds {0} at position {1}: quantization needs finite values")]
    NotFinite(f32, usize),
    #[error("no calibration data was observed: quantizing activations needs at least one batch")]
    Empty,
    #[error("percentile {0} is outside (0, 100]")]
    BadPercentile(f64),
    #[error("unknown calibration method '{0}': use minmax, percentile or kl")]
    UnknownMethod(String),
    #[error("weights of {len} values are no {k}×{n} matrix")]
    WeightShape { len: usize, k: usize, n: usize },
}

/// The statistics of one tensor over the calibration batches.
#[derive(Clone, Debug)]
pub struct Calibrator {
    method: Method,
    min: f32,
    max: f32,
    seen: usize,
    /// Counts of `|x|` in `BINS` bins over `[0, range]`.
    histogram: Vec<u64>,
    range: f32,
}

impl Calibrator {
    pub fn new(method: Method) -> Result<Calibrator, CalibrationError> {
        if let Method::Percentile(p) = method
            && !(p > 0.0 && p <= 100.0)
        {
            return Err(CalibrationError::BadPercentile(p));
        }
        Ok(Calibrator {
            method,
            min: f32::INFINITY,
            max: f32::NEG_INFINITY,
            seen: 0,
            histogram: vec![0; BINS],
            range: 0.0,
        })
    }

    /// Adds a batch's values. A NaN or an infinity is an error naming its position in the
    /// batch (nothing of the batch is kept).
    pub fn observe(&mut self, x: &[f32]) -> Result<(), CalibrationError> {
        if let Some((i, &v)) = x.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(CalibrationError::NotFinite(v, i));
        }
        for &v in x {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
            self.add(v.abs());
        }
        self.seen += x.len();
        Ok(())
    }

    fn add(&mut self, a: f32) {
        if a > self.range {
            self.widen(a);
        }
        let bin = if self.range > 0.0 {
            ((a / self.range) * BINS as f32) as usize
        } else {
            0
        };
        self.histogram[bin.min(BINS - 1)] += 1;
    }

    /// Doubles the range (merging pairs of bins) until it holds `a`.
    fn widen(&mut self, a: f32) {
        if self.range == 0.0 {
            // Everything so far was 0 (bin 0 at any range).
            self.range = a;
            return;
        }
        while self.range < a {
            for i in 0..BINS / 2 {
                self.histogram[i] = self.histogram[2 * i] + self.histogram[2 * i + 1];
            }
            self.histogram[BINS / 2..].fill(0);
            self.range *= 2.0;
        }
    }

    /// The parameters the method chooses from what was observed.
    pub fn finish(&self) -> Result<QuantParams, CalibrationError> {
        if self.seen == 0 {
            return Err(CalibrationError::Empty);
        }
        let threshold = match self.method {
            Method::MinMax => return Ok(QuantParams::of_range(self.min, self.max)),
            Method::Percentile(p) => self.percentile(p),
            Method::Entropy => self.entropy_threshold(),
        };
        Ok(QuantParams::of_range(
            self.min.max(-threshold),
            self.max.min(threshold),
        ))
    }

    /// The upper edge of the bin where the cumulative count reaches `p` % of the values.
    fn percentile(&self, p: f64) -> f32 {
        let total: u64 = self.histogram.iter().sum();
        let target = (p / 100.0 * total as f64).ceil() as u64;
        let mut count = 0;
        for (i, &c) in self.histogram.iter().enumerate() {
            count += c;
            if count >= target {
                return self.edge(i + 1);
            }
        }
        self.range
    }

    fn edge(&self, bins: usize) -> f32 {
        self.range * bins as f32 / BINS as f32
    }

    /// The threshold (an edge of the histogram, at least `LEVELS` bins) whose clipped,
    /// 128-level quantized distribution has the least KL divergence from the clipped one.
    fn entropy_threshold(&self) -> f32 {
        let h: Vec<f64> = self.histogram.iter().map(|&c| c as f64).collect();
        let mut best = (f64::INFINITY, BINS);
        for i in LEVELS..=BINS {
            // The reference: bins below i, the outliers added into the last one.
            let mut p = h[..i].to_vec();
            p[i - 1] += h[i..].iter().sum::<f64>();
            let q = quantized(&h[..i], LEVELS);
            let d = divergence(&p, &q);
            if d < best.0 {
                best = (d, i);
            }
        }
        self.edge(best.1)
    }
}

/// `h` merged into `levels` groups of bins, each group's count spread evenly over its bins
/// that are not empty (empty bins stay empty).
fn quantized(h: &[f64], levels: usize) -> Vec<f64> {
    let n = h.len();
    let mut q = vec![0.0; n];
    for l in 0..levels {
        let (start, end) = (
            l * n / levels,
            ((l + 1) * n / levels).max(l * n / levels + 1),
        );
        let group = &h[start..end.min(n)];
        let total: f64 = group.iter().sum();
        let used = group.iter().filter(|&&c| c > 0.0).count();
        if used == 0 {
            continue;
        }
        for (j, &c) in group.iter().enumerate() {
            if c > 0.0 {
                q[start + j] = total / used as f64;
            }
        }
    }
    q
}

/// `KL(p ‖ q)` of two histograms normalized to sums of 1; a bin `p` has and `q` lacks counts
/// as a large penalty (the quantization lost it).
fn divergence(p: &[f64], q: &[f64]) -> f64 {
    let (sp, sq) = (p.iter().sum::<f64>(), q.iter().sum::<f64>());
    if sp == 0.0 || sq == 0.0 {
        return f64::INFINITY;
    }
    p.iter()
        .zip(q)
        .filter(|&(&a, _)| a > 0.0)
        .map(|(&a, &b)| {
            let (a, b) = (a / sp, b / sq);
            if b > 0.0 { a * (a / b).ln() } else { a * 1e3 }
        })
        .sum()
}

/// The per-column scales of a k×n weight matrix (row-major) for symmetric `i8`:
/// `max_p |w[p, j]| / 127` (1 for a column of zeros).
pub fn weight_scales(w: &[f32], k: usize, n: usize) -> Result<Vec<f32>, CalibrationError> {
    weight_scales_to(w, k, n, 127)
}

/// [`weight_scales`] for weights of `levels` steps each side of 0 (127 for 8 bits, 7 for 4).
pub fn weight_scales_to(
    w: &[f32],
    k: usize,
    n: usize,
    levels: u8,
) -> Result<Vec<f32>, CalibrationError> {
    if w.len() != k * n {
        return Err(CalibrationError::WeightShape { len: w.len(), k, n });
    }
    if let Some((i, &v)) = w.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(CalibrationError::NotFinite(v, i));
    }
    Ok((0..n)
        .map(|j| {
            let m = (0..k).map(|p| w[p * n + j].abs()).fold(0.0f32, f32::max);
            if m > 0.0 { m / f32::from(levels) } else { 1.0 }
        })
        .collect())
}

/// `clamp(round_half_even(w[p, j] / scale[j]), −127, 127)`.
pub fn quantize_weights_i8(w: &[f32], n: usize, scales: &[f32]) -> Vec<i8> {
    quantize_weights_to(w, n, scales, 127)
}

/// [`quantize_weights_i8`] clamped to `±levels`.
pub fn quantize_weights_to(w: &[f32], n: usize, scales: &[f32], levels: u8) -> Vec<i8> {
    assert_eq!(scales.len(), n);
    let l = f32::from(levels);
    w.iter()
        .enumerate()
        .map(|(i, &v)| (v / scales[i % n]).round_ties_even().clamp(-l, l) as i8)
        .collect()
}

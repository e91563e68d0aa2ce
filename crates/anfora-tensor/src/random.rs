//! Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel
//! random numbers: as easy as 1, 2, 3", SC 2011).
//!
//! A [`Generator`] is a key (the seed) and a counter of 128-bit blocks used so far. Every
//! block is the Philox bijection of its index under the key, so element `i` of a draw depends
//! only on the seed, the counter when the draw started, and `i`: draws are reproducible, split
//! over threads without changing a bit, and two draws never share a block. A draw takes the
//! blocks it needs and advances the counter past them, so the next draw gives new values.
//!
//! How a draw maps blocks to elements (part of the reproducibility contract):
//! * `uniform` float32: one 32-bit word per element (its top 24 bits), four per block;
//! * `uniform` float64: two words per element (53 bits), two per block;
//! * `normal`: one block per pair of elements, by the Box–Muller transform of two 53-bit
//!   uniforms computed in float64 (the even element takes the cosine, the odd one the sine);
//! * `randint`: two words per element (a 64-bit word `x`, mapped to `low + (x * range) >> 64`,
//!   whose bias is below `range / 2^64`).

use crate::alloc::try_filled;
use crate::element::Element;
use crate::loops::PAR_MIN;
use crate::{DType, ErrorKind, Result, Tensor, TensorError};

const MUL0: u32 = 0xD251_1F53;
const MUL1: u32 = 0xCD9E_8D57;
/// The Weyl sequence that bumps the key between rounds (golden ratio and sqrt(3) - 1).
const BUMP0: u32 = 0x9E37_79B9;
const BUMP1: u32 = 0xBB67_AE85;

/// The Philox4x32 bijection of `ctr` under `key`, with 10 rounds.
pub fn philox4x32_10(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let [mut c0, mut c1, mut c2, mut c3] = ctr;
    let [mut k0, mut k1] = key;
    for round in 0..10 {
        if round > 0 {
            k0 = k0.wrapping_add(BUMP0);
            k1 = k1.wrapping_add(BUMP1);
        }
        let p0 = u64::from(MUL0) * u64::from(c0);
        let p1 = u64::from(MUL1) * u64::from(c2);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        (c0, c1, c2, c3) = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0);
    }
    [c0, c1, c2, c3]
}

/// A seeded stream of random blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generator {
    seed: u64,
    /// Blocks used so far.
    counter: u64,
}

impl Generator {
    pub fn new(seed: u64) -> Generator {
        Generator { seed, counter: 0 }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The number of 128-bit blocks drawn so far: with the seed, the whole state.
    pub fn counter(&self) -> u64 {
        self.counter
    }

    /// Restores a state saved with [`Generator::counter`].
    pub fn set_counter(&mut self, counter: u64) {
        self.counter = counter;
    }

    fn key(&self) -> [u32; 2] {
        [self.seed as u32, (self.seed >> 32) as u32]
    }

    /// The block with index `b`.
    fn block(&self, b: u64) -> [u32; 4] {
        philox4x32_10([b as u32, (b >> 32) as u32, 0, 0], self.key())
    }

    /// Takes `blocks` blocks and returns the index of the first.
    fn take(&mut self, blocks: u64) -> Result<u64> {
        let start = self.counter;
        self.counter = start.checked_add(blocks).ok_or_else(|| {
            TensorError::new(
                ErrorKind::Overflow,
                "the random generator's counter is exhausted (2^64 blocks); set a new seed",
            )
        })?;
        Ok(start)
    }

    /// Fills a new tensor of `shape`: element group `g` (of `per_block` elements) is
    /// `fill(block g)`.
    fn fill<T: Element>(
        &mut self,
        shape: &[usize],
        per_block: usize,
        fill: impl Fn([u32; 4], &mut [T]) + Sync,
    ) -> Result<Tensor> {
        let mut out: Vec<T> = try_filled(shape, T::from_bool(false))?;
        let n = out.len();
        let start = self.take(n.div_ceil(per_block) as u64)?;
        let this = &*self;
        let run = |first_group: usize, part: &mut [T]| {
            for (g, items) in part.chunks_mut(per_block).enumerate() {
                fill(this.block(start + (first_group + g) as u64), items);
            }
        };
        if n >= PAR_MIN && rayon::current_num_threads() > 1 {
            // Whole groups per task, so that no block is split between tasks.
            let task = per_block * 4096;
            crate::parallel::for_each_part(&mut out, task, |t, part| run(t * 4096, part));
        } else {
            run(0, &mut out);
        }
        Ok(Tensor::from_storage(T::into_storage(out), shape.to_vec()))
    }

    /// Samples of the uniform distribution on `[low, high)` (numpy's `uniform`), float32 or
    /// float64.
    pub fn uniform(
        &mut self,
        shape: &[usize],
        low: f64,
        high: f64,
        dtype: DType,
    ) -> Result<Tensor> {
        let range = high - low;
        if !low.is_finite() || !high.is_finite() || !range.is_finite() {
            return Err(TensorError::new(
                ErrorKind::Overflow,
                format!("uniform: the range [{low}, {high}) exceeds the valid bounds"),
            ));
        }
        match dtype {
            DType::F32 => {
                let (low32, high32) = (low as f32, high as f32);
                let range32 = high32 - low32;
                self.fill::<f32>(shape, 4, move |w, items| {
                    for (x, &word) in items.iter_mut().zip(&w) {
                        let u = (word >> 8) as f32 * (1.0 / (1u32 << 24) as f32);
                        *x = below(range32.mul_add(u, low32), low32, high32);
                    }
                })
            }
            DType::F64 => self.fill::<f64>(shape, 2, move |w, items| {
                for (x, pair) in items.iter_mut().zip(w.chunks_exact(2)) {
                    *x = below(range.mul_add(unit53(pair[0], pair[1]), low), low, high);
                }
            }),
            _ => Err(float_only("uniform", dtype)),
        }
    }

    /// Samples of the normal distribution with mean `loc` and standard deviation `scale`
    /// (numpy's `normal`), float32 or float64.
    pub fn normal(
        &mut self,
        shape: &[usize],
        loc: f64,
        scale: f64,
        dtype: DType,
    ) -> Result<Tensor> {
        if scale.is_nan() || scale < 0.0 {
            return Err(TensorError::new(ErrorKind::Value, "normal: scale < 0"));
        }
        let pair = move |w: [u32; 4]| {
            // u1 in (0, 1], so that its logarithm is finite.
            let u1 = 1.0 - unit53(w[0], w[1]);
            let u2 = unit53(w[2], w[3]);
            let r = (-2.0 * u1.ln()).sqrt();
            let (s, c) = (std::f64::consts::TAU * u2).sin_cos();
            (scale.mul_add(r * c, loc), scale.mul_add(r * s, loc))
        };
        match dtype {
            DType::F32 => self.fill::<f32>(shape, 2, move |w, items| {
                let (a, b) = pair(w);
                for (x, v) in items.iter_mut().zip([a, b]) {
                    *x = v as f32;
                }
            }),
            DType::F64 => self.fill::<f64>(shape, 2, move |w, items| {
                let (a, b) = pair(w);
                for (x, v) in items.iter_mut().zip([a, b]) {
                    *x = v;
                }
            }),
            _ => Err(float_only("normal", dtype)),
        }
    }

    /// Integers drawn uniformly from `[low, high)` (numpy's `randint`), int32 or int64.
    pub fn randint(
        &mut self,
        shape: &[usize],
        low: i64,
        high: i64,
        dtype: DType,
    ) -> Result<Tensor> {
        if low >= high {
            return Err(TensorError::new(ErrorKind::Value, "randint: low >= high"));
        }
        if dtype == DType::I32 {
            let name = if low < i64::from(i32::MIN) {
                Some("low")
            } else if high - 1 > i64::from(i32::MAX) {
                Some("high")
            } else {
                None
            };
            if let Some(name) = name {
                return Err(TensorError::new(
                    ErrorKind::Value,
                    format!("randint: {name} is out of bounds for int32"),
                ));
            }
        }
        // The number of values, which fits in a u64 since low < high.
        let range = high.wrapping_sub(low) as u64;
        let draw = move |hi: u32, lo: u32| {
            let x = (u64::from(hi) << 32) | u64::from(lo);
            let k = ((u128::from(x) * u128::from(range)) >> 64) as u64;
            low.wrapping_add(k as i64)
        };
        match dtype {
            DType::I64 => self.fill::<i64>(shape, 2, move |w, items| {
                for (x, pair) in items.iter_mut().zip(w.chunks_exact(2)) {
                    *x = draw(pair[0], pair[1]);
                }
            }),
            DType::I32 => self.fill::<i32>(shape, 2, move |w, items| {
                for (x, pair) in items.iter_mut().zip(w.chunks_exact(2)) {
                    *x = draw(pair[0], pair[1]) as i32;
                }
            }),
            _ => Err(TensorError::new(
                ErrorKind::Type,
                format!(
                    "randint: unsupported dtype {} (int32 or int64)",
                    dtype.name()
                ),
            )),
        }
    }
}

/// A float64 in [0, 1) from the top 53 bits of `hi:lo`.
fn unit53(hi: u32, lo: u32) -> f64 {
    let x = (u64::from(hi) << 32) | u64::from(lo);
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// `v`, moved below `high` when rounding reached it (so that samples stay in `[low, high)`).
fn below<F: Copy + PartialOrd + NextDown>(v: F, low: F, high: F) -> F {
    if low < high && v >= high {
        high.next_down_()
    } else {
        v
    }
}

trait NextDown {
    fn next_down_(self) -> Self;
}

impl NextDown for f32 {
    fn next_down_(self) -> f32 {
        self.next_down()
    }
}

impl NextDown for f64 {
    fn next_down_(self) -> f64 {
        self.next_down()
    }
}

fn float_only(op: &str, dtype: DType) -> TensorError {
    TensorError::new(
        ErrorKind::Type,
        format!(
            "{op}: unsupported dtype {} (float32 or float64)",
            dtype.name()
        ),
    )
}

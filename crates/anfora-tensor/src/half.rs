//! float16 and bfloat16: storage types that compute in float32.
//!
//! A half-precision tensor holds 16-bit values. Every operation reads it as float32 (exact:
//! float32 holds every float16 and bfloat16 value), computes in float32 with the float32
//! kernels, and stores a float32 result back in the half dtype when every float operand was of
//! that one half dtype (rounding to nearest even, as numpy's float16 loops do). So `f16 + f16`,
//! `f16 * 2.5`, `f16 + bool` and `sum(f16)` are float16, and data movement (reshape, transpose,
//! concat, indexing) is exact; promotion follows numpy: float16 with float32 is float32, with
//! float64, int32 or int64 is float64. bfloat16 (not a numpy type) promotes the same way, and
//! float16 with bfloat16 is float32.

use std::sync::Arc;

use ::half::{bf16, f16};

use crate::{DType, Result, Storage, Tensor, alloc};

impl Tensor {
    /// Whether this tensor is float16 or bfloat16.
    #[inline]
    pub fn is_half(&self) -> bool {
        self.dtype().is_half()
    }

    /// float16 or bfloat16 values as float32 (exact); other tensors as they are.
    pub fn widen(&self) -> Tensor {
        let v: Vec<f32> = match self.data() {
            Storage::F16(v) => v.iter().map(|x| x.to_f32()).collect(),
            Storage::BF16(v) => v.iter().map(|x| x.to_f32()).collect(),
            _ => return self.clone(),
        };
        Tensor {
            shape: self.shape.clone(),
            storage: Arc::new(Storage::F32(v)),
        }
    }
}

/// The float32 copies `f` computes on.
pub(crate) fn widen_all(inputs: &[&Tensor]) -> Vec<Tensor> {
    inputs.iter().map(|t| t.widen()).collect()
}

/// The half dtype a float32 result is stored in: `Some` when some input is half and every
/// float input has that one half dtype.
pub(crate) fn result_half(dtypes: impl IntoIterator<Item = DType>) -> Option<DType> {
    let mut half = None;
    for d in dtypes.into_iter().filter(|d| d.is_float()) {
        match (d.is_half(), half) {
            (false, _) => return None,
            (true, None) => half = Some(d),
            (true, Some(h)) if h != d => return None,
            _ => {}
        }
    }
    half
}

/// The dtype a result of dtype `computed` (computed from float32 copies) is stored in.
pub(crate) fn stored_dtype(computed: DType, inputs: impl IntoIterator<Item = DType>) -> DType {
    match (computed, result_half(inputs)) {
        (DType::F32, Some(h)) => h,
        _ => computed,
    }
}

/// What an operation returns: one tensor or several.
pub(crate) trait Narrow: Sized {
    fn narrow(self, to: DType) -> Result<Self>;
}

impl Narrow for Tensor {
    fn narrow(self, to: DType) -> Result<Tensor> {
        if self.dtype() == DType::F32 {
            self.try_cast(to)
        } else {
            Ok(self)
        }
    }
}

impl Narrow for Vec<Tensor> {
    fn narrow(self, to: DType) -> Result<Vec<Tensor>> {
        self.into_iter().map(|t| t.narrow(to)).collect()
    }
}

/// Runs `f` on float32 copies of `inputs` and stores a float32 result in the inputs' half
/// dtype (see the module documentation).
pub(crate) fn via_f32<R: Narrow>(
    inputs: &[&Tensor],
    f: impl FnOnce(&[Tensor]) -> Result<R>,
) -> Result<R> {
    let to = result_half(inputs.iter().map(|t| t.dtype()));
    let r = f(&widen_all(inputs))?;
    match to {
        Some(h) => r.narrow(h),
        None => Ok(r),
    }
}

/// The nearest value of a 16-bit float type to `v` (ties to even, overflow to infinity), from
/// `guess` (`v` rounded through float32, which can round twice: onto a midpoint, then to even)
/// and its two neighbours. `beyond` is the power of two past the largest finite value, where
/// infinity sits for rounding purposes.
fn nearest<H: Copy>(
    v: f64,
    guess: H,
    bits: fn(H) -> u16,
    of: fn(u16) -> H,
    val: fn(H) -> f64,
    beyond: f64,
) -> H {
    if !v.is_finite() {
        return guess;
    }
    let b = bits(guess);
    let mut best = guess;
    let mut best_dist = f64::INFINITY;
    for c in [b, b.wrapping_sub(1), b.wrapping_add(1)].map(of) {
        let cv = val(c);
        let cv = if cv.is_infinite() {
            beyond.copysign(cv)
        } else {
            cv
        };
        if cv.is_nan() {
            continue;
        }
        let d = (cv - v).abs();
        if d < best_dist || (d == best_dist && bits(c) & 1 == 0) {
            best = c;
            best_dist = d;
        }
    }
    best
}

/// `v` as float16, rounded once.
fn to_f16(v: f64) -> f16 {
    let guess = f16::from_f32(v as f32);
    nearest(v, guess, f16::to_bits, f16::from_bits, f16::to_f64, 65536.0)
}

/// `v` as bfloat16, rounded once.
fn to_bf16(v: f64) -> bf16 {
    let guess = bf16::from_f32(v as f32);
    nearest(
        v,
        guess,
        bf16::to_bits,
        bf16::from_bits,
        bf16::to_f64,
        2f64.powi(128),
    )
}

/// The storage of `dtype` (float16 or bfloat16) for values given as f64, each rounded once.
pub(crate) fn half_storage(values: impl Iterator<Item = f64>, dtype: DType) -> Storage {
    match dtype {
        DType::F16 => Storage::F16(values.map(to_f16).collect()),
        _ => Storage::BF16(values.map(to_bf16).collect()),
    }
}

/// `t` cast to or from a half dtype. Values reach the half dtype rounded once (float64 and
/// integers directly, not through float32); half to bool is "not zero", to ints truncates.
pub(crate) fn cast(t: &Tensor, dtype: DType) -> Result<Tensor> {
    alloc::checked_numel_of(&t.shape, dtype)?;
    let storage = if dtype.is_half() {
        half_storage(t.to_f64_vec().into_iter(), dtype)
    } else {
        return t.widen().try_cast(dtype);
    };
    Ok(Tensor {
        shape: t.shape.clone(),
        storage: Arc::new(storage),
    })
}

/// The values as f64 (exact), for a half storage.
pub(crate) fn values_f64(storage: &Storage) -> Option<Vec<f64>> {
    match storage {
        Storage::F16(v) => Some(v.iter().map(|x| x.to_f64()).collect()),
        Storage::BF16(v) => Some(v.iter().map(|x| x.to_f64()).collect()),
        _ => None,
    }
}

/// Raw 16-bit patterns, for conversions and files.
impl Tensor {
    /// The bits of a float16 or bfloat16 tensor's elements, in row-major order (no copy).
    pub fn as_half_bits(&self) -> Option<&[u16]> {
        use ::half::slice::HalfFloatSliceExt;
        match self.data() {
            Storage::F16(v) => Some(v.reinterpret_cast()),
            Storage::BF16(v) => Some(v.reinterpret_cast()),
            _ => None,
        }
    }

    /// A float16 or bfloat16 tensor from the bits of its elements.
    pub fn from_half_bits(bits: &[u16], shape: &[usize], dtype: DType) -> Result<Tensor> {
        let n = alloc::checked_numel(shape, 2)?;
        if bits.len() != n || !dtype.is_half() {
            return Err(crate::TensorError::new(
                crate::ErrorKind::Value,
                format!(
                    "cannot make a {dtype} tensor of shape {} from {} values",
                    crate::shape_repr::compact_shape(shape),
                    bits.len()
                ),
            ));
        }
        let storage = match dtype {
            DType::F16 => Storage::F16(bits.iter().map(|&b| f16::from_bits(b)).collect()),
            _ => Storage::BF16(bits.iter().map(|&b| bf16::from_bits(b)).collect()),
        };
        Ok(Tensor::from_storage(storage, shape.to_vec()))
    }
}

/// A scatter into or with half-precision tensors: computed in float32 and stored in `x`'s
/// dtype (a scatter keeps the dtype of the tensor written into, as numpy's `x[i] = u` does).
pub(crate) fn scatter(
    op: crate::scatter::ScatterOp,
    x: &Tensor,
    indices: &Tensor,
    updates: &Tensor,
) -> Result<Tensor> {
    let r = crate::scatter::scatter(op, &x.widen(), &indices.widen(), &updates.widen())?;
    r.try_cast(x.dtype())
}

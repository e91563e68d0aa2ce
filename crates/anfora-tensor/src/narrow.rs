//! Storage dtypes: float16 and bfloat16, which compute in float32, and int8 and uint8, which
//! compute in int32.
//!
//! A half-precision tensor holds 16-bit values. Every operation reads it as float32 (exact:
//! float32 holds every float16 and bfloat16 value), computes in float32 with the float32
//! kernels, and stores a float32 result back in the half dtype when every float operand was of
//! that one half dtype (rounding to nearest even, as numpy's float16 loops do). So `f16 + f16`,
//! `f16 * 2.5`, `f16 + bool` and `sum(f16)` are float16, and data movement (reshape, transpose,
//! concat, indexing) is exact; promotion follows numpy: float16 with float32 is float32, with
//! float64, int32 or int64 is float64. bfloat16 (not a numpy type) promotes the same way, and
//! float16 with bfloat16 is float32.
//!
//! int8 and uint8 (the data of quantized models) work the same way over int32: an int32 result
//! is stored back, wrapping as numpy's 8-bit loops do, when every integer operand has that one
//! 8-bit dtype and no operand is a float. Where numpy's promotion leaves the 8-bit dtypes (with
//! a float, or a float function of them), the elementwise entry points cast the 8-bit operands
//! to the promoted dtype first ([`elementwise_dtype`]); int8 with uint8 would be int16, which
//! anfora does not have, and is refused.

use std::sync::Arc;

use ::half::{bf16, f16};

use crate::storage::storage_len;
use crate::{DType, ErrorKind, Result, Storage, Tensor, TensorError, alloc};

impl Tensor {
    /// Whether this tensor is float16 or bfloat16.
    #[inline]
    pub fn is_half(&self) -> bool {
        self.dtype().is_half()
    }

    /// Whether this tensor has a storage dtype (half or 8-bit integer).
    #[inline]
    pub fn is_narrow(&self) -> bool {
        self.dtype().is_narrow()
    }

    /// A storage dtype's values in the dtype it computes in (exact); other tensors as they are.
    pub fn widen(&self) -> Tensor {
        let storage = match self.data() {
            Storage::F16(v) => Storage::F32(v.iter().map(|x| x.to_f32()).collect()),
            Storage::BF16(v) => Storage::F32(v.iter().map(|x| x.to_f32()).collect()),
            Storage::I8(v) => Storage::I32(v.iter().map(|&x| i32::from(x)).collect()),
            Storage::U8(v) => Storage::I32(v.iter().map(|&x| i32::from(x)).collect()),
            _ => return self.clone(),
        };
        Tensor {
            shape: self.shape.clone(),
            storage: Arc::new(storage),
        }
    }
}

/// The wide copies `f` computes on.
pub(crate) fn widen_all(inputs: &[&Tensor]) -> Vec<Tensor> {
    inputs.iter().map(|t| t.widen()).collect()
}

/// The storage dtype a wide result is stored in: a half dtype when some input is half and
/// every float input has that one half dtype; an 8-bit one when every integer input has that
/// one 8-bit dtype and none is a float.
pub(crate) fn result_narrow(dtypes: impl IntoIterator<Item = DType>) -> Option<DType> {
    let (mut half, mut int, mut floats, mut ints) = (None, None, false, false);
    for d in dtypes {
        if d.is_float() {
            floats = true;
            if !d.is_half() || half.is_some_and(|h| h != d) {
                return None;
            }
            half = Some(d);
        } else if d.is_int() {
            ints = true;
            if !d.is_narrow_int() || int.is_some_and(|i| i != d) {
                int = Some(DType::I32);
            } else if int.is_none() {
                int = Some(d);
            }
        }
    }
    match (half, int) {
        (Some(h), _) => Some(h),
        (None, Some(i)) if !floats && ints && i.is_narrow_int() => Some(i),
        _ => None,
    }
}

/// The dtype a result of dtype `computed` (computed from wide copies) is stored in.
pub(crate) fn stored_dtype(computed: DType, inputs: impl IntoIterator<Item = DType>) -> DType {
    match result_narrow(inputs) {
        Some(n) if n.wide() == computed => n,
        _ => computed,
    }
}

/// What an operation returns: one tensor or several.
pub(crate) trait Narrow: Sized {
    fn narrow(self, to: DType) -> Result<Self>;
}

impl Narrow for Tensor {
    fn narrow(self, to: DType) -> Result<Tensor> {
        if self.dtype() == to.wide() {
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

/// Runs `f` on wide copies of `inputs` and stores a wide result in the inputs' storage dtype
/// (see the module documentation).
pub(crate) fn via_wide<R: Narrow>(
    inputs: &[&Tensor],
    f: impl FnOnce(&[Tensor]) -> Result<R>,
) -> Result<R> {
    let dtypes: Vec<DType> = inputs.iter().map(|t| t.dtype()).collect();
    let promoted = dtypes.iter().copied().reduce(crate::promote_types);
    if let Some(to) = promoted
        .map(|p| elementwise_dtype(&dtypes, p))
        .transpose()?
        .flatten()
    {
        // numpy's promotion leaves the 8-bit dtypes: compute in the promoted one.
        let cast = (inputs.iter())
            .map(|t| t.narrow_int_as(to))
            .collect::<Result<Vec<_>>>()?;
        return via_wide(&cast.iter().collect::<Vec<_>>(), f);
    }
    let to = result_narrow(dtypes);
    let r = f(&widen_all(inputs))?;
    match to {
        Some(n) => r.narrow(n),
        None => Ok(r),
    }
}

/// The dtype 8-bit integer operands are cast to before an elementwise operation whose promoted
/// dtype is `promoted`: `None` when they compute as themselves (through int32). int8 with
/// uint8 promotes to int16, which is refused.
pub(crate) fn elementwise_dtype(dtypes: &[DType], promoted: DType) -> Result<Option<DType>> {
    let narrow: Vec<DType> = dtypes
        .iter()
        .copied()
        .filter(|d| d.is_narrow_int())
        .collect();
    if narrow.is_empty() {
        return Ok(None);
    }
    if narrow.contains(&DType::I8) && narrow.contains(&DType::U8) && !promoted.is_float() {
        return Err(TensorError::new(
            ErrorKind::Type,
            "int8 with uint8 promotes to int16, which anfora does not have: cast one operand \
             with astype first",
        ));
    }
    Ok((!promoted.is_narrow_int()).then_some(promoted))
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

/// `t` cast to or from a storage dtype. Values reach a half dtype rounded once (float64 and
/// integers directly, not through float32); half to bool is "not zero", to ints truncates.
/// Values reach an 8-bit dtype as numpy's C casts take them: through int32 (floats truncated,
/// NaN and what int32 cannot hold as its smallest value), then wrapped.
pub(crate) fn cast(t: &Tensor, dtype: DType) -> Result<Tensor> {
    alloc::checked_numel_of(&t.shape, dtype)?;
    let storage = if dtype.is_half() {
        half_storage(t.to_f64_vec().into_iter(), dtype)
    } else if dtype.is_narrow_int() {
        let wide = t.widen().try_cast(DType::I32)?;
        let v = wide.as_i32_slice().expect("an int32 tensor");
        match dtype {
            DType::I8 => Storage::I8(v.iter().map(|&x| x as i8).collect()),
            _ => Storage::U8(v.iter().map(|&x| x as u8).collect()),
        }
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

/// The values as i64, for an 8-bit storage.
pub(crate) fn values_i64(storage: &Storage) -> Option<Vec<i64>> {
    match storage {
        Storage::I8(v) => Some(v.iter().map(|&x| i64::from(x)).collect()),
        Storage::U8(v) => Some(v.iter().map(|&x| i64::from(x)).collect()),
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

/// A scatter into or with storage-dtype tensors: computed wide and stored in `x`'s
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

/// 8-bit integer tensors from and to their elements.
impl Tensor {
    /// An 8-bit integer tensor cast to `dtype`; any other tensor as it is.
    pub(crate) fn narrow_int_as(&self, dtype: DType) -> Result<Tensor> {
        if self.dtype().is_narrow_int() {
            self.try_cast(dtype)
        } else {
            Ok(self.clone())
        }
    }

    pub fn from_i8(data: Vec<i8>, shape: &[usize]) -> Result<Tensor> {
        Tensor::from_narrow(Storage::I8(data), shape)
    }

    pub fn from_u8(data: Vec<u8>, shape: &[usize]) -> Result<Tensor> {
        Tensor::from_narrow(Storage::U8(data), shape)
    }

    fn from_narrow(storage: Storage, shape: &[usize]) -> Result<Tensor> {
        let (dtype, len) = (
            crate::storage::storage_dtype(&storage),
            storage_len(&storage),
        );
        if alloc::checked_numel_of(shape, dtype)? != len {
            return Err(TensorError::new(
                ErrorKind::Value,
                format!(
                    "cannot reshape array of size {len} into shape {}",
                    crate::shape_repr::compact_shape(shape)
                ),
            ));
        }
        Ok(Tensor::from_storage(storage, shape.to_vec()))
    }

    pub fn as_i8_slice(&self) -> Option<&[i8]> {
        match self.data() {
            Storage::I8(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_u8_slice(&self) -> Option<&[u8]> {
        match self.data() {
            Storage::U8(v) => Some(v),
            _ => None,
        }
    }
}

//! Reading a tensor's elements out: scalars, typed slices, vectors, printing.

use crate::element::{Element, with_storage};
use crate::{DType, ErrorKind, Result, Scalar, Storage, Tensor, TensorError, format, narrow};

impl Tensor {
    /// The single element of a one-element tensor.
    pub fn item(&self) -> Result<Scalar> {
        if self.numel() != 1 {
            return Err(TensorError::new(
                ErrorKind::Value,
                "can only convert an array of size 1 to a Python scalar",
            ));
        }
        Ok(self.get_flat(0))
    }
    /// Element `i` of the flattened tensor.
    pub fn get_flat(&self, i: usize) -> Scalar {
        match self.data() {
            Storage::I8(v) => return Scalar::Int(i64::from(v[i])),
            Storage::U8(v) => return Scalar::Int(i64::from(v[i])),
            Storage::F16(v) => return Scalar::Float(v[i].to_f64()),
            Storage::BF16(v) => return Scalar::Float(v[i].to_f64()),
            _ => {}
        }
        with_storage!(self.data(), v => v[i].to_scalar())
    }
    /// numpy's `bool(a)`: one element required.
    pub fn truth(&self) -> Result<bool> {
        match self.numel() {
            1 => Ok(match self.get_flat(0) {
                Scalar::Bool(b) => b,
                Scalar::Int(i) => i != 0,
                Scalar::Float(f) => f != 0.0,
            }),
            0 => Err(TensorError::new(
                ErrorKind::Value,
                "The truth value of an empty array is ambiguous. Use `array.size > 0` to check \
                 that an array is not empty.",
            )),
            _ => Err(TensorError::new(
                ErrorKind::Value,
                "The truth value of an array with more than one element is ambiguous. Use a.any() \
                 or a.all()",
            )),
        }
    }
    /// Exact equality of dtype, shape and values (NaN equals NaN).
    pub fn same_as(&self, other: &Tensor) -> bool {
        fn same<T: Element>(a: &[T], b: &Storage) -> bool {
            T::slice(b).is_some_and(|b| a.iter().zip(b).all(|(&x, &y)| x.same(y)))
        }
        if self.is_narrow() || other.is_narrow() {
            return self.shape == other.shape
                && self.dtype() == other.dtype()
                && self.le_bytes() == other.le_bytes();
        }
        self.shape == other.shape && with_storage!(self.data(), v => same(v, other.data()))
    }

    /// `repr(np_array)`, byte for byte.
    pub fn repr(&self) -> String {
        format::repr(self, "array")
    }
    /// The repr of an anfora tensor, `Tensor([1., 2.], dtype=float32)`: numpy's repr of an
    /// ndarray subclass named `Tensor` (the wrapping accounts for the longer prefix).
    pub fn tensor_repr(&self) -> String {
        format::repr(self, "Tensor")
    }
    /// `str(np_array)`, byte for byte.
    pub fn to_str(&self) -> String {
        format::to_str(self)
    }

    pub fn as_bool_slice(&self) -> Option<&[bool]> {
        bool::slice(self.data())
    }
    pub fn as_i32_slice(&self) -> Option<&[i32]> {
        i32::slice(self.data())
    }
    pub fn as_i64_slice(&self) -> Option<&[i64]> {
        i64::slice(self.data())
    }
    pub fn as_f32_slice(&self) -> Option<&[f32]> {
        f32::slice(self.data())
    }
    pub fn as_f64_slice(&self) -> Option<&[f64]> {
        f64::slice(self.data())
    }

    /// All elements converted to f64 (bools as 0/1), in row-major order.
    pub fn to_f64_vec(&self) -> Vec<f64> {
        if let Some(v) = narrow::values_f64(self.data()) {
            return v;
        }
        if let Some(v) = narrow::values_i64(self.data()) {
            return v.into_iter().map(|x| x as f64).collect();
        }
        with_storage!(self.data(), v => v.iter().map(|&x| x.to_f64()).collect())
    }

    /// All elements as Python scalars, in row-major order.
    pub fn to_scalars(&self) -> Vec<Scalar> {
        if let Some(v) = narrow::values_f64(self.data()) {
            return v.into_iter().map(Scalar::Float).collect();
        }
        if let Some(v) = narrow::values_i64(self.data()) {
            return v.into_iter().map(Scalar::Int).collect();
        }
        with_storage!(self.data(), v => v.iter().map(|&x| x.to_scalar()).collect())
    }
}

/// Tensors as little-endian bytes, the layout of checkpoints and model files.
impl Tensor {
    /// The elements in row-major order as little-endian bytes (a bool is one byte, 0 or 1;
    /// float16 and bfloat16 are their 16-bit patterns).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        self.le_bytes().into_owned()
    }

    /// [`Tensor::to_le_bytes`] without a copy where the machine is little-endian (the
    /// elements' own memory).
    pub fn le_bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        fn le<T: Copy, const N: usize>(
            xs: Option<&[T]>,
            f: impl Fn(T) -> [u8; N],
        ) -> std::borrow::Cow<'_, [u8]> {
            let xs = xs.expect("a tensor reads as a slice of its dtype");
            if cfg!(target_endian = "little") {
                // SAFETY: bool, the integers, the floats and u16 are plain bytes in memory
                // (a bool is 0 or 1), laid out little-endian here.
                let bytes = unsafe {
                    std::slice::from_raw_parts(xs.as_ptr().cast::<u8>(), std::mem::size_of_val(xs))
                };
                return std::borrow::Cow::Borrowed(bytes);
            }
            std::borrow::Cow::Owned(xs.iter().flat_map(|&x| f(x)).collect())
        }
        match self.dtype() {
            DType::Bool => le(self.as_bool_slice(), |b| [b as u8]),
            DType::I32 => le(self.as_i32_slice(), i32::to_le_bytes),
            DType::I64 => le(self.as_i64_slice(), i64::to_le_bytes),
            DType::F32 => le(self.as_f32_slice(), f32::to_le_bytes),
            DType::F64 => le(self.as_f64_slice(), f64::to_le_bytes),
            DType::F16 | DType::BF16 => le(self.as_half_bits(), u16::to_le_bytes),
            DType::I8 => le(self.as_i8_slice(), i8::to_le_bytes),
            DType::U8 => le(self.as_u8_slice(), u8::to_le_bytes),
        }
    }

    /// The tensor of `dtype` and `shape` whose elements are `data` as [`Tensor::to_le_bytes`]
    /// writes them. A length that does not match the shape, or a bool byte other than 0 or 1,
    /// is a `ValueError`.
    pub fn from_le_bytes(dtype: DType, shape: &[usize], data: &[u8]) -> Result<Tensor> {
        fn chunks<const N: usize, T: Copy>(data: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
            if cfg!(target_endian = "little") {
                let n = data.len() / N;
                let mut out: Vec<T> = Vec::with_capacity(n);
                // SAFETY: T is a number of N bytes (every bit pattern a value), stored
                // little-endian here; `n · N` bytes are copied into the reserved capacity.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        data.as_ptr(),
                        out.as_mut_ptr().cast::<u8>(),
                        n * N,
                    );
                    out.set_len(n);
                }
                return out;
            }
            data.chunks_exact(N)
                .map(|c| f(c.try_into().expect("chunks of N bytes")))
                .collect()
        }
        let numel = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        let expected = numel.and_then(|n| n.checked_mul(dtype.size_of()));
        if expected != Some(data.len()) {
            return Err(TensorError::new(
                ErrorKind::Value,
                format!(
                    "{} bytes do not hold a {} tensor of shape {shape:?}",
                    data.len(),
                    dtype.name()
                ),
            ));
        }
        match dtype {
            DType::Bool => {
                if let Some(b) = data.iter().find(|&&b| b > 1) {
                    return Err(TensorError::new(
                        ErrorKind::Value,
                        format!("a bool holds the byte {b} (only 0 and 1 are booleans)"),
                    ));
                }
                Tensor::from_bool(data.iter().map(|&b| b == 1).collect(), shape)
            }
            DType::I32 => Tensor::from_i32(chunks(data, i32::from_le_bytes), shape),
            DType::I64 => Tensor::from_i64(chunks(data, i64::from_le_bytes), shape),
            DType::F32 => Tensor::from_f32(chunks(data, f32::from_le_bytes), shape),
            DType::F64 => Tensor::from_f64(chunks(data, f64::from_le_bytes), shape),
            DType::F16 | DType::BF16 => {
                Tensor::from_half_bits(&chunks(data, u16::from_le_bytes), shape, dtype)
            }
            DType::I8 => Tensor::from_i8(chunks(data, i8::from_le_bytes), shape),
            DType::U8 => Tensor::from_u8(data.to_vec(), shape),
        }
    }
}

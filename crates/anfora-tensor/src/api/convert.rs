//! Reading a tensor's elements out: scalars, typed slices, vectors, printing.

use crate::element::{Element, with_storage};
use crate::{ErrorKind, Result, Scalar, Storage, Tensor, TensorError, format, half};

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
        if let Some(v) = half::values_f64(self.data()) {
            return Scalar::Float(v[i]);
        }
        with_storage!(self.data(), v => v[i].to_scalar())
    }
    /// numpy's `bool(a)`: one element required.
    pub fn truth(&self) -> Result<bool> {
        match self.numel() {
            1 => Ok(match half::values_f64(self.data()) {
                Some(v) => v[0] != 0.0,
                None => with_storage!(self.data(), v => !v[0].is_zero()),
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
        if self.is_half() || other.is_half() {
            return self.shape == other.shape
                && self.dtype() == other.dtype()
                && self.as_half_bits() == other.as_half_bits();
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
        if let Some(v) = half::values_f64(self.data()) {
            return v;
        }
        with_storage!(self.data(), v => v.iter().map(|&x| x.to_f64()).collect())
    }

    /// All elements as Python scalars, in row-major order.
    pub fn to_scalars(&self) -> Vec<Scalar> {
        if let Some(v) = half::values_f64(self.data()) {
            return v.into_iter().map(Scalar::Float).collect();
        }
        with_storage!(self.data(), v => v.iter().map(|&x| x.to_scalar()).collect())
    }
}

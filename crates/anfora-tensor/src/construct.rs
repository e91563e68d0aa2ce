//! Construction from Python values: `full`, nested list literals and `arange`.

use crate::alloc::{self, try_collect, try_filled, try_vec};
use crate::element::{Element, with_type};
use crate::promote::convert_scalar;
use crate::shape_repr::tuple_repr;
use crate::{DType, ErrorKind, Nested, Result, Scalar, Tensor, TensorError};

/// An element from a scalar already converted by [`convert_scalar`].
fn element<T: Element>(s: Scalar) -> T {
    match s {
        Scalar::Bool(b) => T::from_bool(b),
        Scalar::Int(i) => T::from_i64(i),
        Scalar::Float(f) => T::from_f64(f),
    }
}

/// `np.array(value, dtype=dtype)`: Python's conversion rules (NaN or an out-of-range value into
/// an integer dtype is an error).
pub(crate) fn scalar(value: Scalar, dtype: DType) -> Result<Tensor> {
    let value = convert_scalar(value, dtype)?;
    let storage = with_type!(dtype, T => T::into_storage(try_filled(&[], element::<T>(value))?));
    Ok(Tensor::from_storage(storage, Vec::new()))
}

/// `np.full(shape, value, dtype=dtype)`: Python ints are range-checked, but floats are cast
/// like arrays (`copyto(..., casting='unsafe')`), so NaN into int64 gives the minimum.
pub(crate) fn full(shape: &[usize], value: Scalar, dtype: DType) -> Result<Tensor> {
    let storage = match value {
        Scalar::Float(f) => {
            with_type!(dtype, T => T::into_storage(try_filled(shape, T::from_f64(f))?))
        }
        _ => {
            let value = convert_scalar(value, dtype)?;
            with_type!(dtype, T => T::into_storage(try_filled(shape, element::<T>(value))?))
        }
    };
    Ok(Tensor::from_storage(storage, shape.to_vec()))
}

/// numpy's shape discovery for nested sequences: the longest consistent prefix of dimensions,
/// and whether the nesting was ragged below it.
#[derive(Default)]
struct Discovery {
    shape: Vec<usize>,
    /// Depth at which scalars were found (or raggedness cut the shape).
    max_depth: Option<usize>,
    ragged: bool,
}

impl Discovery {
    fn cut(&mut self, depth: usize) {
        self.ragged = true;
        let depth = self.max_depth.map_or(depth, |m| m.min(depth));
        self.max_depth = Some(depth);
        self.shape.truncate(depth);
    }

    fn visit(&mut self, node: &Nested, depth: usize) {
        match node {
            Nested::Scalar(_) => match self.max_depth {
                // A sequence was already seen at this depth.
                None if self.shape.len() > depth => self.cut(depth),
                None => self.max_depth = Some(depth),
                Some(m) if m != depth => self.cut(depth),
                Some(_) => {}
            },
            Nested::List(items) => {
                let consistent = if self.max_depth.is_some_and(|m| depth >= m) {
                    false
                } else if self.shape.len() == depth {
                    self.shape.push(items.len());
                    true
                } else {
                    self.shape[depth] == items.len()
                };
                if !consistent {
                    self.cut(depth);
                    return;
                }
                for item in items {
                    self.visit(item, depth + 1);
                }
            }
        }
    }
}

fn flatten(node: &Nested, out: &mut Vec<Scalar>) {
    match node {
        Nested::Scalar(s) => out.push(*s),
        Nested::List(items) => items.iter().for_each(|i| flatten(i, out)),
    }
}

pub(crate) fn from_nested(data: &Nested, dtype: Option<DType>) -> Result<Tensor> {
    let mut disc = Discovery::default();
    disc.visit(data, 0);
    if disc.ragged {
        let depth = disc.shape.len();
        return Err(TensorError::new(
            ErrorKind::Value,
            format!(
                "setting an array element with a sequence. The requested array has an \
                 inhomogeneous shape after {depth} dimensions. The detected shape was {} + \
                 inhomogeneous part.",
                tuple_repr(&disc.shape)
            ),
        ));
    }
    let mut values = Vec::new();
    flatten(data, &mut values);
    // Deliberate deviation: float literals default to float32 (like torch/JAX), and so does `[]`.
    let dtype = dtype.unwrap_or_else(|| {
        if values.is_empty() || values.iter().any(|v| matches!(v, Scalar::Float(_))) {
            DType::F32
        } else if values.iter().any(|v| matches!(v, Scalar::Int(_))) {
            DType::I64
        } else {
            DType::Bool
        }
    });
    let storage = with_type!(dtype, T => {
        let mut data = try_vec::<T>(&disc.shape)?;
        for &v in &values {
            data.push(element::<T>(convert_scalar(v, dtype)?));
        }
        T::into_storage(data)
    });
    Ok(Tensor::from_storage(storage, disc.shape))
}

fn as_int(s: Scalar) -> Option<i128> {
    match s {
        Scalar::Bool(b) => Some(i128::from(b)),
        Scalar::Int(i) => Some(i128::from(i)),
        Scalar::Float(_) => None,
    }
}

/// numpy's length `ceil((stop - start) / step)` computed with Python arithmetic.
fn arange_len(start: Scalar, stop: Scalar, step: Scalar) -> Result<usize> {
    let too_big = || TensorError::new(ErrorKind::Value, "Maximum allowed size exceeded");
    if let (Some(a), Some(b), Some(s)) = (as_int(start), as_int(stop), as_int(step)) {
        if s == 0 {
            return Err(TensorError::new(
                ErrorKind::ZeroDivision,
                "division by zero",
            ));
        }
        // Exact integer ceil division; Python's float division agrees wherever it is exact.
        let (num, den) = if s > 0 { (b - a, s) } else { (a - b, -s) };
        let len = if num <= 0 { 0 } else { (num + den - 1) / den };
        return isize::try_from(len)
            .map(|len| len as usize)
            .map_err(|_| too_big());
    }
    if step.as_f64() == 0.0 {
        return Err(TensorError::new(
            ErrorKind::ZeroDivision,
            "float division by zero",
        ));
    }
    let len = ((stop.as_f64() - start.as_f64()) / step.as_f64()).ceil();
    if len.is_nan() {
        return Err(TensorError::new(
            ErrorKind::Value,
            "arange: cannot compute length",
        ));
    }
    if len > isize::MAX as f64 {
        return Err(too_big());
    }
    Ok(if len <= 0.0 { 0 } else { len as usize })
}

/// `start + step` with Python semantics (int + int stays exact, anything else is a float).
fn python_add(a: Scalar, b: Scalar) -> Result<Scalar> {
    match (as_int(a), as_int(b)) {
        (Some(x), Some(y)) => i64::try_from(x + y).map(Scalar::Int).map_err(|_| {
            TensorError::new(
                ErrorKind::Overflow,
                "Python int too large to convert to C long",
            )
        }),
        _ => Ok(Scalar::Float(a.as_f64() + b.as_f64())),
    }
}

/// numpy's fill: `x[i] = x[0] + i * (x[1] - x[0])`, evaluated in the result dtype, where `x[0]`
/// and `x[1]` are `start` and `start + step` converted to it.
trait ArangeFill: Element {
    fn values(first: Self, second: Self, len: usize) -> impl Iterator<Item = Self>;
}

macro_rules! impl_fill_int {
    ($t:ty) => {
        impl ArangeFill for $t {
            fn values(first: Self, second: Self, len: usize) -> impl Iterator<Item = Self> {
                let delta = second.wrapping_sub(first);
                (0..len).map(move |i| first.wrapping_add((i as $t).wrapping_mul(delta)))
            }
        }
    };
}
impl_fill_int!(i64);

macro_rules! impl_fill_float {
    ($t:ty) => {
        impl ArangeFill for $t {
            fn values(first: Self, second: Self, len: usize) -> impl Iterator<Item = Self> {
                let delta = second - first;
                // The second element is stored as computed, not re-derived from delta.
                let head = [first, second].into_iter().take(len);
                head.chain((2..len).map(move |i| first + i as $t * delta))
            }
        }
    };
}
impl_fill_float!(f64);

/// anfora's `arange`: the values numpy's `arange` gives in int64 (all-int arguments) or
/// float64, cast to the requested dtype (default int64, or float32 for float arguments). So
/// `arange(0, 1, 0.1)` holds the float32 values nearest to numpy's float64 ones (`0.9`, where
/// numpy's own float32 arithmetic would give `0.90000004`).
pub(crate) fn arange(
    start: Scalar,
    stop: Scalar,
    step: Scalar,
    dtype: Option<DType>,
) -> Result<Tensor> {
    let all_int = [start, stop, step]
        .iter()
        .all(|s| !matches!(s, Scalar::Float(_)));
    // Deliberate deviation: float arguments default to float32, anfora's default float.
    let dtype = dtype.unwrap_or(if all_int { DType::I64 } else { DType::F32 });
    let len = arange_len(start, stop, step)?;
    let shape = [len];
    // numpy's size checks, for the result dtype, before any argument conversion.
    alloc::checked_numel_of(&shape, dtype)?;
    let storage = if all_int {
        fill::<i64>(start, step, &shape, dtype)?
    } else {
        fill::<f64>(start, step, &shape, dtype)?
    };
    Ok(Tensor::from_storage(storage, shape.to_vec()))
}

/// The values numpy's `arange` computes in `B`'s dtype, cast to `dtype` as they are stored.
fn fill<B: ArangeFill>(
    start: Scalar,
    step: Scalar,
    shape: &[usize; 1],
    dtype: DType,
) -> Result<crate::Storage> {
    let len = shape[0];
    let first = convert_scalar(start, B::DTYPE)?;
    let second = if len > 1 {
        convert_scalar(python_add(start, step)?, B::DTYPE)?
    } else {
        first
    };
    let values = B::values(element(first), element(second), len);
    Ok(with_type!(dtype, T => {
        T::into_storage(try_collect(shape, values.map(|x| x.cast::<T>()))?)
    }))
}

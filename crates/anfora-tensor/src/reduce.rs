//! Reductions over axes, ordered like numpy's so float sums agree bit for bit.
//!
//! numpy walks a C-contiguous input in memory order. When the innermost (coalesced) axis is
//! reduced, each contiguous run is summed pairwise and added to the accumulator; when it is kept,
//! rows are accumulated elementwise. Sums start from the identity `0`, max/min from the first
//! element.

use crate::alloc::{self, try_filled};
use crate::element::{Element, with_storage};
use crate::shape::{contiguous_strides, for_each_row, gather, normalize_axis};
use crate::{DType, ErrorKind, ReduceOp, Result, Storage, Tensor, TensorError};

/// How values fold into an accumulator.
trait Fold<T: Copy> {
    /// Folds one element.
    fn step(acc: T, x: T) -> T;
    /// Folds a contiguous run along a reduced axis.
    fn run(acc: T, xs: &[T]) -> T {
        xs.iter().fold(acc, |a, &x| Self::step(a, x))
    }
}

struct WrappingSum;
impl Fold<i64> for WrappingSum {
    fn step(acc: i64, x: i64) -> i64 {
        acc.wrapping_add(x)
    }
}

struct WrappingProd;
impl Fold<i64> for WrappingProd {
    fn step(acc: i64, x: i64) -> i64 {
        acc.wrapping_mul(x)
    }
}

/// Float sum with numpy's pairwise summation along contiguous runs.
struct PairwiseSum;
/// Float product (sequential, as numpy).
struct Product;

macro_rules! impl_float_folds {
    ($t:ty) => {
        impl Fold<$t> for PairwiseSum {
            fn step(acc: $t, x: $t) -> $t {
                acc + x
            }
            fn run(acc: $t, xs: &[$t]) -> $t {
                acc + pairwise_sum(xs)
            }
        }
        impl Fold<$t> for Product {
            fn step(acc: $t, x: $t) -> $t {
                acc * x
            }
        }
    };
}
impl_float_folds!(f32);
impl_float_folds!(f64);

/// numpy's `pairwise_sum`: blocks of 8 partial sums below 128 elements, halving above.
fn pairwise_sum<T: Copy + std::ops::Add<Output = T> + Default>(xs: &[T]) -> T {
    let n = xs.len();
    if n < 8 {
        xs.iter().fold(T::default(), |a, &x| a + x)
    } else if n <= 128 {
        let mut r: [T; 8] = std::array::from_fn(|j| xs[j]);
        let whole = n - n % 8;
        for block in xs[8..whole].chunks_exact(8) {
            for (acc, &x) in r.iter_mut().zip(block) {
                *acc = *acc + x;
            }
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &x in &xs[whole..] {
            res = res + x;
        }
        res
    } else {
        let mut half = n / 2;
        half -= half % 8;
        pairwise_sum(&xs[..half]) + pairwise_sum(&xs[half..])
    }
}

/// numpy's `maximum`/`minimum` folds: NaN propagates, ties keep the later element.
struct Max;
struct Min;
impl<T: Element> Fold<T> for Max {
    fn step(acc: T, x: T) -> T {
        // `acc != acc` is the NaN test for any element type.
        #[allow(clippy::eq_op)]
        let nan = acc != acc;
        if acc > x || nan { acc } else { x }
    }
}
impl<T: Element> Fold<T> for Min {
    fn step(acc: T, x: T) -> T {
        #[allow(clippy::eq_op)]
        let nan = acc != acc;
        if acc < x || nan { acc } else { x }
    }
}

/// The reduction layout: input shape, which axes are reduced, and output strides (0 on reduced
/// axes) for a row-major output over the kept axes.
struct Layout<'a> {
    shape: &'a [usize],
    /// The input shape with reduced axes set to 1.
    kept: Vec<usize>,
    in_strides: Vec<isize>,
    out_strides: Vec<isize>,
    /// The result's shape (with or without the reduced axes), named in allocation errors.
    out_shape: Vec<usize>,
}

impl<'a> Layout<'a> {
    fn new(shape: &'a [usize], reduced: &[bool], out_shape: Vec<usize>) -> Self {
        let kept: Vec<usize> = shape
            .iter()
            .zip(reduced)
            .map(|(&d, &r)| if r { 1 } else { d })
            .collect();
        let kept_strides = contiguous_strides(&kept);
        let out_strides = kept_strides
            .iter()
            .zip(reduced)
            .map(|(&s, &r)| if r { 0 } else { s })
            .collect();
        Layout {
            shape,
            in_strides: contiguous_strides(shape),
            out_strides,
            out_shape,
            kept,
        }
    }

    /// Folds `data` into `acc` (one accumulator per output element) in numpy's order.
    fn fold<T: Copy, F: Fold<T>>(&self, data: &[T], acc: &mut [T]) {
        for_each_row(
            self.shape,
            [&self.in_strides, &self.out_strides],
            [0, 0],
            |[i, o], len, [_, out_step]| {
                let (i, o) = (i as usize, o as usize);
                let run = &data[i..i + len];
                if out_step == 0 {
                    acc[o] = F::run(acc[o], run);
                } else {
                    for (a, &x) in acc[o..o + len].iter_mut().zip(run) {
                        *a = F::step(*a, x);
                    }
                }
            },
        );
    }

    fn fold_from<T: Element, F: Fold<T>>(&self, data: &[T], init: T) -> Result<Vec<T>> {
        let mut acc = try_filled(&self.out_shape, init)?;
        self.fold::<T, F>(data, &mut acc);
        Ok(acc)
    }

    /// Max/min start from the first element of each reduced slice (there is no identity).
    fn fold_first<T: Element, F: Fold<T>>(&self, data: &[T]) -> Result<Vec<T>> {
        let mut acc = gather(data, 0, &self.kept, &self.in_strides)?;
        self.fold::<T, F>(data, &mut acc);
        Ok(acc)
    }
}

/// Which axes a reduction removes.
fn reduced_axes(op: ReduceOp, ndim: usize, axes: Option<&[i64]>) -> Result<Vec<bool>> {
    let Some(axes) = axes else {
        return Ok(vec![true; ndim]);
    };
    // numpy's ufunc reductions let a single axis 0 or -1 through for 0-d arrays (backwards
    // compatibility); `mean` validates axes in Python and does not.
    if ndim == 0 && op != ReduceOp::Mean && matches!(axes, [0] | [-1]) {
        return Ok(Vec::new());
    }
    // numpy checks every axis's bounds before looking for duplicates.
    let axes = axes
        .iter()
        .map(|&a| normalize_axis(a, ndim))
        .collect::<Result<Vec<_>>>()?;
    let mut reduced = vec![false; ndim];
    for a in axes {
        if std::mem::replace(&mut reduced[a], true) {
            return Err(TensorError::new(
                ErrorKind::Value,
                "duplicate value in 'axis'",
            ));
        }
    }
    Ok(reduced)
}

/// Result dtype of a reduction (numpy on 64-bit Linux: bool/int sums and products are int64).
pub fn reduce_result_dtype(op: ReduceOp, a: DType) -> DType {
    match op {
        ReduceOp::Sum | ReduceOp::Prod if !a.is_float() => DType::I64,
        ReduceOp::Mean if !a.is_float() => DType::F64,
        _ => a,
    }
}

/// What a reduction computes: which axes it removes, the result's shape, how many elements
/// each result folds, and the dtype it accumulates in (the result's, but float64 for the
/// mean of integers). Every device's reduction plans with it, so shapes and errors agree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReducePlan {
    pub reduced: Vec<bool>,
    pub shape: Vec<usize>,
    pub count: usize,
    pub acc_dtype: DType,
}

/// Plans `op` over `axes` of a tensor of `shape` and `dtype`, with numpy's errors (an axis out
/// of range, a duplicate axis, max or min of nothing, a result too large).
pub fn reduce_plan(
    op: ReduceOp,
    in_shape: &[usize],
    dtype: DType,
    axes: Option<&[i64]>,
    keepdims: bool,
) -> Result<ReducePlan> {
    let reduced = reduced_axes(op, in_shape.len(), axes)?;
    let count: usize = in_shape
        .iter()
        .zip(&reduced)
        .filter(|(_, r)| **r)
        .map(|(d, _)| d)
        .product();
    if count == 0 && matches!(op, ReduceOp::Max | ReduceOp::Min) {
        let name = if op == ReduceOp::Max {
            "maximum"
        } else {
            "minimum"
        };
        return Err(TensorError::new(
            ErrorKind::Value,
            format!("zero-size array to reduction operation {name} which has no identity"),
        ));
    }
    let shape: Vec<usize> = in_shape
        .iter()
        .zip(&reduced)
        .filter_map(|(&d, &r)| match (r, keepdims) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    let acc_dtype = match op {
        ReduceOp::Mean if !dtype.is_float() => DType::F64,
        _ => reduce_result_dtype(op, dtype),
    };
    // Refuse an oversized result before copying the input.
    alloc::check_size(&shape, acc_dtype)?;
    Ok(ReducePlan {
        reduced,
        shape,
        count,
        acc_dtype,
    })
}

pub(crate) fn reduce(
    op: ReduceOp,
    a: &Tensor,
    axes: Option<&[i64]>,
    keepdims: bool,
) -> Result<Tensor> {
    let ReducePlan {
        reduced,
        shape,
        count,
        acc_dtype,
    } = reduce_plan(op, &a.shape, a.dtype(), axes, keepdims)?;
    let layout = Layout::new(&a.shape, &reduced, shape.clone());
    let input = a.try_cast(acc_dtype)?;
    let storage = match (op, input.try_data()?) {
        (ReduceOp::Max, s) => {
            with_storage!(s, v => Element::into_storage(layout.fold_first::<_, Max>(v)?))
        }
        (ReduceOp::Min, s) => {
            with_storage!(s, v => Element::into_storage(layout.fold_first::<_, Min>(v)?))
        }
        (ReduceOp::Sum, Storage::I64(v)) => Storage::I64(layout.fold_from::<_, WrappingSum>(v, 0)?),
        (ReduceOp::Prod, Storage::I64(v)) => {
            Storage::I64(layout.fold_from::<_, WrappingProd>(v, 1)?)
        }
        (ReduceOp::Sum | ReduceOp::Mean, Storage::F32(v)) => {
            Storage::F32(layout.fold_from::<_, PairwiseSum>(v, 0.0)?)
        }
        (ReduceOp::Sum | ReduceOp::Mean, Storage::F64(v)) => {
            Storage::F64(layout.fold_from::<_, PairwiseSum>(v, 0.0)?)
        }
        (ReduceOp::Prod, Storage::F32(v)) => Storage::F32(layout.fold_from::<_, Product>(v, 1.0)?),
        (ReduceOp::Prod, Storage::F64(v)) => Storage::F64(layout.fold_from::<_, Product>(v, 1.0)?),
        _ => unreachable!("input was cast to the accumulation dtype"),
    };
    let mut storage = storage;
    if op == ReduceOp::Mean {
        // numpy divides by the count as an intp, i.e. in float64, then casts back.
        match &mut storage {
            Storage::F32(v) => {
                for s in v.iter_mut() {
                    *s = (f64::from(*s) / count as f64) as f32;
                }
            }
            Storage::F64(v) => {
                for s in v.iter_mut() {
                    *s /= count as f64;
                }
            }
            _ => {}
        }
    }
    Ok(Tensor::from_storage(storage, shape))
}

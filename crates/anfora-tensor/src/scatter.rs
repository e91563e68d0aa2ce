//! Scatter kernels: MindSpore's ScatterUpdate / ScatterAdd (index tensors along axis 0) and
//! ScatterNdUpdate / ScatterNdAdd (index tuples over the leading axes).
//!
//! Each is numpy's `out = x.copy(); out[idx] = updates` (updates) or `np.add.at(out, idx,
//! updates)` (adds): index tuples are applied in row-major order of `indices`, so with duplicate
//! indices the last update wins and adds accumulate. The axis-0 forms are the nd forms with one
//! index per tuple. `x` is never modified: the result is a new buffer.

use crate::element::{Element, with_storage};
use crate::shape::{contiguous_strides, resolve_index};
use crate::shape_repr::compact_shape;
use crate::{DType, ErrorKind, Result, Storage, Tensor, TensorError, alloc};

/// The four scatter operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScatterOp {
    Update,
    Add,
    NdUpdate,
    NdAdd,
}

impl ScatterOp {
    /// The method name, used in error messages.
    fn name(self) -> &'static str {
        match self {
            ScatterOp::Update => "scatter_update",
            ScatterOp::Add => "scatter_add",
            ScatterOp::NdUpdate => "scatter_nd_update",
            ScatterOp::NdAdd => "scatter_nd_add",
        }
    }

    /// Whether the last axis of `indices` holds index tuples (else each element is an index
    /// along axis 0).
    fn is_nd(self) -> bool {
        matches!(self, ScatterOp::NdUpdate | ScatterOp::NdAdd)
    }

    /// Whether updates accumulate (else they overwrite).
    fn accumulates(self) -> bool {
        matches!(self, ScatterOp::Add | ScatterOp::NdAdd)
    }
}

/// How an update folds into an element when it accumulates: numpy's `add` (ints wrap).
pub(crate) trait Accumulate: Element {
    fn accumulate(self, update: Self) -> Self;
}

impl Accumulate for bool {
    /// numpy's `add` on bools (logical or); the public ops refuse bool tensors before this.
    fn accumulate(self, update: Self) -> Self {
        self | update
    }
}

macro_rules! impl_accumulate {
    ($($t:ty => $body:expr),*) => {$(
        impl Accumulate for $t {
            fn accumulate(self, update: Self) -> Self {
                let add: fn($t, $t) -> $t = $body;
                add(self, update)
            }
        }
    )*};
}
impl_accumulate!(
    i32 => i32::wrapping_add,
    i64 => i64::wrapping_add,
    f32 => |a, b| a + b,
    f64 => |a, b| a + b
);

/// Kind rank for the `same_kind` casting rule: bool < int < float.
fn kind_rank(dtype: DType) -> u8 {
    match dtype {
        DType::Bool => 0,
        DType::I32 | DType::I64 | DType::I8 | DType::U8 => 1,
        DType::F32 | DType::F64 | DType::F16 | DType::BF16 => 2,
    }
}

fn type_error(message: String) -> TensorError {
    TensorError::new(ErrorKind::Type, message)
}

fn value_error(message: String) -> TensorError {
    TensorError::new(ErrorKind::Value, message)
}

/// Runs `op` on `x`: checks dtypes and shapes, resolves the index tuples to element offsets in
/// `x`, then copies `x` and writes (or adds) the update slices in order.
pub(crate) fn scatter(
    op: ScatterOp,
    x: &Tensor,
    indices: &Tensor,
    updates: &Tensor,
) -> Result<Tensor> {
    let name = op.name();
    if op.accumulates() && x.dtype() == DType::Bool {
        return Err(type_error(format!(
            "{name} is not supported for boolean tensors"
        )));
    }
    if !indices.dtype().is_int() {
        return Err(type_error(format!(
            "{name}: indices must be int32 or int64, got {}",
            indices.dtype()
        )));
    }
    if kind_rank(updates.dtype()) > kind_rank(x.dtype()) {
        return Err(type_error(format!(
            "{name}: cannot cast updates from {} to {}",
            updates.dtype(),
            x.dtype()
        )));
    }

    // `lead`: the shape of the grid of index tuples; `k`: the length of each tuple.
    let (lead, k, expected_rule) = if op.is_nd() {
        let Some((&k, lead)) = indices.shape().split_last() else {
            return Err(value_error(format!(
                "{name}: indices must have at least 1 dimension, got a 0-d tensor"
            )));
        };
        if k == 0 || k > x.ndim() {
            return Err(value_error(format!(
                "{name}: the last dimension of indices must be between 1 and x.ndim = {}, got {k} \
                 (indices shape {}, x shape {})",
                x.ndim(),
                compact_shape(indices.shape()),
                compact_shape(x.shape())
            )));
        }
        (lead, k, format!("indices.shape[:-1] + x.shape[{k}:]"))
    } else {
        if x.ndim() == 0 {
            return Err(value_error(format!(
                "{name}: x must have at least 1 dimension, got a 0-d tensor"
            )));
        }
        (
            indices.shape(),
            1,
            "indices.shape + x.shape[1:]".to_string(),
        )
    };
    let expected: Vec<usize> = lead.iter().chain(&x.shape()[k..]).copied().collect();
    if updates.shape() != expected.as_slice() {
        return Err(value_error(format!(
            "{name}: updates has shape {}, but indices of shape {} and x of shape {} need {} \
             ({expected_rule})",
            compact_shape(updates.shape()),
            compact_shape(indices.shape()),
            compact_shape(x.shape()),
            compact_shape(&expected)
        )));
    }

    let offsets = match (indices.as_i32_slice(), indices.as_i64_slice()) {
        (Some(v), _) => resolve_offsets(v.iter().map(|&i| i64::from(i)), k, x.shape())?,
        (_, Some(v)) => resolve_offsets(v.iter().copied(), k, x.shape())?,
        _ => unreachable!("indices are int32 or int64"),
    };
    let row: usize = x.shape()[k..].iter().product();
    let updates = updates.try_cast(x.dtype())?;
    let accumulate = op.accumulates();
    let storage = with_storage!(x.try_data()?, v => Element::into_storage(
        apply(v, x.shape(), updates.try_data()?, &offsets, row, accumulate)?
    ));
    Ok(Tensor::from_storage(storage, x.shape().to_vec()))
}

/// The element offset in `x` (contiguous, of `shape`) of the slice each `k`-tuple of `indices`
/// selects, in order. Negative indices count from the end of their axis; others out of range are
/// numpy's IndexError.
fn resolve_offsets(
    indices: impl Iterator<Item = i64>,
    k: usize,
    shape: &[usize],
) -> Result<Vec<usize>> {
    let strides = contiguous_strides(shape);
    let mut offsets = Vec::new();
    let mut offset = 0usize;
    for (n, index) in indices.enumerate() {
        let axis = n % k;
        // In range, so the offset stays within the tensor.
        offset += resolve_index(index, axis, shape[axis])? * strides[axis] as usize;
        if axis == k - 1 {
            offsets.push(offset);
            offset = 0;
        }
    }
    Ok(offsets)
}

/// A copy of `x` (of `shape`) with the `row`-element slice at each of `offsets` overwritten by
/// (or accumulating) the matching slice of `updates`, in order.
fn apply<T: Accumulate>(
    x: &[T],
    shape: &[usize],
    updates: &Storage,
    offsets: &[usize],
    row: usize,
    accumulate: bool,
) -> Result<Vec<T>> {
    let updates = T::slice(updates).expect("updates were cast to x's dtype");
    let mut out = alloc::try_vec::<T>(shape)?;
    out.extend_from_slice(x);
    if row == 0 {
        return Ok(out);
    }
    for (&offset, src) in offsets.iter().zip(updates.chunks_exact(row)) {
        let dst = &mut out[offset..offset + row];
        if accumulate {
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = d.accumulate(s);
            }
        } else {
            dst.copy_from_slice(src);
        }
    }
    Ok(out)
}

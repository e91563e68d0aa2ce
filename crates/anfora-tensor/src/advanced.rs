//! numpy's advanced indexing: integer-array and boolean-mask indices, alone or mixed with basic
//! ones, for reading (`x[idx]`, a copy), assigning (`x[idx] = v` on a copy of `x`) and the
//! gradient of a read (the sensitivity added back where it was read, duplicates accumulating).
//!
//! Every operation first makes a [`Plan`]: the shape of `x[idx]` and, for each of its elements
//! in row-major order, the offset of the element of `x` (contiguous, row-major) it reads. The
//! rules are numpy's:
//! - a k-d boolean mask stands for the k integer arrays of its `nonzero()`, and must match the
//!   k dimensions it indexes; a 0-d one (`x[True]`) adds a dimension of length 1 (or 0);
//! - when an array index is present, integer scalars are array indices too (0-d ones);
//! - the array indices broadcast together; the broadcast dimensions replace the indexed ones
//!   where the array indices are, when they are adjacent, and go first otherwise.

use crate::element::{Element, with_storage};
use crate::scatter::Accumulate;
use crate::shape::{broadcast_n, contiguous_strides, resolve_index, slice_indices};
use crate::shape_repr::compact_shape;
use crate::{
    AdvIndexItem, DType, ErrorKind, IndexItem, Result, Storage, Tensor, TensorError, alloc,
};

/// The shape of `x[idx]` and, for each of its elements, the offset in `x` it reads.
pub(crate) struct Plan {
    pub(crate) shape: Vec<usize>,
    pub(crate) offsets: Vec<usize>,
}

/// A subscript item resolved against the indexed shape.
enum Item {
    /// An integer on `axis` (before any array index makes it a 0-d array).
    Int(i64, usize),
    /// A slice of `len` elements from `first` by `step` on `axis`.
    Slice {
        first: i64,
        len: usize,
        step: i64,
        axis: usize,
    },
    NewAxis,
    /// An integer array (of `shape`) on `axis`; `None` for a 0-d mask, which indexes nothing.
    Array {
        values: Vec<i64>,
        shape: Vec<usize>,
        axis: Option<usize>,
    },
}

/// One dimension (or the block of broadcast array dimensions) of the result.
enum Group {
    Dim { len: usize, base: i64, step: i64 },
    Arrays,
}

fn index_error(message: impl Into<String>) -> TensorError {
    TensorError::new(ErrorKind::Index, message)
}

/// The offsets `o + f(j)` for each `o` of `offsets` and `j < len`, in that order.
fn expand(offsets: &[i64], len: usize, f: impl Fn(usize) -> i64) -> Vec<i64> {
    let mut out = Vec::with_capacity(offsets.len() * len);
    for &o in offsets {
        out.extend((0..len).map(|j| o + f(j)));
    }
    out
}

/// The dimensions an item consumes.
fn consumes(item: &AdvIndexItem) -> usize {
    match item {
        AdvIndexItem::Basic(IndexItem::Int(_) | IndexItem::Slice { .. }) => 1,
        AdvIndexItem::Basic(IndexItem::NewAxis | IndexItem::Ellipsis) => 0,
        AdvIndexItem::Array(t) if t.dtype() == DType::Bool => t.ndim(),
        AdvIndexItem::Array(_) => 1,
    }
}

/// Whether any item is an array.
pub(crate) fn is_advanced(items: &[AdvIndexItem]) -> bool {
    items.iter().any(|i| matches!(i, AdvIndexItem::Array(_)))
}

/// The items, resolved against `shape` (ellipsis and the trailing axes as full slices).
fn resolve(shape: &[usize], items: &[AdvIndexItem]) -> Result<Vec<Item>> {
    let ndim = shape.len();
    let ellipses = items
        .iter()
        .filter(|i| matches!(i, AdvIndexItem::Basic(IndexItem::Ellipsis)))
        .count();
    if ellipses > 1 {
        return Err(index_error(
            "an index can only have a single ellipsis ('...')",
        ));
    }
    let consumed: usize = items.iter().map(consumes).sum();
    if consumed > ndim {
        return Err(index_error(format!(
            "too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed"
        )));
    }
    let full = |axis: usize| Item::Slice {
        first: 0,
        len: shape[axis],
        step: 1,
        axis,
    };
    let mut out = Vec::with_capacity(items.len() + ndim);
    let mut axis = 0;
    for item in items {
        match item {
            AdvIndexItem::Basic(IndexItem::Int(i)) => {
                out.push(Item::Int(*i, axis));
                axis += 1;
            }
            AdvIndexItem::Basic(IndexItem::Slice { start, stop, step }) => {
                let (first, len, step) = slice_indices(*start, *stop, *step, shape[axis])?;
                out.push(Item::Slice {
                    first,
                    len,
                    step,
                    axis,
                });
                axis += 1;
            }
            AdvIndexItem::Basic(IndexItem::NewAxis) => out.push(Item::NewAxis),
            AdvIndexItem::Basic(IndexItem::Ellipsis) => {
                for _ in 0..ndim - consumed {
                    out.push(full(axis));
                    axis += 1;
                }
            }
            AdvIndexItem::Array(t) if t.dtype() == DType::Bool => {
                let mask = t.try_cast(DType::Bool)?;
                let mask = bool::slice(mask.try_data()?).expect("a bool tensor");
                if t.ndim() == 0 {
                    let n = usize::from(mask[0]);
                    out.push(Item::Array {
                        values: vec![0; n],
                        shape: vec![n],
                        axis: None,
                    });
                    continue;
                }
                for (k, &m) in t.shape().iter().enumerate() {
                    let size = shape[axis + k];
                    if m != size {
                        return Err(index_error(format!(
                            "boolean index did not match indexed array along axis {}; size of \
                             axis is {size} but size of corresponding boolean axis is {m}",
                            axis + k
                        )));
                    }
                }
                // The coordinates of the true elements, one array per mask dimension.
                let count = mask.iter().filter(|&&b| b).count();
                let mut coords = vec![Vec::with_capacity(count); t.ndim()];
                let strides = contiguous_strides(t.shape());
                for (flat, _) in mask.iter().enumerate().filter(|(_, b)| **b) {
                    let mut rest = flat;
                    for (k, &s) in strides.iter().enumerate() {
                        coords[k].push((rest / s as usize) as i64);
                        rest %= s as usize;
                    }
                }
                for values in coords {
                    out.push(Item::Array {
                        values,
                        shape: vec![count],
                        axis: Some(axis),
                    });
                    axis += 1;
                }
            }
            AdvIndexItem::Array(t) => {
                if !t.dtype().is_int() {
                    return Err(index_error(
                        "arrays used as indices must be of integer (or boolean) type",
                    ));
                }
                let v = t.try_cast(DType::I64)?;
                let values = i64::slice(v.try_data()?).expect("an int64 tensor").to_vec();
                out.push(Item::Array {
                    values,
                    shape: t.shape().to_vec(),
                    axis: Some(axis),
                });
                axis += 1;
            }
        }
    }
    while axis < ndim {
        out.push(full(axis));
        axis += 1;
    }
    Ok(out)
}

/// The plan of `x[items]` for a contiguous `x` of `shape`.
pub(crate) fn plan(shape: &[usize], items: &[AdvIndexItem]) -> Result<Plan> {
    let strides = contiguous_strides(shape);
    let mut resolved = resolve(shape, items)?;
    let has_arrays = resolved.iter().any(|i| matches!(i, Item::Array { .. }));
    if has_arrays {
        // Integer scalars are 0-d array indices as soon as an array index is present.
        for item in resolved.iter_mut() {
            if let Item::Int(i, axis) = *item {
                *item = Item::Array {
                    values: vec![i],
                    shape: vec![],
                    axis: Some(axis),
                };
            }
        }
    }
    let positions: Vec<usize> = resolved
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i, Item::Array { .. }))
        .map(|(k, _)| k)
        .collect();
    let adjacent = positions
        .first()
        .zip(positions.last())
        .is_none_or(|(a, b)| b - a + 1 == positions.len());

    // The broadcast shape of the arrays and the offset each of its elements selects.
    let mut block_shape = Vec::new();
    let mut block = vec![0i64];
    if has_arrays {
        let shapes: Vec<&[usize]> = resolved
            .iter()
            .filter_map(|i| match i {
                Item::Array { shape, .. } => Some(shape.as_slice()),
                _ => None,
            })
            .collect();
        block_shape = broadcast_n(&shapes).map_err(|_| {
            let listed: String = shapes
                .iter()
                .map(|s| format!("{} ", compact_shape(s)))
                .collect();
            index_error(format!(
                "shape mismatch: indexing arrays could not be broadcast together with shapes \
                 {listed}"
            ))
        })?;
        alloc::checked_iter_size(&block_shape)?;
        block = vec![0i64; block_shape.iter().product()];
        for item in &resolved {
            let Item::Array {
                values,
                shape: s,
                axis: Some(axis),
            } = item
            else {
                continue;
            };
            let offsets = values
                .iter()
                .map(|&v| Ok(resolve_index(v, *axis, shape[*axis])? as i64 * strides[*axis] as i64))
                .collect::<Result<Vec<i64>>>()?;
            // Where each element of the broadcast block reads in `values`.
            let own = contiguous_strides(s);
            let pad = block_shape.len() - s.len();
            let mut at = vec![0i64];
            for (d, &len) in block_shape.iter().enumerate() {
                let step = if d < pad || s[d - pad] == 1 {
                    0
                } else {
                    own[d - pad] as i64
                };
                at = expand(&at, len, |j| j as i64 * step);
            }
            for (b, &k) in block.iter_mut().zip(&at) {
                *b += offsets[k as usize];
            }
        }
    }

    let mut base = 0i64;
    let mut groups = Vec::new();
    for (k, item) in resolved.iter().enumerate() {
        match *item {
            Item::Int(i, axis) => {
                base += resolve_index(i, axis, shape[axis])? as i64 * strides[axis] as i64;
            }
            Item::Slice {
                first,
                len,
                step,
                axis,
            } => groups.push(Group::Dim {
                len,
                base: if len > 0 {
                    first * strides[axis] as i64
                } else {
                    0
                },
                step: step * strides[axis] as i64,
            }),
            Item::NewAxis => groups.push(Group::Dim {
                len: 1,
                base: 0,
                step: 0,
            }),
            Item::Array { .. } => {
                if adjacent && positions[0] == k {
                    groups.push(Group::Arrays);
                }
            }
        }
    }
    if has_arrays && !adjacent {
        groups.insert(0, Group::Arrays);
    }
    let mut out_shape = Vec::new();
    for g in &groups {
        match g {
            Group::Dim { len, .. } => out_shape.push(*len),
            Group::Arrays => out_shape.extend_from_slice(&block_shape),
        }
    }
    alloc::checked_iter_size(&out_shape)?;
    let mut offsets = vec![base];
    for g in &groups {
        offsets = match g {
            Group::Dim { len, base, step } => expand(&offsets, *len, |j| base + j as i64 * step),
            Group::Arrays => expand(&offsets, block.len(), |j| block[j]),
        };
    }
    Ok(Plan {
        shape: out_shape,
        offsets: offsets.into_iter().map(|o| o as usize).collect(),
    })
}

/// `x[items]` as a new tensor (no half-precision storage).
pub(crate) fn gather(x: &Tensor, items: &[AdvIndexItem]) -> Result<Tensor> {
    let p = plan(x.shape(), items)?;
    let storage = with_storage!(x.try_data()?, v => {
        let mut out = alloc::try_vec(&p.shape)?;
        out.extend(p.offsets.iter().map(|&o| v[o]));
        Element::into_storage(out)
    });
    Ok(Tensor::from_storage(storage, p.shape))
}

/// `d[items]` with zeros for the elements of the selection whose position a later element
/// also selects: each position keeps its value only for the element that writes it last in
/// `x[items] = v` (the gradient of the assigned value).
pub(crate) fn last_writes(d: &Tensor, items: &[AdvIndexItem]) -> Result<Tensor> {
    let p = plan(d.shape(), items)?;
    let mut seen = vec![false; d.numel()];
    let mut wins = vec![false; p.offsets.len()];
    for (i, &o) in p.offsets.iter().enumerate().rev() {
        if !seen[o] {
            seen[o] = true;
            wins[i] = true;
        }
    }
    let storage = with_storage!(d.try_data()?, v => {
        let mut out = alloc::try_vec(&p.shape)?;
        out.extend(p.offsets.iter().zip(&wins).map(|(&o, &w)| {
            if w { v[o] } else { Element::from_bool(false) }
        }));
        Element::into_storage(out)
    });
    Ok(Tensor::from_storage(storage, p.shape))
}

/// `value` as numpy assigns it to a selection of `shape`: leading dimensions of length 1
/// dropped, then broadcast.
fn fit(value: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let mut dims = value.shape();
    while dims.len() > shape.len() && dims[0] == 1 {
        dims = &dims[1..];
    }
    let fits = dims.len() <= shape.len()
        && dims
            .iter()
            .rev()
            .zip(shape.iter().rev())
            .all(|(&v, &s)| v == s || v == 1);
    if !fits {
        return Err(TensorError::new(
            ErrorKind::Value,
            format!(
                "could not broadcast input array from shape {} into shape {}",
                compact_shape(value.shape()),
                compact_shape(shape)
            ),
        ));
    }
    let dims: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
    value.reshape(&dims)?.broadcast_to(shape)
}

/// Where `x[items] = value` writes: the offsets of the selection in `x`, and `value`
/// broadcast to it and cast to `x`'s dtype (numpy's unsafe cast).
fn selection(x: &Tensor, items: &[AdvIndexItem], value: &Tensor) -> Result<(Vec<usize>, Tensor)> {
    let p = plan(x.shape(), items)?;
    let value = fit(value, &p.shape)?.try_cast(x.dtype())?;
    Ok((p.offsets, value))
}

/// A copy of `x` with `x[items] = value` (no half-precision storage in `x`): `value`
/// broadcast to the selection and cast to `x`'s dtype (numpy's unsafe cast); the last write
/// to a position wins.
pub(crate) fn assign(x: &Tensor, items: &[AdvIndexItem], value: &Tensor) -> Result<Tensor> {
    let (offsets, value) = selection(x, items, value)?;
    let src = value.try_data()?;
    let storage = with_storage!(x.try_data()?, v => {
        Element::into_storage(write(v, x.shape(), &offsets, src, false)?)
    });
    Ok(Tensor::from_storage(storage, x.shape().to_vec()))
}

/// [`assign`] into `x`'s own buffer, which nothing else holds (`x.is_unique()`, not half
/// precision): a loop filling a buffer item by item then costs one write per item, not a
/// copy of the buffer.
pub(crate) fn assign_in_place(
    mut x: Tensor,
    items: &[AdvIndexItem],
    value: &Tensor,
) -> Result<Tensor> {
    let (offsets, value) = selection(&x, items, value)?;
    let src = value.try_data()?;
    let storage = x.storage_mut().expect("a uniquely owned buffer");
    match storage {
        Storage::Bool(v) => write_into(v, &offsets, src),
        Storage::I32(v) => write_into(v, &offsets, src),
        Storage::I64(v) => write_into(v, &offsets, src),
        Storage::F32(v) => write_into(v, &offsets, src),
        Storage::F64(v) => write_into(v, &offsets, src),
        Storage::F16(_)
        | Storage::BF16(_)
        | Storage::I8(_)
        | Storage::U8(_)
        | Storage::View(_)
        | Storage::Device(_) => {
            unreachable!("a unique full-precision buffer")
        }
    }
    Ok(x)
}

/// The elements of `src` (of `x`'s type) written into `x` at `offsets`, in order.
fn write_into<T: Accumulate>(x: &mut [T], offsets: &[usize], src: &Storage) {
    let src = T::slice(src).expect("the values have x's dtype");
    for (&o, &s) in offsets.iter().zip(src) {
        x[o] = s;
    }
}

/// Zeros of `shape` plus `d` added where `x[items]` reads (`d` has the shape of that
/// selection; positions read twice accumulate).
pub(crate) fn scatter_add(d: &Tensor, shape: &[usize], items: &[AdvIndexItem]) -> Result<Tensor> {
    let p = plan(shape, items)?;
    if d.shape() != p.shape.as_slice() {
        return Err(TensorError::new(
            ErrorKind::Value,
            format!(
                "the sensitivity of an indexing has shape {}, not the indexed shape {}",
                compact_shape(d.shape()),
                compact_shape(&p.shape)
            ),
        ));
    }
    let storage =
        with_storage!(d.try_data()?, v => Element::into_storage(add_at(v, shape, &p.offsets)?));
    Ok(Tensor::from_storage(storage, shape.to_vec()))
}

/// A copy of `x` (of `shape`) with the elements of `src` (of `x`'s type) written, or added, at
/// `offsets`, in order.
fn write<T: Accumulate>(
    x: &[T],
    shape: &[usize],
    offsets: &[usize],
    src: &Storage,
    accumulate: bool,
) -> Result<Vec<T>> {
    let src = T::slice(src).expect("the values have x's dtype");
    let mut out = alloc::try_vec::<T>(shape)?;
    out.extend_from_slice(x);
    for (&o, &s) in offsets.iter().zip(src) {
        out[o] = if accumulate { out[o].accumulate(s) } else { s };
    }
    Ok(out)
}

/// Zeros of `shape` with the elements of `src` added at `offsets`.
fn add_at<T: Accumulate>(src: &[T], shape: &[usize], offsets: &[usize]) -> Result<Vec<T>> {
    let mut out = alloc::try_filled(shape, T::from_bool(false))?;
    for (&o, &s) in offsets.iter().zip(src) {
        out[o] = out[o].accumulate(s);
    }
    Ok(out)
}

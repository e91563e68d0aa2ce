//! Array functions with numpy's semantics and messages: `argmax`/`argmin`, `one_hot`,
//! `squeeze`, `expand_dims` and `broadcast_to`.

use crate::alloc::{self, try_collect, try_filled};
use crate::element::{Element, with_storage, with_type};
use crate::shape::{normalize_axis, resolve_index};
use crate::shape_repr::compact_shape;
use crate::{DType, ErrorKind, Result, Tensor, TensorError};

fn value_error(msg: impl Into<String>) -> TensorError {
    TensorError::new(ErrorKind::Value, msg)
}

/// Whether `v` is a NaN (only floats can be).
#[inline(always)]
#[allow(clippy::eq_op)]
fn is_nan<T: Element>(v: T) -> bool {
    v != v
}

/// numpy's `argmax`/`argmin`: the index of the first largest (smallest) element along `axis`,
/// or of the flattened tensor for `None`; a NaN counts as the extreme (the first NaN wins).
pub(crate) fn arg_reduce(
    x: &Tensor,
    axis: Option<i64>,
    keepdims: bool,
    largest: bool,
) -> Result<Tensor> {
    let name = if largest { "argmax" } else { "argmin" };
    let shape = x.shape();
    let (outer, n, inner, out_shape) = match axis {
        None => (
            1,
            x.numel(),
            1,
            if keepdims {
                vec![1; shape.len()]
            } else {
                vec![]
            },
        ),
        Some(a) => {
            let ax = normalize_axis(a, shape.len())?;
            let mut out = shape.to_vec();
            if keepdims {
                out[ax] = 1;
            } else {
                out.remove(ax);
            }
            (
                shape[..ax].iter().product(),
                shape[ax],
                shape[ax + 1..].iter().product(),
                out,
            )
        }
    };
    if n == 0 {
        return Err(value_error(format!(
            "attempt to get {name} of an empty sequence"
        )));
    }
    fn run<T: Element>(
        v: &[T],
        (outer, n, inner): (usize, usize, usize),
        largest: bool,
    ) -> impl Iterator<Item = i64> + '_ {
        (0..outer).flat_map(move |o| {
            (0..inner).map(move |i| {
                let at = |k: usize| v[(o * n + k) * inner + i];
                let (mut best, mut bv) = (0, at(0));
                for k in 1..n {
                    if is_nan(bv) {
                        break;
                    }
                    let val = at(k);
                    if is_nan(val) || (largest && val > bv) || (!largest && val < bv) {
                        best = k;
                        bv = val;
                    }
                }
                best as i64
            })
        })
    }
    let out = with_storage!(x.try_data()?, v => try_collect(&out_shape, run(v, (outer, n, inner), largest))?);
    Tensor::from_vec(out, &out_shape)
}

/// `ops.one_hot(indices, depth, dtype)`: `indices.shape + (depth,)`, 1 at each index and 0
/// elsewhere; an index outside `[0, depth)` gives a row of zeros (as TensorFlow and MindSpore).
pub(crate) fn one_hot(indices: &Tensor, depth: i64, dtype: DType) -> Result<Tensor> {
    if !indices.dtype().is_int() {
        return Err(TensorError::new(
            ErrorKind::Type,
            format!(
                "one_hot: indices must be an integer tensor, got {}",
                indices.dtype()
            ),
        ));
    }
    if depth < 0 {
        return Err(value_error(format!(
            "one_hot: depth must be non-negative, got {depth}"
        )));
    }
    let depth = depth as usize;
    let mut shape = indices.shape().to_vec();
    shape.push(depth);
    let idx: Vec<i64> = indices
        .to_scalars()
        .iter()
        .map(|s| match s {
            crate::Scalar::Int(i) => *i,
            _ => -1,
        })
        .collect();
    let storage = with_type!(dtype, T => {
        let mut out = try_filled(&shape, T::from_bool(false))?;
        if depth > 0 {
            for (row, &i) in out.chunks_exact_mut(depth).zip(&idx) {
                if (0..depth as i64).contains(&i) {
                    row[i as usize] = T::from_bool(true);
                }
            }
        }
        T::into_storage(out)
    });
    Ok(Tensor::from_storage(storage, shape))
}

/// numpy's `squeeze`: removes the given axes (which must have length 1), or every axis of
/// length 1. Shares the storage.
pub(crate) fn squeeze(x: &Tensor, axes: Option<&[i64]>) -> Result<Tensor> {
    let shape = x.shape();
    let drop: Vec<usize> = match axes {
        None => (0..shape.len()).filter(|&i| shape[i] == 1).collect(),
        Some(list) => {
            let mut v = Vec::new();
            for &a in list {
                let a = normalize_axis(a, shape.len())?;
                if v.contains(&a) {
                    return Err(value_error("repeated axis"));
                }
                if shape[a] != 1 {
                    return Err(value_error(
                        "cannot select an axis to squeeze out which has size not equal to one",
                    ));
                }
                v.push(a);
            }
            v
        }
    };
    let out: Vec<i64> = (0..shape.len())
        .filter(|i| !drop.contains(i))
        .map(|i| shape[i] as i64)
        .collect();
    x.reshape(&out)
}

/// numpy's `expand_dims`: inserts axes of length 1 at the given positions of the result.
/// Shares the storage.
pub(crate) fn expand_dims(x: &Tensor, axes: &[i64]) -> Result<Tensor> {
    let ndim = x.ndim() + axes.len();
    let mut at = Vec::new();
    for &a in axes {
        let a = normalize_axis(a, ndim)?;
        if at.contains(&a) {
            return Err(value_error("repeated axis"));
        }
        at.push(a);
    }
    let mut dims = x.shape().iter();
    let out: Vec<i64> = (0..ndim)
        .map(|i| {
            if at.contains(&i) {
                1
            } else {
                *dims.next().expect("one dimension per kept axis") as i64
            }
        })
        .collect();
    x.reshape(&out)
}

/// numpy's `broadcast_to`: a view (stretched axes have stride 0), as numpy's.
pub(crate) fn broadcast_to(x: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let src = x.shape();
    let fits = src.len() <= shape.len()
        && src
            .iter()
            .rev()
            .zip(shape.iter().rev())
            .all(|(&a, &b)| a == b || a == 1);
    if src.len() > shape.len() {
        return Err(value_error(
            "input operand has more dimensions than allowed by the axis remapping",
        ));
    }
    if !fits {
        return Err(value_error(format!(
            "operands could not be broadcast together with remapped shapes \
             [original->remapped]: {}  and requested shape {}",
            compact_shape(src),
            compact_shape(shape)
        )));
    }
    alloc::check_size(shape, x.dtype())?;
    let own = x.strides();
    let pad = shape.len() - src.len();
    let strides = (0..shape.len())
        .map(|i| {
            if i < pad || src[i - pad] == 1 {
                0
            } else {
                own[i - pad]
            }
        })
        .collect();
    x.view_of(x.offset(), shape.to_vec(), strides)
}

// ---- concat, stack, split -------------------------------------------------------------------------

/// numpy's `concatenate`: the tensors promoted to one dtype, joined along `axis`.
pub(crate) fn concat(tensors: &[Tensor], axis: i64) -> Result<Tensor> {
    let Some(first) = tensors.first() else {
        return Err(value_error("need at least one array to concatenate"));
    };
    if first.ndim() == 0 {
        return Err(value_error(
            "zero-dimensional arrays cannot be concatenated",
        ));
    }
    let ndim = first.ndim();
    let ax = normalize_axis(axis, ndim)?;
    let mut along = 0usize;
    for (i, t) in tensors.iter().enumerate() {
        if t.ndim() != ndim {
            return Err(value_error(format!(
                "all the input arrays must have same number of dimensions, but the array at \
                 index 0 has {ndim} dimension(s) and the array at index {i} has {} dimension(s)",
                t.ndim()
            )));
        }
        for d in 0..ndim {
            if d != ax && t.shape()[d] != first.shape()[d] {
                return Err(value_error(format!(
                    "all the input array dimensions except for the concatenation axis must \
                     match exactly, but along dimension {d}, the array at index 0 has size {} \
                     and the array at index {i} has size {}",
                    first.shape()[d],
                    t.shape()[d]
                )));
            }
        }
        along = along
            .checked_add(t.shape()[ax])
            .ok_or_else(alloc::too_big)?;
    }
    let dtype = tensors
        .iter()
        .skip(1)
        .fold(first.dtype(), |d, t| crate::promote_types(d, t.dtype()));
    let mut shape = first.shape().to_vec();
    shape[ax] = along;
    alloc::check_size(&shape, dtype)?;
    let outer: usize = shape[..ax].iter().product();
    let inner: usize = shape[ax + 1..].iter().product();
    let cast: Vec<Tensor> = tensors
        .iter()
        .map(|t| t.try_cast(dtype))
        .collect::<Result<_>>()?;
    let storage = with_type!(dtype, T => {
        let parts: Vec<&[T]> = cast
            .iter()
            .map(|t| T::slice(t.data()).expect("cast to the result dtype"))
            .collect();
        let blocks: Vec<usize> = cast.iter().map(|t| t.shape()[ax] * inner).collect();
        let iter = (0..outer).flat_map(|o| {
            parts
                .iter()
                .zip(&blocks)
                .flat_map(move |(p, &b)| p[o * b..(o + 1) * b].iter().copied())
        });
        T::into_storage(try_collect(&shape, iter)?)
    });
    Ok(Tensor::from_storage(storage, shape))
}

/// numpy's `stack`: tensors of one shape joined along a new `axis`.
pub(crate) fn stack(tensors: &[Tensor], axis: i64) -> Result<Tensor> {
    let Some(first) = tensors.first() else {
        return Err(value_error("need at least one array to stack"));
    };
    if tensors.iter().any(|t| t.shape() != first.shape()) {
        return Err(value_error("all input arrays must have the same shape"));
    }
    let expanded: Vec<Tensor> = tensors
        .iter()
        .map(|t| t.expand_dims(&[axis]))
        .collect::<Result<_>>()?;
    concat(&expanded, axis)
}

/// How `ops.split` divides an axis: into `n` equal parts, or at indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SplitSpec {
    Sections(i64),
    Indices(Vec<i64>),
}

/// The `(start, stop)` slice bounds of each part of numpy's `split` of an axis of length `len`
/// (before Python's slice clamping, which indexing applies).
pub fn split_bounds(spec: &SplitSpec, len: usize) -> Result<Vec<(Option<i64>, Option<i64>)>> {
    Ok(match spec {
        SplitSpec::Sections(n) => {
            // numpy computes `len % n` first (Python's modulo: zero exactly when `n` divides
            // `len`, whatever its sign), and refuses a negative `n` after that.
            if *n == 0 {
                return Err(TensorError::new(
                    ErrorKind::ZeroDivision,
                    "integer modulo by zero",
                ));
            }
            if !(len as u64).is_multiple_of(n.unsigned_abs()) {
                return Err(value_error(
                    "array split does not result in an equal division",
                ));
            }
            if *n < 0 {
                return Err(value_error("number sections must be larger than 0."));
            }
            let n = *n as usize;
            let part = (len / n) as i64;
            (0..n as i64)
                .map(|k| (Some(k * part), Some((k + 1) * part)))
                .collect()
        }
        SplitSpec::Indices(ix) => {
            let mut out = Vec::with_capacity(ix.len() + 1);
            let mut start = None;
            for &i in ix {
                out.push((start, Some(i)));
                start = Some(i);
            }
            out.push((start, None));
            out
        }
    })
}

/// numpy's `split`: the parts `x[..., a:b, ...]` along `axis`.
pub(crate) fn split(x: &Tensor, spec: &SplitSpec, axis: i64) -> Result<Vec<Tensor>> {
    if x.ndim() == 0 {
        return Err(value_error("array split does not work on 0-d arrays"));
    }
    let ax = normalize_axis(axis, x.ndim())?;
    split_bounds(spec, x.shape()[ax])?
        .into_iter()
        .map(|(start, stop)| {
            let mut items = vec![
                crate::IndexItem::Slice {
                    start: None,
                    stop: None,
                    step: None,
                };
                ax
            ];
            items.push(crate::IndexItem::Slice {
                start,
                stop,
                step: None,
            });
            x.index(&items)
        })
        .collect()
}

// ---- take, pad ------------------------------------------------------------------------------------

/// The checked indices of `take` along an axis of length `n` (negative ones wrap), read
/// `outer` times for blocks of `inner` elements. As numpy: a non-empty result from an empty
/// axis is its own IndexError, and otherwise an index is checked only when it is read (with
/// `outer` 0, none is).
fn take_indices(
    indices: &Tensor,
    n: usize,
    axis: usize,
    (outer, inner): (usize, usize),
) -> Result<Vec<usize>> {
    if !indices.dtype().is_int() && indices.dtype() != DType::Bool {
        return Err(TensorError::new(
            ErrorKind::Type,
            format!(
                "Cannot cast array data from dtype('{}') to dtype('int64') according to the \
                 rule 'same_kind'",
                indices.dtype()
            ),
        ));
    }
    if n == 0 && outer > 0 && inner > 0 && indices.numel() > 0 {
        return Err(TensorError::new(
            ErrorKind::Index,
            "cannot do a non-empty take from an empty axes.",
        ));
    }
    if outer == 0 {
        return Ok(Vec::new());
    }
    indices
        .to_scalars()
        .into_iter()
        .map(|s| {
            let i = match s {
                crate::Scalar::Int(i) => i,
                crate::Scalar::Bool(b) => i64::from(b),
                crate::Scalar::Float(_) => unreachable!("integer indices"),
            };
            resolve_index(i, axis, n)
        })
        .collect()
}

/// `(outer, n, inner)` of `x` around `axis` (`None`: the flattened tensor) and the axis.
fn around(shape: &[usize], axis: Option<i64>) -> Result<(usize, usize, usize, usize)> {
    match axis {
        None => Ok((1, shape.iter().product(), 1, 0)),
        Some(a) => {
            let ax = normalize_axis(a, shape.len())?;
            Ok((
                shape[..ax].iter().product(),
                shape[ax],
                shape[ax + 1..].iter().product(),
                ax,
            ))
        }
    }
}

/// The result shape of `take`.
fn take_shape(shape: &[usize], indices: &[usize], axis: Option<usize>) -> Vec<usize> {
    match axis {
        None => indices.to_vec(),
        Some(ax) => {
            let mut s = shape[..ax].to_vec();
            s.extend_from_slice(indices);
            s.extend_from_slice(&shape[ax + 1..]);
            s
        }
    }
}

/// numpy's `take` (mode 'raise'): the elements of `x` (flattened for `None`) at `indices`
/// along `axis`.
pub(crate) fn take(x: &Tensor, indices: &Tensor, axis: Option<i64>) -> Result<Tensor> {
    let (outer, n, inner, ax) = around(x.shape(), axis)?;
    let idx = take_indices(indices, n, ax, (outer, inner))?;
    let shape = take_shape(x.shape(), indices.shape(), axis.map(|_| ax));
    let storage = with_storage!(x.try_data()?, v => {
        let iter = (0..outer).flat_map(|o| {
            idx.iter()
                .flat_map(move |&i| v[(o * n + i) * inner..(o * n + i + 1) * inner].iter().copied())
        });
        Element::into_storage(try_collect(&shape, iter)?)
    });
    Ok(Tensor::from_storage(storage, shape))
}

/// The gradient of [`take`]: zeros shaped like `x` with `d` added at each index taken (an
/// index taken twice gets both).
pub(crate) fn take_grad(
    d: &Tensor,
    x_shape: &[usize],
    indices: &Tensor,
    axis: Option<i64>,
) -> Result<Tensor> {
    let (outer, n, inner, ax) = around(x_shape, axis)?;
    let idx = take_indices(indices, n, ax, (outer, inner))?;
    let expected = take_shape(x_shape, indices.shape(), axis.map(|_| ax));
    if d.shape() != expected.as_slice() {
        return Err(value_error(format!(
            "take_grad: the sensitivity has shape {}, expected {}",
            compact_shape(d.shape()),
            compact_shape(&expected)
        )));
    }
    fn run<T: crate::nn::Float>(
        dv: &[T],
        shape: &[usize],
        idx: &[usize],
        (outer, n, inner): (usize, usize, usize),
    ) -> Result<Vec<T>> {
        let mut out = try_filled(shape, T::zero())?;
        let k = idx.len();
        for o in 0..outer {
            for (j, &i) in idx.iter().enumerate() {
                let src = &dv[(o * k + j) * inner..(o * k + j + 1) * inner];
                let dst = &mut out[(o * n + i) * inner..(o * n + i + 1) * inner];
                crate::nn::add_into(dst, src);
            }
        }
        Ok(out)
    }
    let dims = (outer, n, inner);
    let storage = match d.try_data()? {
        crate::Storage::F32(v) => crate::Storage::F32(run(v, x_shape, &idx, dims)?),
        crate::Storage::F64(v) => crate::Storage::F64(run(v, x_shape, &idx, dims)?),
        _ => {
            return Err(TensorError::new(
                ErrorKind::Type,
                format!("take_grad: expected a float sensitivity, got {}", d.dtype()),
            ));
        }
    };
    Ok(Tensor::from_storage(storage, x_shape.to_vec()))
}

/// numpy's `pad_width` (an int, `(n,)`, `(before, after)` or one pair per axis, as numpy
/// broadcasts it to `(ndim, 2)`), checked.
pub fn pad_widths(width: &[Vec<i64>], ndim: usize) -> Result<Vec<[usize; 2]>> {
    if width.iter().all(Vec::is_empty) {
        // numpy reads an empty pad_width as a float64 array.
        return Err(TensorError::new(
            ErrorKind::Type,
            "`pad_width` must be of integral type.",
        ));
    }
    let rows = width.len();
    let cols = width.first().map_or(0, Vec::len);
    if width.iter().any(|r| r.len() != cols) {
        return Err(value_error(
            "pad_width must be an int or a (nested) sequence of ints of one shape",
        ));
    }
    if width.iter().flatten().any(|&v| v < 0) {
        return Err(value_error("index can't contain negative values"));
    }
    let fits = (rows == 1 || rows == ndim) && (cols == 1 || cols == 2);
    if !fits {
        // Spelled as numpy's broadcast_to does (a flat pad_width is one row).
        let original = if rows == 1 {
            format!("({cols},)")
        } else {
            format!("({rows},{cols})")
        };
        return Err(value_error(format!(
            "operands could not be broadcast together with remapped shapes \
             [original->remapped]: {original}  and requested shape ({ndim},2)"
        )));
    }
    Ok((0..ndim)
        .map(|d| {
            let r = &width[if rows == 1 { 0 } else { d }];
            [r[0] as usize, r[if cols == 1 { 0 } else { 1 }] as usize]
        })
        .collect())
}

/// The modes of numpy's `pad` that anfora implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PadMode {
    /// A value around the tensor.
    Constant,
    /// The edge element repeated (numpy's 'edge', PyTorch's replication padding).
    Edge,
    /// The tensor mirrored about its edge elements, which are not repeated (`d c b | a b c d |
    /// c b a`); widths beyond the axis reflect again, as numpy does.
    Reflect,
    /// The tensor mirrored with its edge elements repeated (`c b a | a b c d | d c b`).
    Symmetric,
}

impl PadMode {
    /// The mode numpy names `name`, if anfora implements it.
    pub fn from_name(name: &str) -> Option<PadMode> {
        Some(match name {
            "constant" => PadMode::Constant,
            "edge" => PadMode::Edge,
            "reflect" => PadMode::Reflect,
            "symmetric" => PadMode::Symmetric,
            _ => return None,
        })
    }

    /// numpy's name of the mode.
    pub fn name(self) -> &'static str {
        match self {
            PadMode::Constant => "constant",
            PadMode::Edge => "edge",
            PadMode::Reflect => "reflect",
            PadMode::Symmetric => "symmetric",
        }
    }

    /// The index of the element of an axis of length `n > 0` that position `i` of the padded
    /// axis copies, `i` counted from the first element of the tensor (negative in the padding
    /// before it, `n` or more in the padding after it). Not for the constant mode.
    fn source(self, i: i64, n: usize) -> usize {
        let n = n as i64;
        let j = match self {
            PadMode::Constant | PadMode::Edge => i.clamp(0, n - 1),
            // A single element reflects onto itself (numpy extends it as 'edge' does).
            PadMode::Reflect if n == 1 => 0,
            PadMode::Reflect => {
                // Mirroring about both ends repeats with period 2(n - 1).
                let m = i.rem_euclid(2 * (n - 1));
                if m < n { m } else { 2 * (n - 1) - m }
            }
            PadMode::Symmetric => {
                let m = i.rem_euclid(2 * n);
                if m < n { m } else { 2 * n - 1 - m }
            }
        };
        j as usize
    }
}

/// The padded shape of `shape` (a `MemoryError` when it does not fit in memory).
fn padded_shape(shape: &[usize], widths: &[[usize; 2]], dtype: DType) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(shape.len());
    for (n, w) in shape.iter().zip(widths) {
        let p = n
            .checked_add(w[0])
            .and_then(|p| p.checked_add(w[1]))
            .ok_or_else(alloc::too_big)?;
        out.push(p);
    }
    alloc::check_size(&out, dtype)?;
    Ok(out)
}

/// For each axis, the element of `x` each position of the padded axis copies (the modes other
/// than 'constant'), after numpy's check that no empty axis is extended. The padded shape must
/// have passed [`padded_shape`] (the tables are as long as its axes).
fn pad_sources(shape: &[usize], widths: &[[usize; 2]], mode: PadMode) -> Result<Vec<Vec<usize>>> {
    if shape.contains(&0) {
        if let Some(axis) = (0..shape.len()).find(|&d| shape[d] == 0 && widths[d] != [0, 0]) {
            return Err(value_error(format!(
                "can't extend empty axis {axis} using modes other than 'constant' or 'empty'"
            )));
        }
        // Nothing to copy: the result is empty too.
        return Ok(shape.iter().zip(widths).map(|_| Vec::new()).collect());
    }
    Ok(shape
        .iter()
        .zip(widths)
        .map(|(&n, w)| {
            let len = n + w[0] + w[1];
            (0..len)
                .map(|p| mode.source(p as i64 - w[0] as i64, n))
                .collect()
        })
        .collect())
}

/// Calls `visit(out, src)` for every element of the padded tensor in row-major order, with its
/// position `out` and the position `src` in `x` of the element it copies (flat indices).
fn for_each_source(
    x_shape: &[usize],
    out_shape: &[usize],
    sources: &[Vec<usize>],
    mut visit: impl FnMut(usize, usize),
) {
    let ndim = x_shape.len();
    if out_shape.contains(&0) {
        return;
    }
    if ndim == 0 {
        visit(0, 0);
        return;
    }
    let strides = crate::shape::contiguous_strides(x_shape);
    let last = &sources[ndim - 1];
    let lead = &out_shape[..ndim - 1];
    let mut at = vec![0usize; lead.len()];
    let mut out = 0;
    loop {
        let base: usize = at
            .iter()
            .enumerate()
            .map(|(d, &i)| sources[d][i] * strides[d] as usize)
            .sum();
        for &j in last {
            visit(out, base + j);
            out += 1;
        }
        // The next row of the result.
        if !crate::shape::next_index(&mut at, lead, |_, _| {}) {
            return;
        }
    }
}

/// numpy's `pad`: `x` with `widths` (from [`pad_widths`]) elements before and after each
/// axis, filled as `mode` says (`value`, cast to `x`'s dtype, for the constant mode).
pub(crate) fn pad(
    x: &Tensor,
    widths: &[[usize; 2]],
    mode: PadMode,
    value: crate::Scalar,
) -> Result<Tensor> {
    if mode == PadMode::Constant {
        return pad_constant(x, widths, value);
    }
    // As numpy: a result too large for memory first, then an empty axis to extend.
    let shape = padded_shape(x.shape(), widths, x.dtype())?;
    let sources = pad_sources(x.shape(), widths, mode)?;
    let storage = with_storage!(x.try_data()?, v => {
        let mut out = alloc::try_vec(&shape)?;
        for_each_source(x.shape(), &shape, &sources, |_, src| out.push(v[src]));
        Element::into_storage(out)
    });
    Ok(Tensor::from_storage(storage, shape))
}

/// The gradient of [`pad`] with respect to `x` (the adjoint of `pad` in `x`): for the
/// constant mode the interior of `d`; for the others, each element of `d` added into the
/// element of `x` it was copied from.
pub(crate) fn pad_grad(
    d: &Tensor,
    x_shape: &[usize],
    widths: &[[usize; 2]],
    mode: PadMode,
) -> Result<Tensor> {
    if mode == PadMode::Constant {
        return pad_constant_grad(d, x_shape, widths);
    }
    let shape = padded_shape(x_shape, widths, d.dtype())?;
    if d.shape() != shape.as_slice() {
        return Err(value_error(format!(
            "pad_grad: the sensitivity of shape {} does not hold a padded {}",
            compact_shape(d.shape()),
            compact_shape(x_shape)
        )));
    }
    let sources = pad_sources(x_shape, widths, mode)?;
    fn run<T: crate::nn::Float>(
        dv: &[T],
        x_shape: &[usize],
        shape: &[usize],
        sources: &[Vec<usize>],
    ) -> Result<Vec<T>> {
        let mut g = try_filled(x_shape, T::zero())?;
        for_each_source(x_shape, shape, sources, |out, src| g[src] += dv[out]);
        Ok(g)
    }
    let storage = match d.try_data()? {
        crate::Storage::F32(v) => crate::Storage::F32(run(v, x_shape, &shape, &sources)?),
        crate::Storage::F64(v) => crate::Storage::F64(run(v, x_shape, &shape, &sources)?),
        _ => {
            return Err(TensorError::new(
                ErrorKind::Type,
                format!("pad_grad: expected a float sensitivity, got {}", d.dtype()),
            ));
        }
    };
    Ok(Tensor::from_storage(storage, x_shape.to_vec()))
}

/// numpy's `pad` in constant mode: `value` (cast to `x`'s dtype) around `x`.
fn pad_constant(x: &Tensor, widths: &[[usize; 2]], value: crate::Scalar) -> Result<Tensor> {
    let ndim = x.ndim();
    let mut shape = Vec::with_capacity(ndim);
    for (d, w) in widths.iter().enumerate() {
        let n = x.shape()[d]
            .checked_add(w[0])
            .and_then(|n| n.checked_add(w[1]))
            .ok_or_else(alloc::too_big)?;
        shape.push(n);
    }
    alloc::check_size(&shape, x.dtype())?;
    let fill = Tensor::scalar(value, x.dtype())?;
    let storage = with_storage!(x.try_data()?, v => {
        let fill = Element::slice(fill.try_data()?).expect("the same dtype")[0];
        let mut out = try_filled(&shape, fill)?;
        if ndim == 0 {
            out.copy_from_slice(v);
        } else if !v.is_empty() {
            let row = x.shape()[ndim - 1];
            let ostrides = crate::shape::contiguous_strides(&shape);
            let lead = &x.shape()[..ndim - 1];
            let mut at = vec![0usize; lead.len()];
            for src in v.chunks_exact(row.max(1)) {
                let mut off = widths[ndim - 1][0];
                for (d, &i) in at.iter().enumerate() {
                    off += (i + widths[d][0]) * ostrides[d] as usize;
                }
                out[off..off + row].copy_from_slice(src);
                // The next row of x (an odometer over the leading axes).
                for d in (0..lead.len()).rev() {
                    at[d] += 1;
                    if at[d] < lead[d] {
                        break;
                    }
                    at[d] = 0;
                }
            }
        }
        Element::into_storage(out)
    });
    Ok(Tensor::from_storage(storage, shape))
}

/// The adjoint of [`pad_constant`] in `x`: the interior of `d`.
fn pad_constant_grad(d: &Tensor, x_shape: &[usize], widths: &[[usize; 2]]) -> Result<Tensor> {
    let items: Vec<crate::IndexItem> = widths
        .iter()
        .zip(x_shape)
        .map(|(w, &n)| crate::IndexItem::Slice {
            start: Some(w[0] as i64),
            stop: Some((w[0] + n) as i64),
            step: None,
        })
        .collect();
    let out = d.index(&items)?;
    if out.shape() != x_shape {
        return Err(value_error(format!(
            "pad_grad: the sensitivity of shape {} does not hold a padded {}",
            compact_shape(d.shape()),
            compact_shape(x_shape)
        )));
    }
    Ok(out)
}

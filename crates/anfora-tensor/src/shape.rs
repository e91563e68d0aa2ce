//! Shape arithmetic: broadcasting, reshape, transpose, basic indexing and strided copies.

use crate::element::Element;
use crate::shape_repr::compact_shape;
use crate::{ErrorKind, IndexItem, Result, TensorError, alloc};

/// Row-major strides (in elements) of a contiguous array. `shape` is a tensor's (or a view's
/// of one), whose element count fits in `isize` (see `alloc`).
pub fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc *= d as isize;
    }
    strides
}

/// numpy broadcasting of any number of shapes (`np.broadcast_shapes`), including its ValueError
/// "broadcast dimensions too large." when the result has more than `isize::MAX` elements.
pub fn broadcast_shapes_n(shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let out = broadcast_n(shapes)?;
    if alloc::checked_iter_size(&out).is_err() {
        return Err(TensorError::new(
            ErrorKind::Value,
            "broadcast dimensions too large.",
        ));
    }
    Ok(out)
}

/// numpy broadcasting of two shapes (`np.broadcast_shapes(a, b)`).
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    broadcast_shapes_n(&[a, b])
}

/// The broadcast shape without a size check: the ufuncs check it as numpy's iterator does.
pub(crate) fn broadcast_n(shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let ndim = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; ndim];
    for shape in shapes {
        let pad = ndim - shape.len();
        for (o, &d) in out[pad..].iter_mut().zip(shape.iter()) {
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                let listed: String = shapes
                    .iter()
                    .map(|s| format!("{} ", compact_shape(s)))
                    .collect();
                return Err(TensorError::new(
                    ErrorKind::Value,
                    format!("operands could not be broadcast together with shapes {listed}"),
                ));
            }
        }
    }
    Ok(out)
}

/// Strides that read a contiguous array of shape `shape` broadcast to `out` (0 on broadcast axes).
pub fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<isize> {
    let pad = out.len() - shape.len();
    let own = contiguous_strides(shape);
    (0..out.len())
        .map(|i| {
            if i < pad || shape[i - pad] == 1 {
                0
            } else {
                own[i - pad]
            }
        })
        .collect()
}

/// Merges adjacent axes that every operand walks contiguously, and drops length-1 axes, so the
/// innermost loop is as long as possible. Returns the shape and per-operand strides.
pub(crate) fn coalesce<const N: usize>(
    shape: &[usize],
    strides: [&[isize]; N],
) -> (Vec<usize>, Vec<[isize; N]>) {
    let mut dims: Vec<usize> = Vec::with_capacity(shape.len());
    let mut st: Vec<[isize; N]> = Vec::with_capacity(shape.len());
    for (i, &d) in shape.iter().enumerate() {
        if d == 1 {
            continue;
        }
        let s: [isize; N] = std::array::from_fn(|k| strides[k][i]);
        if let (Some(pd), Some(ps)) = (dims.last_mut(), st.last_mut())
            && (0..N).all(|k| ps[k] == s[k] * d as isize)
        {
            *pd *= d;
            *ps = s;
            continue;
        }
        dims.push(d);
        st.push(s);
    }
    (dims, st)
}

/// Calls `row(offsets, len, inner_strides)` for every innermost row of a strided walk over
/// `shape`, in row-major order. `offsets` are the starting element offsets of each operand.
pub(crate) fn for_each_row<const N: usize>(
    shape: &[usize],
    strides: [&[isize]; N],
    base: [isize; N],
    mut row: impl FnMut([isize; N], usize, [isize; N]),
) {
    if shape.contains(&0) {
        return;
    }
    let (dims, st) = coalesce(shape, strides);
    let Some((&inner, outer)) = dims.split_last() else {
        row(base, 1, [0; N]);
        return;
    };
    let inner_strides = st[st.len() - 1];
    let mut idx = vec![0usize; outer.len()];
    let mut off = base;
    loop {
        row(off, inner, inner_strides);
        let more = next_index(&mut idx, outer, |axis, wrapped| {
            for k in 0..N {
                off[k] += st[axis][k];
                if wrapped {
                    off[k] -= st[axis][k] * outer[axis] as isize;
                }
            }
        });
        if !more {
            return;
        }
    }
}

/// Moves the multi-index `at` (within `dims`) to the next one in row-major order, an odometer:
/// calls `moved(axis, wrapped)` for each axis it changes, the last axis first (`wrapped`: the
/// axis went back to 0). False, and `at` all zeros, after the last index.
#[inline(always)]
pub(crate) fn next_index(
    at: &mut [usize],
    dims: &[usize],
    mut moved: impl FnMut(usize, bool),
) -> bool {
    for axis in (0..dims.len()).rev() {
        at[axis] += 1;
        let wrapped = at[axis] == dims[axis];
        if wrapped {
            at[axis] = 0;
        }
        moved(axis, wrapped);
        if !wrapped {
            return true;
        }
    }
    false
}

/// Copies the strided view `(offset, dims)` of `src` into a new contiguous vector.
pub(crate) fn gather<T: Element>(
    src: &[T],
    offset: isize,
    shape: &[usize],
    strides: &[isize],
) -> Result<Vec<T>> {
    let mut out = alloc::try_vec(shape)?;
    gather_into(&mut out, src, offset, shape, strides);
    Ok(out)
}

/// Appends the elements of the strided view `(offset, shape, strides)` of `src` to `out`, in
/// row-major order (also for the 16-bit storage types, which are not `Element`s).
pub(crate) fn gather_into<T: Copy>(
    out: &mut Vec<T>,
    src: &[T],
    offset: isize,
    shape: &[usize],
    strides: &[isize],
) {
    if let Some((block, repeats)) = repeated_block(shape, strides) {
        // A contiguous block repeated along the leading axes (a bias row broadcast to a
        // matrix): the block once, then the copy doubled in place, in a few large copies
        // instead of one per row (the per-row copies were 10 % of the digits MLP's batch).
        let (o, start) = (offset as usize, out.len());
        out.extend_from_slice(&src[o..o + block]);
        let total = block * repeats;
        while out.len() - start < total {
            let have = out.len() - start;
            out.extend_from_within(start..start + have.min(total - have));
        }
        return;
    }
    for_each_row(shape, [strides], [offset], |[o], len, [s]| {
        let o = o as usize;
        if s == 1 {
            out.extend_from_slice(&src[o..o + len]);
        } else {
            out.extend((0..len).map(|j| src[(o as isize + j as isize * s) as usize]));
        }
    });
}

/// `(block, repeats)` where the view reads one contiguous block of `block` elements again and
/// again: its trailing axes are row-major contiguous, the leading ones (at least one, with more
/// than one position in all) have stride 0. `None` otherwise, and for empty views.
fn repeated_block(shape: &[usize], strides: &[isize]) -> Option<(usize, usize)> {
    if shape.contains(&0) {
        return None;
    }
    let mut block = 1usize;
    let mut k = shape.len();
    while k > 0 && strides[k - 1] == block as isize {
        block *= shape[k - 1];
        k -= 1;
    }
    let repeats: usize = shape[..k].iter().product();
    let broadcast = k > 0
        && strides[..k]
            .iter()
            .zip(&shape[..k])
            .all(|(&s, &d)| s == 0 || d == 1);
    (broadcast && repeats > 1 && block > 1).then_some((block, repeats))
}

/// Writes `src` (row-major over `shape`) into `dst` at the positions of the strided view
/// (`offset`, `shape`, `strides`): the inverse of [`gather`].
pub(crate) fn scatter_view<T: Element>(
    dst: &mut [T],
    offset: isize,
    shape: &[usize],
    strides: &[isize],
    src: &[T],
) {
    let mut k = 0;
    for_each_row(shape, [strides], [offset], |[o], len, [s]| {
        for j in 0..len {
            dst[(o + j as isize * s) as usize] = src[k + j];
        }
        k += len;
    });
}

/// Resolves a requested shape with (at most) one unknown dimension against `numel` elements.
/// numpy 2 treats every negative entry as "unknown". As in numpy, a product of the known
/// dimensions that overflows is a size mismatch; the caller checks the resolved shape's size.
pub fn resolve_reshape(numel: usize, shape: &[i64]) -> Result<Vec<usize>> {
    let mismatch = || {
        // numpy prints unknown entries as `newaxis`, dropping leading ones.
        let first = shape.iter().position(|&d| d >= 0);
        let text = match first {
            None => "()".to_string(),
            Some(f) => {
                let parts: Vec<String> = shape[f..]
                    .iter()
                    .map(|&d| {
                        if d < 0 {
                            "newaxis".to_string()
                        } else {
                            d.to_string()
                        }
                    })
                    .collect();
                if shape.len() == 1 {
                    format!("({},)", parts[0])
                } else {
                    format!("({})", parts.join(","))
                }
            }
        };
        TensorError::new(
            ErrorKind::Value,
            format!("cannot reshape array of size {numel} into shape {text}"),
        )
    };
    let mut unknown = None;
    let mut known: usize = 1;
    for (i, &d) in shape.iter().enumerate() {
        if d < 0 {
            if unknown.is_some() {
                return Err(TensorError::new(
                    ErrorKind::Value,
                    "can only specify one unknown dimension",
                ));
            }
            unknown = Some(i);
        } else {
            // numpy's `npy_mul_sizes_with_overflow`: the product must fit in `intp`.
            known = usize::try_from(d)
                .ok()
                .and_then(|d| known.checked_mul(d))
                .filter(|&k| k <= isize::MAX as usize)
                .ok_or_else(mismatch)?;
        }
    }
    let mut dims: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    match unknown {
        Some(i) => {
            if known == 0 || !numel.is_multiple_of(known) {
                return Err(mismatch());
            }
            dims[i] = numel / known;
        }
        None if known != numel => return Err(mismatch()),
        None => {}
    }
    Ok(dims)
}

/// numpy's `normalize_axis_index`: `axis` in `[-ndim, ndim)`.
pub(crate) fn normalize_axis(axis: i64, ndim: usize) -> Result<usize> {
    let n = ndim as i64;
    if axis < -n || axis >= n {
        return Err(TensorError::new(
            ErrorKind::Value,
            format!("axis {axis} is out of bounds for array of dimension {ndim}"),
        ));
    }
    Ok(if axis < 0 { axis + n } else { axis } as usize)
}

/// Index `i` along `axis` of `size` elements, a negative one counting from the end; numpy's
/// IndexError when it is out of range.
pub(crate) fn resolve_index(i: i64, axis: usize, size: usize) -> Result<usize> {
    // Dimensions of a tensor fit in `isize`, so in `i64`.
    let size = size as i64;
    let j = if i < 0 { i + size } else { i };
    if !(0..size).contains(&j) {
        return Err(TensorError::new(
            ErrorKind::Index,
            format!("index {i} is out of bounds for axis {axis} with size {size}"),
        ));
    }
    Ok(j as usize)
}

/// Validates a transpose permutation; `None` reverses the axes.
pub(crate) fn resolve_permutation(ndim: usize, axes: Option<&[i64]>) -> Result<Vec<usize>> {
    let Some(axes) = axes else {
        return Ok((0..ndim).rev().collect());
    };
    if axes.len() != ndim {
        return Err(TensorError::new(ErrorKind::Value, "axes don't match array"));
    }
    let mut seen = vec![false; ndim];
    axes.iter()
        .map(|&a| {
            let a = normalize_axis(a, ndim)?;
            if std::mem::replace(&mut seen[a], true) {
                return Err(TensorError::new(
                    ErrorKind::Value,
                    "repeated axis in transpose",
                ));
            }
            Ok(a)
        })
        .collect()
}

/// The strided view selected by a basic-indexing subscript: `(offset, shape, strides)`.
pub(crate) fn index_view(
    shape: &[usize],
    items: &[IndexItem],
) -> Result<(isize, Vec<usize>, Vec<isize>)> {
    index_view_strided(shape, &contiguous_strides(shape), items)
}

/// [`index_view`] of a tensor laid out with `in_strides`: the offset is relative to the
/// tensor's first element.
pub(crate) fn index_view_strided(
    shape: &[usize],
    in_strides: &[isize],
    items: &[IndexItem],
) -> Result<(isize, Vec<usize>, Vec<isize>)> {
    let ndim = shape.len();
    let mut consumed = 0;
    let mut seen_ellipsis = false;
    for item in items {
        match item {
            IndexItem::Ellipsis if seen_ellipsis => {
                return Err(TensorError::new(
                    ErrorKind::Index,
                    "an index can only have a single ellipsis ('...')",
                ));
            }
            IndexItem::Ellipsis => seen_ellipsis = true,
            IndexItem::Int(_) | IndexItem::Slice { .. } => consumed += 1,
            IndexItem::NewAxis => {}
        }
    }
    if consumed > ndim {
        return Err(TensorError::new(
            ErrorKind::Index,
            format!(
                "too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed"
            ),
        ));
    }

    let mut offset = 0isize;
    let mut out_shape = Vec::new();
    let mut out_strides = Vec::new();
    let mut axis = 0;
    for item in items {
        match *item {
            IndexItem::Int(i) => {
                let j = resolve_index(i, axis, shape[axis])?;
                offset += j as isize * in_strides[axis];
                axis += 1;
            }
            IndexItem::Slice { start, stop, step } => {
                let (first, len, step) = slice_indices(start, stop, step, shape[axis])?;
                if len > 0 {
                    offset += first as isize * in_strides[axis];
                }
                out_shape.push(len);
                out_strides.push(step as isize * in_strides[axis]);
                axis += 1;
            }
            IndexItem::NewAxis => {
                out_shape.push(1);
                out_strides.push(0);
            }
            IndexItem::Ellipsis => {
                for _ in 0..ndim - consumed {
                    out_shape.push(shape[axis]);
                    out_strides.push(in_strides[axis]);
                    axis += 1;
                }
            }
        }
    }
    out_shape.extend_from_slice(&shape[axis..]);
    out_strides.extend_from_slice(&in_strides[axis..]);
    Ok((offset, out_shape, out_strides))
}

/// Python's `slice.indices(size)` plus the resulting length: `(start, len, step)`.
pub(crate) fn slice_indices(
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
    size: usize,
) -> Result<(i64, usize, i64)> {
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(TensorError::new(
            ErrorKind::Value,
            "slice step cannot be zero",
        ));
    }
    // i128 keeps `i64::MIN + size` and friends from overflowing.
    let size = size as i128;
    let (lower, upper) = if step > 0 { (0, size) } else { (-1, size - 1) };
    let clamp = |v: Option<i64>, default: i128| match v {
        None => default,
        Some(v) => {
            let v = v as i128;
            if v < 0 {
                (v + size).max(lower)
            } else {
                v.min(upper)
            }
        }
    };
    let (start, stop) = if step > 0 {
        (clamp(start, lower), clamp(stop, upper))
    } else {
        (clamp(start, upper), clamp(stop, lower))
    };
    let step_w = step as i128;
    let len = if step > 0 && start < stop {
        (stop - start - 1) / step_w + 1
    } else if step < 0 && stop < start {
        (start - stop - 1) / -step_w + 1
    } else {
        0
    };
    Ok((start as i64, len as usize, step))
}

/// Reads an operand broadcast to an output shape, a range of the output's flat (row-major)
/// indices at a time: the gather step of the chunked kernels.
#[derive(Clone, Debug)]
pub(crate) struct BroadcastRead {
    /// The output's dimensions, merged where the operand is contiguous across them, without
    /// length-1 axes.
    dims: Vec<usize>,
    /// The operand's stride (in elements, 0 on broadcast axes) along each of `dims`.
    strides: Vec<isize>,
}

impl BroadcastRead {
    /// For an operand of `shape` that broadcasts to `out`.
    pub(crate) fn new(shape: &[usize], out: &[usize]) -> BroadcastRead {
        let own = broadcast_strides(shape, out);
        let contiguous = contiguous_strides(out);
        let (dims, st) = coalesce(out, [&contiguous, &own]);
        BroadcastRead {
            dims,
            strides: st.iter().map(|s| s[1]).collect(),
        }
    }

    /// Copies the elements at output positions `start..start + dst.len()` of the broadcast
    /// operand `src` into `dst`. The range lies within the output.
    pub(crate) fn read<T: Copy>(&self, src: &[T], start: usize, dst: &mut [T]) {
        let nd = self.dims.len();
        if nd == 0 {
            dst.fill(src[0]);
            return;
        }
        let (dims, strides) = (&self.dims, &self.strides);
        let mut idx = vec![0usize; nd];
        let mut rest = start;
        for k in (0..nd).rev() {
            idx[k] = rest % dims[k];
            rest /= dims[k];
        }
        let mut off: isize = idx.iter().zip(strides).map(|(&i, &s)| i as isize * s).sum();
        let (inner, s) = (dims[nd - 1], strides[nd - 1]);
        let mut pos = 0;
        while pos < dst.len() {
            let run = (inner - idx[nd - 1]).min(dst.len() - pos);
            let out = &mut dst[pos..pos + run];
            let o = off as usize;
            match s {
                0 => out.fill(src[o]),
                1 => out.copy_from_slice(&src[o..o + run]),
                _ => {
                    for (j, d) in out.iter_mut().enumerate() {
                        *d = src[(off + j as isize * s) as usize];
                    }
                }
            }
            pos += run;
            idx[nd - 1] += run;
            off += run as isize * s;
            if idx[nd - 1] < inner {
                continue;
            }
            // Carry into the outer axes.
            off -= inner as isize * s;
            idx[nd - 1] = 0;
            for k in (0..nd - 1).rev() {
                idx[k] += 1;
                off += strides[k];
                if idx[k] < dims[k] {
                    break;
                }
                off -= dims[k] as isize * strides[k];
                idx[k] = 0;
            }
        }
    }
}

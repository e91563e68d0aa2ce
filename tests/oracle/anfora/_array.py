"""numpy's array functions as anfora defines them: ``argmax``/``argmin``,
``one_hot``, ``squeeze``, ``expand_dims`` (``unsqueeze``), ``broadcast_to``,
``concat``, ``stack``, ``split``, ``take`` (``gather``, and MindSpore's
``index_select``), ``pad`` (modes 'constant', 'edge', 'reflect' and
'symmetric') and PyTorch's 2-D paddings ``reflection_pad2d``,
``replication_pad2d`` and ``zero_pad2d``.

Values are numpy's. Arguments are read and checked in the order anfora's
reference VM reads them, and errors carry its exception types and messages,
which are numpy's with two deliberate differences: an axis out of bounds is a
``ValueError`` (numpy's ``AxisError`` is a subclass of it; anfora has no such
class), and integer arguments are Python ints or bools only.
"""

import numpy as np

from ._core import Tensor, is_scalar, np_dtype, quiet, wrap


def int_arg(v):
    """An int argument (bools count, as in Python)."""
    if isinstance(v, (bool, int)) and is_scalar(v):
        return int(v)
    raise TypeError("'%s' object cannot be interpreted as an integer" % type(v).__name__)


def normalize_axis(axis, ndim, prefix=""):
    if axis < -ndim or axis >= ndim:
        raise ValueError("%saxis %d is out of bounds for array of dimension %d"
                         % (prefix, axis, ndim))
    return axis + ndim if axis < 0 else axis


def _tensor(fn, x):
    if not isinstance(x, Tensor):
        raise TypeError("ops." + fn + "() expects a Tensor, got " + type(x).__name__)
    return x._a


def _axes_arg(v):
    """None, an int, or a tuple/list of ints."""
    if v is None:
        return None
    if isinstance(v, (tuple, list)):
        return [int_arg(i) for i in v]
    return [int_arg(v)]


def _shape_arg(v):
    dims = [int_arg(i) for i in v] if isinstance(v, (tuple, list)) else [int_arg(v)]
    if any(d < 0 for d in dims):
        raise ValueError("negative dimensions are not allowed")
    return tuple(dims)


def _compact(shape):
    """numpy's shape text in broadcast messages: (3,), (2,3), ()."""
    if len(shape) == 1:
        return "(%d,)" % shape[0]
    return "(" + ",".join(str(d) for d in shape) + ")"


# -- argmax, argmin, one_hot ---------------------------------------------------------
def _arg_reduce(name, x, axis, keepdims):
    a = _tensor(name, x)
    ax = None if axis is None else int_arg(axis)
    keep = bool(keepdims)
    if ax is None:
        n = a.size
    else:
        ax = normalize_axis(ax, a.ndim)
        n = a.shape[ax]
    if n == 0:
        raise ValueError("attempt to get %s of an empty sequence" % name)
    fn = np.argmax if name == "argmax" else np.argmin
    return wrap(np.asarray(fn(a, axis=ax, keepdims=keep)).astype(np.int64))


def argmax(x, axis=None, keepdims=False):
    """int64 index of the first largest element (a NaN counts as largest);
    ``None``: of the flattened tensor."""
    return _arg_reduce("argmax", x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    """int64 index of the first smallest element (a NaN counts as smallest)."""
    return _arg_reduce("argmin", x, axis, keepdims)


def one_hot(indices, depth, dtype=None):
    """``indices.shape + (depth,)`` of ``dtype`` (float32 by default): 1 at each
    index, 0 elsewhere; an index outside [0, depth) gives a row of zeros."""
    a = _tensor("one_hot", indices)
    d = int_arg(depth)
    dt = np_dtype(dtype if dtype is not None else "float32")
    if a.dtype.kind not in "iu":
        raise TypeError("one_hot: indices must be an integer tensor, got " + a.dtype.name)
    if d < 0:
        raise ValueError("one_hot: depth must be non-negative, got %d" % d)
    out = np.zeros(a.shape + (d,), dtype=dt)
    if d > 0 and a.size > 0:
        rows = out.reshape(-1, d)
        idx = a.reshape(-1).astype(np.int64)
        ok = (idx >= 0) & (idx < d)
        rows[np.nonzero(ok)[0], idx[ok]] = 1
    return wrap(out)


# -- squeeze, expand_dims, broadcast_to -------------------------------------------------
def squeeze(x, axis=None):
    """Removes the given axes (each checked in turn: in bounds, not repeated, of
    length 1), or every axis of length 1."""
    a = _tensor("squeeze", x)
    axes = _axes_arg(axis)
    if axes is None:
        return wrap(a.reshape(tuple(d for d in a.shape if d != 1)))
    drop = []
    for v in axes:
        v = normalize_axis(v, a.ndim)
        if v in drop:
            raise ValueError("repeated axis")
        if a.shape[v] != 1:
            raise ValueError(
                "cannot select an axis to squeeze out which has size not equal to one")
        drop.append(v)
    return wrap(a.reshape(tuple(d for i, d in enumerate(a.shape) if i not in drop)))


def expand_dims(x, axis):
    """Inserts axes of length 1 at the given positions of the result."""
    a = _tensor("expand_dims", x)
    axes = _axes_arg(axis)
    if axes is None:
        raise TypeError("ops.expand_dims() needs an axis, not None")
    ndim = a.ndim + len(axes)
    at = []
    for v in axes:
        v = normalize_axis(v, ndim)
        if v in at:
            raise ValueError("repeated axis")
        at.append(v)
    dims = iter(a.shape)
    return wrap(a.reshape(tuple(1 if i in at else next(dims) for i in range(ndim))))


def broadcast_to(x, shape):
    a = _tensor("broadcast_to", x)
    shape = _shape_arg(shape)
    if a.ndim > len(shape):
        raise ValueError("input operand has more dimensions than allowed by the axis remapping")
    fits = all(s == d or s == 1 for s, d in zip(reversed(a.shape), reversed(shape)))
    if not fits:
        raise ValueError(
            "operands could not be broadcast together with remapped shapes "
            "[original->remapped]: %s  and requested shape %s"
            % (_compact(a.shape), _compact(shape)))
    return wrap(np.broadcast_to(a, shape).copy())


# -- concat, stack, split ---------------------------------------------------------------
def _tensors_arg(fn, v):
    if not isinstance(v, (tuple, list)):
        raise TypeError("ops.%s() expects a tuple or list of tensors, got %s"
                        % (fn, type(v).__name__))
    return [_tensor(fn, t) for t in v]


def _concat(arrays, axis):
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    ndim = first.ndim
    ax = normalize_axis(axis, ndim)
    for i, t in enumerate(arrays):
        if t.ndim != ndim:
            raise ValueError(
                "all the input arrays must have same number of dimensions, but the array at "
                "index 0 has %d dimension(s) and the array at index %d has %d dimension(s)"
                % (ndim, i, t.ndim))
        for d in range(ndim):
            if d != ax and t.shape[d] != first.shape[d]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    "match exactly, but along dimension %d, the array at index 0 has size %d "
                    "and the array at index %d has size %d"
                    % (d, first.shape[d], i, t.shape[d]))
    return wrap(np.concatenate(arrays, axis=ax))


def concat(tensors, axis=0):
    """numpy's concatenate: dtypes promoted (bool + int64 is int64, int32 +
    float32 is float64); ``axis`` None joins the tensors flattened."""
    arrays = _tensors_arg("concat", tensors)
    if axis is None:
        return _concat([t.reshape(-1) for t in arrays], 0)
    return _concat(arrays, int_arg(axis))


def stack(tensors, axis=0):
    """numpy's stack: tensors of one shape joined along a new ``axis``."""
    arrays = _tensors_arg("stack", tensors)
    axis = int_arg(axis)
    if not arrays:
        raise ValueError("need at least one array to stack")
    if any(t.shape != arrays[0].shape for t in arrays):
        raise ValueError("all input arrays must have the same shape")
    ax = normalize_axis(axis, arrays[0].ndim + 1)
    return _concat([np.expand_dims(t, ax) for t in arrays], ax)


def split(x, indices_or_sections, axis=0):
    """numpy's split: ``n`` equal sections, or the parts between the indices of a
    tuple/list (Python's slice semantics); a tuple of tensors."""
    a = _tensor("split", x)
    if isinstance(indices_or_sections, (tuple, list)):
        cuts = [int_arg(i) for i in indices_or_sections]
        sections = None
    else:
        sections = int_arg(indices_or_sections)
    axis = int_arg(axis)
    if a.ndim == 0:
        raise ValueError("array split does not work on 0-d arrays")
    ax = normalize_axis(axis, a.ndim)
    n = a.shape[ax]
    if sections is not None:
        if sections == 0:
            raise ZeroDivisionError("integer modulo by zero")
        if n % sections:
            raise ValueError("array split does not result in an equal division")
        if sections < 0:
            raise ValueError("number sections must be larger than 0.")
        part = n // sections
        bounds = [(k * part, (k + 1) * part) for k in range(sections)]
    else:
        starts = [None] + cuts
        bounds = list(zip(starts, cuts + [None]))
    lead = (slice(None),) * ax
    return tuple(wrap(a[lead + (slice(s, e),)].copy()) for s, e in bounds)


# -- take, pad --------------------------------------------------------------------------
def _indices_arg(v):
    if isinstance(v, Tensor):
        return v._a
    if isinstance(v, (tuple, list)) or (isinstance(v, (bool, int)) and is_scalar(v)):
        from .ops import tensor
        a = tensor(v)._a
        if a.size == 0 and a.dtype.kind == "f":
            a = a.astype(np.int64)  # [] holds no floats: numpy's take gives an empty result
        return a
    raise TypeError("ops.take() expects integer indices, got " + type(v).__name__)


def take(x, indices, axis=None):
    """numpy's take in mode 'raise': integer indices (a tensor, an int, or nested
    lists of ints), negative ones counting from the end, IndexError out of bounds;
    ``axis`` None takes from the flattened tensor."""
    a = _tensor("take", x)
    idx = _indices_arg(indices)
    ax = None if axis is None else int_arg(axis)
    if ax is None:
        n, where, outer, inner = a.size, 0, 1, 1
    else:
        ax = normalize_axis(ax, a.ndim)
        n, where = a.shape[ax], ax
        outer, inner = int(np.prod(a.shape[:ax])), int(np.prod(a.shape[ax + 1:]))
    if idx.dtype.kind not in "biu":
        raise TypeError("Cannot cast array data from dtype('%s') to dtype('int64') according "
                        "to the rule 'same_kind'" % idx.dtype.name)
    # numpy's own error for a non-empty result from an empty axis; otherwise an index is
    # checked only when it is read (none when the axes before ``axis`` hold no element).
    if n == 0 and outer * inner * idx.size > 0:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    for i in idx.reshape(-1).tolist() if outer else []:
        j = i + n if i < 0 else i
        if j < 0 or j >= n:
            raise IndexError("index %d is out of bounds for axis %d with size %d" % (i, where, n))
    return wrap(np.take(a, idx.astype(np.int64), axis=ax))


gather = take


def _pad_rows(v):
    """``pad_width`` as rows of ints (an int is one row of one)."""
    bad = "ops.pad() expects pad_width as an int or (nested) tuples of ints"

    def index(i):
        return isinstance(i, (bool, int)) and is_scalar(i)

    if isinstance(v, (tuple, list)):
        if all(index(i) for i in v):
            return [[int(i) for i in v]]
        rows = []
        for r in v:
            if isinstance(r, (tuple, list)):
                rows.append([int_arg(i) for i in r])
            elif index(r):
                rows.append([int(r)])
            else:
                raise TypeError(bad)
        return rows
    if index(v):
        return [[int(v)]]
    raise TypeError(bad)


def _pad_widths(rows, ndim):
    """numpy's broadcast of pad_width to (ndim, 2)."""
    if all(not r for r in rows):
        raise TypeError("`pad_width` must be of integral type.")  # numpy reads () as floats
    n_rows, cols = len(rows), len(rows[0]) if rows else 0
    if any(len(r) != cols for r in rows):
        raise ValueError("pad_width must be an int or a (nested) sequence of ints of one shape")
    if any(v < 0 for r in rows for v in r):
        raise ValueError("index can't contain negative values")
    if not ((n_rows == 1 or n_rows == ndim) and cols in (1, 2)):
        original = "(%d,)" % cols if n_rows == 1 else "(%d,%d)" % (n_rows, cols)
        raise ValueError(
            "operands could not be broadcast together with remapped shapes "
            "[original->remapped]: %s  and requested shape (%d,2)" % (original, ndim))
    out = []
    for d in range(ndim):
        r = rows[0 if n_rows == 1 else d]
        out.append((r[0], r[0 if cols == 1 else 1]))
    return out


def _convert_scalar(value, dtype):
    """A Python number stored into an array of ``dtype``, as anfora (and
    ``np.array(value, dtype)``) converts it."""
    if dtype == np.bool_:
        return value != 0
    if dtype.kind in "iu":
        if isinstance(value, float):
            if value != value:
                raise ValueError("cannot convert float NaN to integer")
            if value in (float("inf"), float("-inf")):
                raise OverflowError("cannot convert float infinity to integer")
            value = int(value)
            if not -2 ** 63 <= value < 2 ** 63:
                raise OverflowError("Python int too large to convert to C long")
        value = int(value)
        if dtype == np.int32 and not -2 ** 31 <= value < 2 ** 31:
            raise OverflowError("Python integer %d out of bounds for int32" % value)
        return value
    return dtype.type(value)


_PAD_MODES = ("constant", "edge", "reflect", "symmetric")
# numpy's other modes, which anfora does not implement.
_NUMPY_ONLY_MODES = ("wrap", "empty", "linear_ramp", "maximum", "mean", "median", "minimum")


def _pad_mode(mode):
    """One of the modes anfora implements; numpy's message for a mode numpy does
    not know either (the mode as ``str()`` shows it)."""
    if isinstance(mode, str) and mode in _PAD_MODES:
        return mode
    if isinstance(mode, str) and mode in _NUMPY_ONLY_MODES:
        raise ValueError("mode '%s' is not supported by ops.pad (its modes are 'constant', "
                         "'edge', 'reflect' and 'symmetric')" % mode)
    raise ValueError("mode '%s' is not supported" % (mode,))


def _pad(a, widths, mode, value):
    if mode == "constant":
        fill = _convert_scalar(value, a.dtype)
        shape = tuple(d + w[0] + w[1] for d, w in zip(a.shape, widths))
        with quiet():
            out = np.full(shape, fill, dtype=a.dtype)
        out[tuple(slice(w[0], w[0] + d) for d, w in zip(a.shape, widths))] = a
        return wrap(out)
    for axis, (n, w) in enumerate(zip(a.shape, widths)):
        if n == 0 and w != (0, 0):
            raise ValueError("can't extend empty axis %d using modes other than 'constant' "
                             "or 'empty'" % axis)
    if a.ndim == 0:
        return wrap(a.copy())
    return wrap(np.pad(a, widths, mode))


def pad(x, pad_width, mode="constant", constant_values=None):
    """numpy's pad: ``pad_width`` an int, ``(n,)``, ``(before, after)`` or one
    pair per axis; ``mode`` 'constant' (``constant_values``, a number or a
    one-element tensor converted to x's dtype), 'edge', 'reflect' or
    'symmetric' (widths beyond the axis reflect again, as numpy's do).
    **Deliberate:** ``constant_values=None`` means "not given" (0 in the
    constant mode, accepted by the others), where numpy would store None."""
    a = _tensor("pad", x)
    widths = _pad_widths(_pad_rows(pad_width), a.ndim)
    mode = _pad_mode(mode)
    value = constant_values
    if value is None:
        value = 0
    elif mode != "constant":
        raise ValueError("unsupported keyword arguments for mode '%s': {'constant_values'}"
                         % mode)
    elif isinstance(value, Tensor) and value.size == 1:
        value = value._a.reshape(()).item()
    elif not is_scalar(value):
        raise TypeError("ops.pad() expects a number as its constant_values, got "
                        + type(value).__name__)
    return _pad(a, widths, mode, value)


def _pad2d(op, mode, x, padding):
    """PyTorch's 2-D padding of (N, C, H, W) or (C, H, W) input: ``padding`` an
    int or ``(left, right, top, bottom)``, non-negative; a reflection's less
    than the size of its axis."""
    a = _tensor(op, x)

    def index(i):
        return isinstance(i, (bool, int)) and is_scalar(i)

    bad = TypeError("ops.%s() expects padding as an int or a tuple of 4 ints (left, right, "
                    "top, bottom), got %s" % (op, type(padding).__name__))
    if isinstance(padding, (tuple, list)):
        if not all(index(i) for i in padding):
            raise bad
        pads = [int(i) for i in padding]
        if len(pads) != 4:
            raise ValueError("%s: padding must be an int or 4 ints (left, right, top, bottom), "
                             "got %d" % (op, len(pads)))
    elif index(padding):
        pads = [int(padding)] * 4
    else:
        raise bad
    if a.ndim not in (3, 4):
        raise ValueError("%s: expected a 4-D input (N, C, H, W) or a 3-D one (C, H, W), got "
                         "shape %r" % (op, tuple(a.shape)))
    if any(p < 0 for p in pads):
        raise ValueError("%s: padding must be non-negative, got (%d, %d, %d, %d)"
                         % (op, pads[0], pads[1], pads[2], pads[3]))
    h, w = a.ndim - 2, a.ndim - 1
    if mode == "reflect":
        for axis, pair, what in ((w, pads[:2], "width"), (h, pads[2:], "height")):
            if any(p >= a.shape[axis] for p in pair):
                raise ValueError("%s: padding (%d, %d) of the %s must be less than its size %d "
                                 "(axis %d of shape %r)"
                                 % (op, pair[0], pair[1], what, a.shape[axis], axis,
                                    tuple(a.shape)))
    widths = [(0, 0)] * a.ndim
    widths[h] = (pads[2], pads[3])
    widths[w] = (pads[0], pads[1])
    return _pad(a, widths, mode, 0)


def reflection_pad2d(x, padding):
    """PyTorch's ReflectionPad2d (numpy's 'reflect' on the last two axes)."""
    return _pad2d("reflection_pad2d", "reflect", x, padding)


def replication_pad2d(x, padding):
    """PyTorch's ReplicationPad2d (numpy's 'edge' on the last two axes)."""
    return _pad2d("replication_pad2d", "edge", x, padding)


def zero_pad2d(x, padding):
    """PyTorch's ZeroPad2d."""
    return _pad2d("zero_pad2d", "constant", x, padding)


# -- aliases --------------------------------------------------------------------------
unsqueeze = expand_dims


def index_select(x, axis, index):
    """MindSpore's index_select: ``take(x, index, axis)`` for a 1-D int32 or
    int64 index tensor."""
    _tensor("index_select", x)
    axis = int_arg(axis)
    if not isinstance(index, Tensor):
        raise TypeError("ops.index_select() expects index as a 1-D int32 or int64 tensor, got "
                        + type(index).__name__)
    if index._a.dtype not in (np.int32, np.int64):
        raise TypeError("ops.index_select() expects an int32 or int64 index, got "
                        + index._a.dtype.name)
    if index._a.ndim != 1:
        raise ValueError("ops.index_select() expects a 1-D index, got shape %r"
                         % (tuple(index.shape),))
    return take(x, index, axis)

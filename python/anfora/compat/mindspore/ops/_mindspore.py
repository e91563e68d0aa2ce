"""MindSpore 2.x's functional operations whose names anfora's `ops` shares with other
signatures or results (checked against MindSpore 2.7.2), and a few anfora's `ops` lacks. They
are plain functions over anfora's operations, so they compile inside `construct`.

Where they differ from numpy's: `max`/`min` return `(values, indices)`; `argmax` takes
`dim`/`keepdim` and `argmin` returns int32; `sum` takes `dim`/`keepdim`, `mean` and `prod`
`keep_dims`; `pad` takes PyTorch's padding order (the last dimension's pair first);
`flatten` keeps the first dimension; `one_hot` takes on and off values. What they do not
support stops with an AssertionError saying so (compiled code has no `raise`)."""

import anfora as _af
from anfora import ops as _ops


def max(input, axis=None, keepdims=False):
    """`(values, indices)` of the largest elements along `axis` (indices int64; without an
    axis, of the flattened tensor)."""
    return _ops.max(input, axis, keepdims), _ops.argmax(input, axis, keepdims)


def min(input, axis=None, keepdims=False):
    """`(values, indices)` of the smallest elements along `axis`."""
    return _ops.min(input, axis, keepdims), _ops.argmin(input, axis, keepdims)


def argmax(input, dim=None, keepdim=False):
    return _ops.argmax(input, dim, keepdim)


def argmin(input, axis=None, keepdims=False):
    """The indices of the smallest elements, int32 as MindSpore's."""
    return _ops.cast(_ops.argmin(input, axis, keepdims), _af.int32)


def sum(input, dim=None, keepdim=False, dtype=None):
    total = _ops.sum(input, dim, keepdim)
    if dtype is None:
        return total
    return _ops.cast(total, dtype)


def mean(x, axis=None, keep_dims=False):
    return _ops.mean(x, axis, keep_dims)


def prod(input, axis=None, keep_dims=False, dtype=None):
    product = _ops.prod(input, axis, keep_dims)
    if dtype is None:
        return product
    return _ops.cast(product, dtype)


def std(input, axis=None, ddof=0, keepdims=False):
    return _ops.sqrt(_ops.var(input, axis, ddof, keepdims))


def norm(A, ord=None, dim=None, keepdim=False):
    """The 2-norm of the elements (over `dim`, or all of them): `ord=None` only."""
    assert ord is None, "ops.norm: only ord=None (the 2-norm of the elements) is supported"
    return _ops.sqrt(_ops.sum(A * A, dim, keepdim))


def cat(tensors, axis=0):
    return _ops.concat(tensors, axis)


def clamp(input, min=None, max=None):
    return _ops.clip(input, min, max)


def square(input):
    return input * input


def isnan(input):
    return input != input


def pad(input_x, padding, mode="constant", value=None):
    """PyTorch's padding order: `(left, right)` of the last dimension, then of the one
    before, ...; modes "constant" (with `value`, default 0), "reflect" and "replicate"."""
    modes = ("constant", "reflect", "replicate")
    assert mode in modes, "ops.pad: the modes are constant, reflect and replicate"
    ndim = len(input_x.shape)
    paired = len(padding) // 2
    widths = ()
    for d in range(ndim):
        k = ndim - 1 - d
        if k < paired:
            widths = widths + ((padding[2 * k], padding[2 * k + 1]),)
        else:
            widths = widths + ((0, 0),)
    if mode == "constant":
        return _ops.pad(input_x, widths, "constant", 0 if value is None else value)
    if mode == "reflect":
        return _ops.pad(input_x, widths, "reflect")
    return _ops.pad(input_x, widths, "edge")


def flatten(input, order="C", start_dim=1, end_dim=-1):
    """The dimensions from `start_dim` on merged into one (row-major)."""
    assert order == "C" and end_dim == -1, "ops.flatten: only order='C' and end_dim=-1"
    return _ops.reshape(input, input.shape[:start_dim] + (-1,))


def one_hot(indices, depth, on_value=1, off_value=0, axis=-1):
    """`on_value` where the last axis equals the index, `off_value` elsewhere."""
    assert axis == -1, "ops.one_hot: only axis=-1"
    hot = _ops.one_hot(indices, depth)
    return _ops.where(hot > 0.5, on_value, off_value)


__all__ = ["max", "min", "argmax", "argmin", "sum", "mean", "prod", "std", "norm", "cat",
           "clamp", "square", "isnan", "pad", "flatten", "one_hot"]

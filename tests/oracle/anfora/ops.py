"""anfora.ops: creation, elementwise, math, reduction and shape operations.

Elementwise ops follow the Python operators exactly (``add(a, b)`` is
``a + b``), so two Python scalars give a Python scalar. Math functions on a
Python scalar compute in float64 with IEEE results (no exceptions). Reductions,
shape ops, ``where``, ``cast`` and ``matmul`` require Tensor inputs.
"""

import operator

import numpy as np

from ._core import Tensor, is_scalar, np_dtype, quiet, resolve_dtype, wrap

__all__ = [
    "zeros", "ones", "full", "arange", "tensor", "zeros_like", "ones_like",
    "add", "sub", "mul", "div", "floor_div", "mod", "pow", "neg", "abs",
    "maximum", "minimum", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "logical_not",
    "exp", "log", "sqrt", "tanh", "sin", "cos", "sigmoid", "relu",
    "where", "cast", "matmul", "sum", "mean", "max", "min", "prod",
    "reshape", "transpose",
    "assign", "assign_add", "assign_sub", "scatter_update", "scatter_add",
    "scatter_nd_update", "scatter_nd_add", "sgd", "apply_momentum", "adam", "depend",
]

from ._state import (  # noqa: E402
    adam, apply_momentum, assign, assign_add, assign_sub, depend, scatter_add,
    scatter_nd_add, scatter_nd_update, scatter_update, sgd,
)

_abs = abs
_max = max
_min = min


def _require_tensor(fn, x):
    if not isinstance(x, Tensor):
        raise TypeError(
            "ops." + fn + "() expects a Tensor, got " + type(x).__name__
        )
    return x._a


def _shape(shape):
    if isinstance(shape, (tuple, list)):
        return tuple(shape)
    return (shape,)


def _leaves(data, out):
    if isinstance(data, (list, tuple)):
        for item in data:
            _leaves(item, out)
    elif is_scalar(data):
        out.append(data)
    else:
        raise TypeError(
            "ops.tensor() expects nested lists/tuples of bool, int or float, got "
            + type(data).__name__
        )
    return out


# -- creation ------------------------------------------------------------
def zeros(shape, dtype=None):
    return wrap(np.zeros(_shape(shape), dtype=np_dtype(dtype or "float32")))


def ones(shape, dtype=None):
    return wrap(np.ones(_shape(shape), dtype=np_dtype(dtype or "float32")))


def full(shape, fill_value, dtype=None):
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = "bool"
        elif isinstance(fill_value, int):
            dtype = "int64"
        elif isinstance(fill_value, float):
            dtype = "float32"
        else:
            raise TypeError(
                "ops.full() expects a bool, int or float fill value, got "
                + type(fill_value).__name__
            )
    with quiet():
        return wrap(np.full(_shape(shape), fill_value, dtype=np_dtype(dtype)))


def arange(start, stop=None, step=None, dtype=None):
    """Values are computed in int64 (all-int arguments) or float64 and then
    cast: all ints -> int64, any float -> float32 unless ``dtype`` is given."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    args = (start, stop, step)
    for a in args:
        if not is_scalar(a):
            raise TypeError("ops.arange() expects numbers, got " + type(a).__name__)
    any_float = any(isinstance(a, float) for a in args)
    if dtype is None:
        dtype = "float32" if any_float else "int64"
    base = np.float64 if any_float else np.int64
    with quiet():
        values = np.arange(start, stop, step, dtype=base)
        return wrap(values.astype(np_dtype(dtype)))


def tensor(data, dtype=None):
    """Nested lists/tuples of Python scalars, a scalar, or a Tensor.
    Default dtype: all bool -> bool, all int/bool -> int64, otherwise float32
    (also float32 for an empty list)."""
    if isinstance(data, Tensor):
        if dtype is None:
            return wrap(data._a.copy())
        return data.astype(dtype)
    leaves = _leaves(data, [])
    if dtype is None:
        if leaves and all(isinstance(v, bool) for v in leaves):
            dtype = "bool"
        elif leaves and all(isinstance(v, int) for v in leaves):
            dtype = "int64"
        else:
            dtype = "float32"
    with quiet():
        return wrap(np.array(data, dtype=np_dtype(dtype)))


def zeros_like(x, dtype=None):
    a = _require_tensor("zeros_like", x)
    dt = a.dtype if dtype is None else np_dtype(dtype)
    return wrap(np.zeros(a.shape, dtype=dt))


def ones_like(x, dtype=None):
    a = _require_tensor("ones_like", x)
    dt = a.dtype if dtype is None else np_dtype(dtype)
    return wrap(np.ones(a.shape, dtype=dt))


# -- elementwise: exactly the Python operators ----------------------------
def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def div(a, b):
    return a / b


def floor_div(a, b):
    return a // b


def mod(a, b):
    return a % b


def pow(a, b):  # noqa: A001 - anfora's name
    return a ** b


def neg(a):
    return -a


def abs(a):  # noqa: A001 - anfora's name
    return _abs(a)


def _tensor_or_scalar(x):
    if isinstance(x, Tensor):
        return x._a
    if is_scalar(x):
        return x
    raise TypeError("expected a Tensor or a Python scalar, got " + type(x).__name__)


def maximum(a, b):
    if is_scalar(a) and is_scalar(b):
        return _max(a, b)
    x, y = _tensor_or_scalar(a), _tensor_or_scalar(b)
    with quiet():
        return wrap(np.maximum(x, y))


def minimum(a, b):
    if is_scalar(a) and is_scalar(b):
        return _min(a, b)
    x, y = _tensor_or_scalar(a), _tensor_or_scalar(b)
    with quiet():
        return wrap(np.minimum(x, y))


def equal(a, b):
    return a == b


def not_equal(a, b):
    return a != b


def less(a, b):
    return a < b


def less_equal(a, b):
    return a <= b


def greater(a, b):
    return a > b


def greater_equal(a, b):
    return a >= b


def logical_not(a):
    if isinstance(a, Tensor):
        return wrap(np.logical_not(a._a))
    return not a


# -- math ------------------------------------------------------------------
def _math(name, ufunc):
    def fn(x):
        if isinstance(x, Tensor):
            with quiet():
                return wrap(ufunc(x._a))
        if is_scalar(x):
            with quiet():
                return float(ufunc(np.float64(x)))
        raise TypeError(
            "ops." + name + "() expects a Tensor or a Python scalar, got "
            + type(x).__name__
        )

    fn.__name__ = name
    return fn


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


exp = _math("exp", np.exp)
log = _math("log", np.log)
sqrt = _math("sqrt", np.sqrt)
tanh = _math("tanh", np.tanh)
sin = _math("sin", np.sin)
cos = _math("cos", np.cos)
sigmoid = _math("sigmoid", _sigmoid)


def relu(x):
    """max(x, 0) keeping the dtype; an int (or bool) scalar gives an int."""
    if isinstance(x, Tensor):
        with quiet():
            return wrap(np.maximum(x._a, np.zeros((), dtype=x._a.dtype)))
    if isinstance(x, int):
        return int(x) if x > 0 else 0
    if isinstance(x, float):
        with quiet():
            return float(np.maximum(np.float64(x), np.float64(0.0)))
    raise TypeError("ops.relu() expects a Tensor or a Python scalar, got " + type(x).__name__)


# -- tensor-only ops ---------------------------------------------------------
def where(cond, x, y):
    c = _require_tensor("where", cond)
    with quiet():
        return wrap(np.where(c, _tensor_or_scalar(x), _tensor_or_scalar(y)))


def cast(x, dtype):
    _require_tensor("cast", x)
    return x.astype(resolve_dtype(dtype))


def matmul(a, b):
    x = _require_tensor("matmul", a)
    y = _require_tensor("matmul", b)
    with quiet():
        return wrap(np.matmul(x, y))


def sum(x, axis=None, keepdims=False):  # noqa: A001
    _require_tensor("sum", x)
    return x.sum(axis, keepdims)


def mean(x, axis=None, keepdims=False):
    _require_tensor("mean", x)
    return x.mean(axis, keepdims)


def max(x, axis=None, keepdims=False):  # noqa: A001
    _require_tensor("max", x)
    return x.max(axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
    _require_tensor("min", x)
    return x.min(axis, keepdims)


def prod(x, axis=None, keepdims=False):
    _require_tensor("prod", x)
    return x.prod(axis, keepdims)


def reshape(x, shape):
    _require_tensor("reshape", x)
    return x.reshape(_shape(shape))


def transpose(x, axes=None):
    _require_tensor("transpose", x)
    if axes is None:
        return x.transpose()
    return x.transpose(tuple(axes))

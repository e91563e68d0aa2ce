"""anfora.ops: creation, elementwise, math, reduction and shape operations.

Elementwise ops follow the Python operators exactly (``add(a, b)`` is
``a + b``), so two Python scalars give a Python scalar. Math functions on a
Python scalar compute in float64 with IEEE results (no exceptions). Reductions,
shape ops, ``where``, ``cast`` and ``matmul`` require Tensor inputs.

The activation and special functions (``log1p`` ... ``sign``, ``clip``), the
softmax family and ``dropout`` are below; numpy's array functions (``argmax``,
``one_hot``, ``squeeze`` ... ``take``, ``pad``, the 2-D paddings and the
aliases ``unsqueeze`` and ``index_select``) are in ``_array.py``; ``permute``
is ``transpose`` with the axes required.
"""

import decimal
import math
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
    "reshape", "transpose", "permute",
    "log1p", "expm1", "erf", "gelu", "silu", "softplus", "rsqrt", "sign", "clip",
    "softmax", "log_softmax", "logsumexp", "dropout",
    "argmax", "argmin", "one_hot", "squeeze", "expand_dims", "broadcast_to",
    "concat", "stack", "split", "take", "gather", "pad",
    "reflection_pad2d", "replication_pad2d", "zero_pad2d", "unsqueeze", "index_select",
    "assign", "assign_add", "assign_sub", "scatter_update", "scatter_add",
    "scatter_nd_update", "scatter_nd_add", "sgd", "apply_momentum", "adam", "depend",
]

from ._state import (  # noqa: E402
    adam, apply_momentum, assign, assign_add, assign_sub, depend, scatter_add,
    scatter_nd_add, scatter_nd_update, scatter_update, sgd,
)
from ._array import (  # noqa: E402
    argmax, argmin, broadcast_to, concat, expand_dims, gather, index_select, int_arg,
    normalize_axis, one_hot, pad, reflection_pad2d, replication_pad2d, split, squeeze, stack,
    take, unsqueeze, zero_pad2d,
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
            a = x._a.astype(np.float64) if x._a.dtype == np.bool_ else x._a  # not float16
            with quiet():
                return wrap(ufunc(a))
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


def permute(x, axes):
    """PyTorch's and MindSpore's name: ``transpose`` with the axes required (an
    int counts as one axis, as ``transpose`` reads it)."""
    _require_tensor("permute", x)
    if axes is None:
        raise TypeError("ops.permute() needs axes, not None")
    return x.transpose(tuple(axes) if isinstance(axes, (tuple, list)) else (axes,))


# -- activation and special functions ---------------------------------------------
# Elementwise like ``exp``, but as anfora defines them: float tensors keep their
# dtype, int and bool tensors compute in float64 (numpy would give float16 for
# bools), and a Python number is computed as a float64 0-d tensor and returned as
# a Python float. Other arguments: TypeError "ops.<name>() expects a Tensor or a
# number, got <type>".
def _in_float(a):
    return a if a.dtype.kind == "f" else a.astype(np.float64)


def _special(name, kernel):
    def fn(x):
        if isinstance(x, Tensor):
            with quiet():
                return wrap(kernel(_in_float(x._a)))
        if is_scalar(x):
            with quiet():
                return float(kernel(np.array(float(x), dtype=np.float64)))
        raise TypeError(
            "ops." + name + "() expects a Tensor or a number, got " + type(x).__name__
        )

    fn.__name__ = name
    return fn


_erf64 = np.vectorize(math.erf, otypes=[np.float64])


def _erf(a):
    """libm's erf, element by element in float64 (float32 rounded once)."""
    if a.size == 0:
        return a.copy()
    return _erf64(a.astype(np.float64)).astype(a.dtype)


def _gelu_exact(a):
    """x/2 * (1 + erf(x/sqrt(2))), always computed in float64 and rounded once."""
    x = a.astype(np.float64)
    if x.size == 0:
        return a.copy()
    return (0.5 * x * (1.0 + _erf64(x / math.sqrt(2.0)))).astype(a.dtype)


_GELU_C = 0.7978845608028654  # sqrt(2/pi)
_GELU_A = 0.044715


def _gelu_tanh(a):
    """PyTorch's tanh form, in the tensor's own float dtype, in this order:
    0.5*x * (1 + tanh(c * (x + a*x*x*x)))."""
    t = a.dtype.type
    c, k = t(_GELU_C), t(_GELU_A)
    inner = c * (a + k * a * a * a)
    return t(0.5) * a * (t(1.0) + np.tanh(inner))


def _softplus(a):
    """max(x, 0) + log1p(exp(-|x|)): no overflow, small values kept."""
    return np.maximum(a, 0) + np.log1p(np.exp(-np.abs(a)))


log1p = _special("log1p", np.log1p)
expm1 = _special("expm1", np.expm1)
erf = _special("erf", _erf)
silu = _special("silu", lambda a: a * _sigmoid(a))
softplus = _special("softplus", _softplus)
rsqrt = _special("rsqrt", lambda a: 1 / np.sqrt(a))
_gelu_exact_fn = _special("gelu", _gelu_exact)
_gelu_tanh_fn = _special("gelu", _gelu_tanh)


def gelu(x, approximate=False):
    """x * Phi(x) (erf form), or with ``approximate`` true PyTorch's tanh form."""
    if approximate:
        return _gelu_tanh_fn(x)
    return _gelu_exact_fn(x)


def sign(x):
    """numpy's sign: -1, 0 or 1 in the input's dtype (both zeros give +0, NaN stays
    NaN); a TypeError for bool tensors. A Python bool or int gives an int, a float a
    float."""
    if isinstance(x, Tensor):
        if x._a.dtype == np.bool_:
            raise TypeError(
                "ufunc 'sign' did not contain a loop with signature matching types "
                "<class 'numpy.dtypes.BoolDType'> -> None"
            )
        with quiet():
            return wrap(np.sign(x._a))
    if isinstance(x, (bool, int)) and is_scalar(x):
        return (x > 0) - (x < 0)
    if isinstance(x, float):
        with quiet():
            return float(np.sign(np.float64(x)))
    raise TypeError("ops.sign() expects a Tensor or a number, got " + type(x).__name__)


def clip(x, min=None, max=None):  # noqa: A002 - anfora's keyword names
    """numpy's clip as ``minimum(maximum(x, min), max)`` with ``ops.maximum`` and
    ``ops.minimum`` (Python numbers as Python's max/min); a ``None`` bound is left out
    (both ``None``: ``x`` itself). With a tensor, as numpy's clip, the operands broadcast
    together (a mismatch names every shape) and compute in their dtype taken together
    (``np.result_type``, Python numbers weak): the tensors are cast to it first."""
    if not isinstance(x, Tensor) and not is_scalar(x):
        raise TypeError("ops.clip() expects a Tensor or a number, got " + type(x).__name__)
    given = [v for v in (x, min, max) if v is not None]

    def cast(v):
        return v

    if any(isinstance(v, Tensor) for v in given):
        values = [_tensor_or_scalar(v) for v in given]
        shapes = [np.shape(v) for v in values]
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            listed = "".join(
                "(%s%s) " % (",".join(str(d) for d in s), "," if len(s) == 1 else "") for s in shapes
            )
            raise ValueError("operands could not be broadcast together with shapes " + listed) from None
        common = np.result_type(*values)
        def cast(v):
            return wrap(v._a.astype(common)) if isinstance(v, Tensor) and v._a.dtype != common else v

    v = cast(x)
    if min is not None:
        v = maximum(v, cast(min))
    if max is not None:
        v = minimum(v, cast(max))
    return v


# -- softmax, log_softmax, logsumexp -----------------------------------------------
# Tensors only; arguments read first (ints for axes), then the dtype must be float
# (TypeError "<op>: expected float32 or float64 tensors, got <dtype>") and the axes
# in range (numpy's ValueError with the op's name in front).
def _nn_float(op, a):
    if a.dtype.kind != "f":
        raise TypeError("%s: expected float32 or float64 tensors, got %s" % (op, a.dtype.name))


def _softmax(op, x, axis, log):
    a = _require_tensor(op, x)
    axis = int_arg(axis)
    _nn_float(op, a)
    ax = normalize_axis(axis, a.ndim, op + ": ")
    if a.size == 0:
        return wrap(a.copy())
    with quiet():
        m = np.max(a, axis=ax, keepdims=True)
        z = a - m
        e = np.exp(z)
        s = np.sum(e, axis=ax, keepdims=True)
        return wrap(z - np.log(s) if log else e / s)


def softmax(x, axis=-1):
    """exp(x - max) / sum(exp(x - max)) along ``axis`` (a row holding inf, or only
    -inf, is NaN)."""
    return _softmax("softmax", x, axis, False)


def log_softmax(x, axis=-1):
    """(x - max) - log(sum(exp(x - max))) along ``axis``."""
    return _softmax("log_softmax", x, axis, True)


def logsumexp(x, axis=None, keepdims=False):
    """scipy's logsumexp: max + log(sum(exp(x - max))) over ``axis`` (an int, a
    tuple/list of ints, or None for all), an infinite maximum not subtracted; a
    reduction over no elements is -inf."""
    a = _require_tensor("logsumexp", x)
    if axis is None:
        axes = None
    elif isinstance(axis, (tuple, list)):
        axes = [int_arg(v) for v in axis]
    else:
        axes = [int_arg(axis)]
    keep = bool(keepdims)
    _nn_float("logsumexp", a)
    if axes is not None:
        norm = [normalize_axis(v, a.ndim, "logsumexp: ") for v in axes]
        if len(set(norm)) != len(norm):
            raise ValueError("duplicate value in 'axis'")
        axes = tuple(norm)
    with quiet():
        if a.size == 0:
            return wrap(np.log(np.sum(a, axis=axes, keepdims=keep)))
        m = np.max(a, axis=axes, keepdims=True)
        m = np.where((m - m) == 0, m, np.zeros((), dtype=a.dtype))
        lse = np.log(np.sum(np.exp(a - m), axis=axes, keepdims=keep))
        return wrap(lse + m.reshape(lse.shape))


# -- dropout -----------------------------------------------------------------------
def _rust_float(f):
    """A float as Rust's Display writes it (2.0 -> "2", 1e20 without exponent)."""
    if f != f:
        return "NaN"
    if f in (float("inf"), float("-inf")):
        return "inf" if f > 0 else "-inf"
    text = format(decimal.Decimal(repr(f)), "f")
    return text[:-2] if text.endswith(".0") else text


def dropout(x, p=0.5, training=True):
    """anfora's dropout where it is deterministic: ``x`` itself when not training or
    ``p`` is 0, zeros (x's dtype) for ``p`` 1. Random masks (0 < p < 1 while
    training) are not reproduced: corpus programs do not use them."""
    if not isinstance(x, Tensor):
        raise TypeError("ops.dropout() expects a Tensor as x, got " + type(x).__name__)
    a = x._a
    if a.dtype.kind != "f":
        raise TypeError("ops.dropout() expects a floating tensor, got " + a.dtype.name)
    if not is_scalar(p):
        raise TypeError("ops.dropout() expects a number as p, got " + type(p).__name__)
    rate = float(p)
    if not 0.0 <= rate <= 1.0:
        raise ValueError("ops.dropout: p must be in [0, 1], got " + _rust_float(rate))
    if not training or rate == 0.0:
        return x
    if rate >= 1.0:
        return wrap(np.zeros_like(a))
    raise NotImplementedError("the oracle does not reproduce anfora's random dropout masks")


def setitem(x, index, value):
    """numpy's `x[index] = value` on a copy of `x`, which is returned (`x` is unchanged)."""
    out = Tensor(np.array(x._a))
    out[index] = value
    return out

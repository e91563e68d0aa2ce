"""Core of the anfora oracle: ``DType`` and ``Tensor``.

A ``Tensor`` wraps an ``np.ndarray`` (composition, never subclassing). Every
operation returns a ``Tensor`` -- 0-d results stay 0-d tensors, there are no
numpy scalars -- and numpy does the arithmetic (NEP 50 for Python scalars).

Deliberate deviations from numpy (anfora's semantics):
  * integer/bool ``//`` and ``%`` with a zero divisor raise
    ``ZeroDivisionError("integer division or modulo by zero")``;
  * only the dtypes bool, int32, int64, float16, float32 and float64 exist (float16
    computes in float32 and rounds once, as numpy's float16 loops do): an operation
    whose numpy result has another dtype raises ``TypeError``, except the two
    documented cases: ``bool // % ** << >> bool`` (numpy's int8) is int64, and
    math functions of bool tensors (numpy's float16) compute in float64.
    (bfloat16, which numpy lacks, is tested in tests/python.)
"""

import operator
import warnings

import numpy as np

_NAMES = ("bool", "int32", "int64", "float16", "float32", "float64")


class _Named(np.ndarray):
    """Only a name: numpy's repr of a view of this class reads `Tensor(...)`."""


_Named.__name__ = _Named.__qualname__ = "Tensor"


class DType:
    """An anfora dtype. ``str`` -> ``"float32"``, ``repr`` -> ``"anfora.float32"``."""

    __slots__ = ("name", "_np", "_attr")

    def __init__(self, name, attr):
        self.name = name  # numpy's name: "bool", "int32", ...
        self._attr = attr  # module attribute: "bool_", "int32", ...
        self._np = np.dtype(name)

    def __str__(self):
        return self.name

    def __repr__(self):
        return "anfora." + self._attr

    def __eq__(self, other):
        if isinstance(other, DType):
            return self.name == other.name
        if isinstance(other, str):
            return other in (self.name, self._attr)
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self.name)


float16 = DType("float16", "float16")
float32 = DType("float32", "float32")
float64 = DType("float64", "float64")
int32 = DType("int32", "int32")
int64 = DType("int64", "int64")
bool_ = DType("bool", "bool_")

_BY_NAME = {
    "float16": float16,
    "float32": float32,
    "float64": float64,
    "int32": int32,
    "int64": int64,
    "bool": bool_,
    "bool_": bool_,
}


def resolve_dtype(dtype):
    """A DType or its string name -> DType (TypeError otherwise)."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str) and dtype in _BY_NAME:
        return _BY_NAME[dtype]
    raise TypeError("unsupported dtype: " + repr(dtype))


def np_dtype(dtype):
    return resolve_dtype(dtype)._np


class _Quiet:
    """``np.errstate(all="ignore")`` plus silenced numpy RuntimeWarnings."""

    def __enter__(self):
        self._err = np.errstate(all="ignore")
        self._err.__enter__()
        self._warn = warnings.catch_warnings()
        self._warn.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)
        return self

    def __exit__(self, *exc):
        self._warn.__exit__(*exc)
        self._err.__exit__(*exc)
        return False


quiet = _Quiet


def is_scalar(x):
    """A Python scalar as anfora knows them: bool, int or float (not numpy's)."""
    return type(x) in (bool, int, float)


def wrap(result):
    """A numpy result (array or numpy scalar) -> Tensor."""
    arr = np.asarray(result)
    if arr.dtype.name not in _NAMES:
        raise TypeError("anfora has no dtype " + arr.dtype.name)
    return Tensor(arr)


def _operand(x):
    if isinstance(x, Tensor):
        return x._a
    if is_scalar(x):
        return x
    return None


def _check_int_divisor(a, b):
    """anfora: integer // and % by zero raise instead of giving 0."""
    if np.result_type(a, b).kind in "biu":
        divisor = np.broadcast_arrays(np.asarray(a), np.asarray(b))[1]
        if np.any(divisor == 0):
            raise ZeroDivisionError("integer division or modulo by zero")


def _widen(x):
    """A bool operand as int64 (arrays) or int (Python bools)."""
    if isinstance(x, np.ndarray) and x.dtype == np.bool_:
        return x.astype(np.int64)
    return int(x) if type(x) is bool else x


def _binary(fn, name, reflected=False):
    def method(self, other):
        o = _operand(other)
        if o is None:
            return NotImplemented
        a, b = (o, self._a) if reflected else (self._a, o)
        if name in ("floordiv", "mod"):
            _check_int_divisor(a, b)
        with quiet():
            r = fn(a, b)
            if np.asarray(r).dtype == np.int8:
                # bool // % ** << >> bool: numpy's int8 is anfora's int64.
                r = fn(_widen(a), _widen(b))
            return wrap(r)

    method.__name__ = "__" + ("r" if reflected else "") + name + "__"
    return method


def _shape_text(shape):
    """A shape as numpy writes it in messages: `(3,)`, `(2,3)`."""
    inner = ",".join(str(d) for d in shape)
    return "(" + inner + ("," if len(shape) == 1 else "") + ")"


def _inplace(binary):
    """numpy's `a op= b`: the result is written into `a` itself (seen through every view of
    it), keeping its shape and, under the `same_kind` rule, its dtype."""

    def method(self, other):
        r = binary(self, other)
        if r is NotImplemented:
            return NotImplemented
        out, src = self._a, r._a
        if src.shape != out.shape:
            raise ValueError(
                "non-broadcastable output operand with shape %s doesn't match the broadcast "
                "shape %s" % (_shape_text(out.shape), _shape_text(src.shape)))
        if not np.can_cast(src.dtype, out.dtype, casting="same_kind"):
            raise TypeError(
                "Cannot cast ufunc output from dtype('%s') to dtype('%s') with casting rule "
                "'same_kind'" % (src.dtype.name, out.dtype.name))
        with quiet():
            out[...] = src
        return self

    method.__name__ = binary.__name__.replace("__", "__i", 1)
    return method


def _unary(fn, name):
    def method(self):
        with quiet():
            return wrap(fn(self._a))

    method.__name__ = "__" + name + "__"
    return method


def _index(index):
    """An index with Tensors as numpy arrays (integer or boolean index arrays)."""
    if isinstance(index, tuple):
        return tuple(_index(i) for i in index)
    if isinstance(index, Tensor):
        return index._a
    return index


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


class Tensor:
    """An n-d array with numpy semantics (in-place operators and item assignment change it,
    and every view of it)."""

    __slots__ = ("_a",)
    __hash__ = None

    def __init__(self, array):
        self._a = np.asarray(array)

    # -- printing ------------------------------------------------------
    def __repr__(self):
        # numpy names a subclass by its type: `Tensor([1., 2.], dtype=float32)`, wrapped for
        # the longer prefix exactly as numpy wraps it.
        return repr(self._a.view(_Named))

    def __str__(self):
        return str(self._a)

    # -- arithmetic ----------------------------------------------------
    __add__ = _binary(operator.add, "add")
    __radd__ = _binary(operator.add, "add", True)
    __sub__ = _binary(operator.sub, "sub")
    __rsub__ = _binary(operator.sub, "sub", True)
    __mul__ = _binary(operator.mul, "mul")
    __rmul__ = _binary(operator.mul, "mul", True)
    __truediv__ = _binary(operator.truediv, "truediv")
    __rtruediv__ = _binary(operator.truediv, "truediv", True)
    __floordiv__ = _binary(operator.floordiv, "floordiv")
    __rfloordiv__ = _binary(operator.floordiv, "floordiv", True)
    __mod__ = _binary(operator.mod, "mod")
    __rmod__ = _binary(operator.mod, "mod", True)
    __pow__ = _binary(operator.pow, "pow")
    __rpow__ = _binary(operator.pow, "pow", True)
    __matmul__ = _binary(operator.matmul, "matmul")
    __rmatmul__ = _binary(operator.matmul, "matmul", True)
    __and__ = _binary(operator.and_, "and")
    __rand__ = _binary(operator.and_, "and", True)
    __or__ = _binary(operator.or_, "or")
    __ror__ = _binary(operator.or_, "or", True)
    __xor__ = _binary(operator.xor, "xor")
    __rxor__ = _binary(operator.xor, "xor", True)
    __lshift__ = _binary(operator.lshift, "lshift")
    __rlshift__ = _binary(operator.lshift, "lshift", True)
    __rshift__ = _binary(operator.rshift, "rshift")
    __rrshift__ = _binary(operator.rshift, "rshift", True)

    __iadd__ = _inplace(__add__)
    __isub__ = _inplace(__sub__)
    __imul__ = _inplace(__mul__)
    __itruediv__ = _inplace(__truediv__)
    __ifloordiv__ = _inplace(__floordiv__)
    __imod__ = _inplace(__mod__)
    __ipow__ = _inplace(__pow__)
    __imatmul__ = _inplace(__matmul__)
    __iand__ = _inplace(__and__)
    __ior__ = _inplace(__or__)
    __ixor__ = _inplace(__xor__)
    __ilshift__ = _inplace(__lshift__)
    __irshift__ = _inplace(__rshift__)

    __eq__ = _binary(operator.eq, "eq")
    __ne__ = _binary(operator.ne, "ne")
    __lt__ = _binary(operator.lt, "lt")
    __le__ = _binary(operator.le, "le")
    __gt__ = _binary(operator.gt, "gt")
    __ge__ = _binary(operator.ge, "ge")

    __neg__ = _unary(operator.neg, "neg")
    __pos__ = _unary(operator.pos, "pos")
    __invert__ = _unary(operator.invert, "invert")
    __abs__ = _unary(operator.abs, "abs")

    # -- conversions ---------------------------------------------------
    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        for row in iter(self._a):
            yield wrap(row)

    def __getitem__(self, index):
        return wrap(self._a[_index(index)])

    def __setitem__(self, index, value):
        if isinstance(value, Tensor):
            v = value._a
        elif is_scalar(value) or isinstance(value, (list, tuple)):
            v = value
        else:
            raise TypeError("cannot assign a %s to a Tensor item" % type(value).__name__)
        with quiet():
            self._a[_index(index)] = v

    def __contains__(self, value):
        v = _operand(value)
        if v is None:
            raise TypeError(
                "'in <Tensor>' requires a Tensor or a Python scalar, got "
                + type(value).__name__
            )
        with quiet():
            return bool(np.any(self._a == v))

    # -- attributes ----------------------------------------------------
    @property
    def shape(self):
        return tuple(int(d) for d in self._a.shape)

    @property
    def dtype(self):
        return _BY_NAME[self._a.dtype.name]

    @property
    def ndim(self):
        return int(self._a.ndim)

    @property
    def size(self):
        return int(self._a.size)

    @property
    def T(self):
        return wrap(self._a.T)

    # -- methods -------------------------------------------------------
    def sum(self, axis=None, keepdims=False):
        with quiet():
            return wrap(np.sum(self._a, axis=_axis(axis), keepdims=keepdims))

    def mean(self, axis=None, keepdims=False):
        with quiet():
            return wrap(np.mean(self._a, axis=_axis(axis), keepdims=keepdims))

    def max(self, axis=None, keepdims=False):
        with quiet():
            return wrap(np.max(self._a, axis=_axis(axis), keepdims=keepdims))

    def min(self, axis=None, keepdims=False):
        with quiet():
            return wrap(np.min(self._a, axis=_axis(axis), keepdims=keepdims))

    def prod(self, axis=None, keepdims=False):
        with quiet():
            return wrap(np.prod(self._a, axis=_axis(axis), keepdims=keepdims))

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return wrap(self._a.reshape(shape))

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if not axes:
            return wrap(self._a.transpose())
        return wrap(self._a.transpose(axes))

    def permute(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if not axes or axes == (None,):
            raise TypeError("permute() needs the axes")
        return wrap(self._a.transpose(axes))

    def astype(self, dtype):
        with quiet():
            return wrap(self._a.astype(np_dtype(dtype)))

    def item(self):
        return self._a.item()

"""Random-shape property tests of anfora's kernels against numpy itself.

Each test draws many cases from a numpy Generator seeded by (ANFORA_RANDOM_SEED, the op's
name, the case's index), so every case can be rerun alone: shapes of rank 0 to 4 with
dimensions 0 to 5 (empty tensors included), the five dtypes, broadcasting pairs, axes
(negative ones, tuples, keepdims), Python scalars, and inputs in every memory layout (numpy
arrays that are transposed, strided, reversed, broadcast or Fortran-ordered before
`anfora.tensor` copies them, or tensors made the same way by anfora's own view operations).
The op runs eagerly through `anfora.ops` (and, for a subset, inside `@anfora.jit`) and must
give numpy's dtype, shape and values (exactly where both compute the same IEEE operations,
within a few ulp for transcendental functions, within a summation-order bound for
reductions), or raise numpy's exception with numpy's message.

Deliberate differences from numpy are those of docs/language.md ("Tensors") and of
anfora-tensor's module doc; each is encoded below where a case meets it, citing the doc.

About 4000 cases in all, a few seconds. ANFORA_RANDOM_SCALE multiplies the number of cases
(e.g. 20 for a long run) and ANFORA_RANDOM_SEED changes them; a failure names the op, the
case's index and the seed, and shows every input with its layout."""

import math
import operator
import os
import warnings
import zlib

import numpy as np
import pytest

import anfora
from anfora import ops

SEED = int(os.environ.get("ANFORA_RANDOM_SEED", "1234"))
SCALE = float(os.environ.get("ANFORA_RANDOM_SCALE", "1"))

DTYPES = ("bool", "int32", "int64", "float32", "float64")
INTS = ("int32", "int64")
FLOATS = ("float32", "float64")
NUMERIC = INTS + FLOATS
# A few ulp: float32's eps is 1.19e-7, float64's 2.2e-16.
RTOL = {"float32": 1e-6, "float64": 1e-14}
EPS = {"float32": float(np.finfo(np.float32).eps), "float64": float(np.finfo(np.float64).eps)}


# ---------------------------------------------------------------------------------------------
# Cases and their reporting


def cases(name, n):
    """`(i, rng)` for the cases of `name`; case i's generator depends only on the seed, the
    name and i."""
    key = zlib.crc32(name.encode())
    for i in range(max(1, round(n * SCALE))):
        yield i, np.random.default_rng([SEED, key, i])


def show(v):
    """A short description of a case's argument."""
    if isinstance(v, Arg):
        return repr(v)
    if isinstance(v, np.ndarray):
        s = f"np.{v.dtype}{v.shape}"
        return s + (f"={v.tolist()!r}" if v.size <= 24 else "")
    if isinstance(v, (list, tuple)) and any(isinstance(x, (Arg, np.ndarray)) for x in v):
        inner = ", ".join(show(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner})"
    return repr(v)


class Case:
    """Records a case's inputs; a failure inside re-raises naming the op, the case index,
    the seed and every input."""

    def __init__(self, name, i):
        self.name, self.i, self.info = name, i, {}

    def note(self, **kw):
        self.info.update(kw)

    def __enter__(self):
        return self

    def __exit__(self, et, e, tb):
        if e is None or not isinstance(e, Exception):
            return False
        inputs = "\n  ".join(f"{k} = {show(v)}" for k, v in self.info.items())
        raise AssertionError(
            f"{self.name}: case {self.i} (ANFORA_RANDOM_SEED={SEED}) failed\n  {inputs}\n"
            f"{type(e).__name__}: {e}"
        ) from e


# ---------------------------------------------------------------------------------------------
# Random data


def rand_dim(rng, one=0.0):
    r = rng.random()
    if r < 0.08:
        return 0
    if r < 0.08 + one:
        return 1
    return int(rng.integers(1, 6))


def rand_shape(rng, rank=None, lo=0, hi=4, one=0.0):
    if rank is None:
        rank = int(rng.integers(lo, hi + 1))
    return tuple(rand_dim(rng, one) for _ in range(rank))


SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5])


def rand_values(rng, shape, dtype, lo=-20, hi=20, specials=0.1, extremes=0.0, scale=None):
    """Random values of `dtype`: ints in [lo, hi] (with the dtype's extremes at rate
    `extremes`), floats normal with a random scale and special values at rate `specials`."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind == "i":
        a = np.asarray(rng.integers(lo, hi + 1, size=shape)).astype(dtype)
        if extremes:
            info = np.iinfo(dtype)
            mask = np.asarray(rng.random(shape) < extremes)
            a[mask] = rng.choice([info.min, info.max, info.min + 1, info.max - 1], size=int(mask.sum()))
        return a
    if scale is None:
        scale = float(rng.choice([0.1, 1.0, 3.0, 30.0]))
    a = np.asarray(rng.standard_normal(shape) * scale)
    if specials:
        mask = np.asarray(rng.random(shape) < specials)
        a[mask] = rng.choice(SPECIALS, size=int(mask.sum()))
    return a.astype(dtype)


class Arg:
    """A case's array argument: `a` is the numpy array (possibly a non-contiguous view) and
    `t` the anfora tensor of the same values, made by `anfora.tensor(a)` or by anfora's own
    view operations on a tensor of a contiguous base."""

    def __init__(self, a, t, how):
        self.a, self.t, self.how = a, t, how

    def __repr__(self):
        vals = f"={self.a.tolist()!r}" if self.a.size <= 24 else ""
        return f"{self.a.dtype}{self.a.shape} via {self.how}{vals}"


def arg(rng, a, layouts=True):
    """`a`'s values (or, for a broadcast layout, values derived from `a`) in a random layout."""
    a = np.asarray(a)
    kinds = ["contiguous"]
    if layouts:
        kinds += ["fortran", "reversed", "strided"]
        if a.ndim >= 2:
            kinds.append("transposed")
        if a.ndim >= 1:
            kinds.append("broadcast")
    kind = str(rng.choice(kinds))
    side = "numpy" if kind == "contiguous" or rng.random() < 0.5 else "anfora"
    if kind == "contiguous":
        v = np.ascontiguousarray(a)
        return Arg(v, anfora.tensor(v), "contiguous")
    if kind == "fortran":
        v = np.asfortranarray(a)
        return Arg(v, anfora.tensor(v), "fortran order")
    if kind == "transposed":
        perm = tuple(int(p) for p in rng.permutation(a.ndim))
        inverse = tuple(int(p) for p in np.argsort(perm))
        base = np.ascontiguousarray(a.transpose(perm))
        v = base.transpose(inverse)
        t = ops.transpose(anfora.tensor(base), inverse) if side == "anfora" else anfora.tensor(v)
        return Arg(v, t, f"{side} transpose{inverse} of {base.shape}")
    if kind == "reversed":
        flip = tuple(slice(None, None, -1) for _ in range(a.ndim))
        base = np.ascontiguousarray(a[flip])
        v = base[flip]
        t = anfora.tensor(base)[flip] if side == "anfora" else anfora.tensor(v)
        return Arg(v, t, f"{side} [::-1, ...] of {base.shape}")
    if kind == "strided":
        steps = [int(rng.integers(1, 4)) for _ in range(a.ndim)]
        offs = [int(rng.integers(0, s)) for s in steps]
        base = np.full([d * s for d, s in zip(a.shape, steps)], 7, dtype=a.dtype)
        sl = tuple(slice(o, o + d * s, s) for o, s, d in zip(offs, steps, a.shape))
        base[sl] = a
        v = base[sl + (Ellipsis,)]  # (a 0-d array, not a numpy scalar, for rank 0)
        t = anfora.tensor(base)[sl] if side == "anfora" else anfora.tensor(v)
        return Arg(v, t, f"{side} slice {sl} of {base.shape}")
    # broadcast: the values of a's first element along some axes, repeated along them
    keep = tuple(slice(0, 1) if (d > 1 and rng.random() < 0.5) else slice(None) for d in a.shape)
    small = np.ascontiguousarray(a[keep])
    v = np.broadcast_to(small, a.shape)
    t = ops.broadcast_to(anfora.tensor(small), a.shape) if side == "anfora" else anfora.tensor(v)
    return Arg(v, t, f"{side} broadcast_to of {small.shape}")


def rand_arg(rng, shape, dtype, **kw):
    return arg(rng, rand_values(rng, shape, dtype, **kw))


def broadcast_shapes(rng, k=2, error=0.08):
    """`k` shapes that broadcast together (or, at rate `error`, likely do not)."""
    out = rand_shape(rng)
    shapes = []
    for _ in range(k):
        skip = int(rng.integers(0, len(out) + 1))
        shapes.append(tuple(1 if rng.random() < 0.3 else d for d in out[skip:]))
    if rng.random() < error:
        j = int(rng.integers(0, k))
        if shapes[j]:
            s = list(shapes[j])
            s[int(rng.integers(0, len(s)))] = int(rng.integers(2, 7))
            shapes[j] = tuple(s)
    return shapes


def rand_axis(rng, ndim, tuples=True, none=True, bad=0.05):
    """An axis argument: None, an int or a tuple of ints, negatives included; at rate `bad`
    one out of range or repeated."""
    r = rng.random()
    if none and r < 0.15:
        return None
    if r < bad and ndim >= 0:
        if tuples and ndim >= 1 and rng.random() < 0.5:
            a = int(rng.integers(-ndim, ndim))
            return (a, a % ndim)  # repeated
        return int(rng.choice([ndim, -ndim - 1, ndim + 2]))
    if ndim == 0:
        return () if tuples and rng.random() < 0.5 else None
    if not tuples or rng.random() < 0.5:
        return int(rng.integers(-ndim, ndim))
    k = int(rng.integers(0, ndim + 1))
    axes = rng.permutation(ndim)[:k]
    return tuple(int(a) - ndim if rng.random() < 0.3 else int(a) for a in axes)


def norm_axes(axis, ndim):
    """Axes made non-negative (those out of range kept as they are, for numpy to refuse)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(a % ndim if -ndim <= a < ndim else a for a in axis)


# ---------------------------------------------------------------------------------------------
# Comparisons


def quiet(fn):
    """`(value, None)` or `(None, exception)` of numpy's `fn()`, with its warnings silenced."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(), None
        except Exception as e:  # noqa: BLE001 - numpy's exception is what anfora must match
            return None, e


def numpy_class(e):
    """The builtin class anfora raises for numpy's exception `e`: numpy's own classes derive
    from builtin ones (AxisError from ValueError and IndexError, UFuncTypeError from
    TypeError), and anfora raises the first builtin class of their MRO with numpy's message."""
    return next(c for c in type(e).__mro__ if c.__module__ == "builtins")


def assert_raises_like(fn, np_err, message=True, compiled=False):
    """`fn()` raises numpy's exception class (and message). Compiled code may refuse at
    compile time instead (docs/language.md: an operation that cannot succeed for the known
    shapes and dtypes is a compile error, E0301)."""
    try:
        got = fn()
    except Exception as e:  # noqa: BLE001
        if compiled and isinstance(e, anfora.CompileError):
            return
        want = numpy_class(np_err)
        assert type(e) is want, f"raised {type(e).__name__}: {e}\n  numpy raised {type(np_err).__name__}: {np_err}"
        if message:
            assert str(e) == str(np_err), f"message {str(e)!r}\n  numpy's   {str(np_err)!r}"
        return
    raise AssertionError(f"returned {got!r}, numpy raised {type(np_err).__name__}: {np_err}")


def assert_raises(fn, cls, message=None, compiled=False):
    try:
        got = fn()
    except Exception as e:  # noqa: BLE001
        if compiled and isinstance(e, anfora.CompileError):
            return
        assert type(e) is cls, f"raised {type(e).__name__}: {e}, expected {cls.__name__}"
        if message is not None:
            assert str(e) == message, f"message {str(e)!r}, expected {message!r}"
        return
    raise AssertionError(f"returned {got!r}, expected {cls.__name__}")


def beyond_int64(*values):
    """A Python int operand beyond 64 bits: docs/language.md says "ints are 64-bit", so anfora
    raises OverflowError (with a message of its own) even where numpy would convert the int
    to a float or an object."""
    return any(type(v) is int and not -(2**63) <= v < 2**63 for v in values)


def int_overflows(want, *values):
    """A Python int operand that does not fit numpy's int result dtype: docs/language.md
    ("a Python int that does not fit the tensor's dtype raises OverflowError") holds for
    ops.where and ops.clip too, where numpy's where wraps it and its clip clamps it."""
    dtype = np.asarray(want).dtype
    if dtype.kind != "i":
        return False
    info = np.iinfo(dtype)
    return any(type(v) is int and not info.min <= v <= info.max for v in values)


def as_np(x):
    assert isinstance(x, anfora.Tensor), f"expected a Tensor, got {type(x).__name__}: {x!r}"
    return x.numpy()


def assert_close(g, w, rtol, atol=0.0):
    """`g` within `atol + rtol*|w|` of `w` (atol may be an array), NaNs at the same places,
    infinities equal."""
    g64 = g.astype(np.float64)
    w64 = w.astype(np.float64)
    nan_g, nan_w = np.isnan(g64), np.isnan(w64)
    bad = nan_g != nan_w
    inf = (np.isinf(g64) | np.isinf(w64)) & ~nan_g & ~nan_w
    bad |= inf & (g64 != w64)
    with np.errstate(all="ignore"):
        err = np.abs(g64 - w64)
        allowed = np.broadcast_to(atol + rtol * np.abs(w64), w64.shape)
    bad |= ~(nan_g | nan_w | inf) & (err > allowed)
    if bad.any():
        idx = list(zip(*np.nonzero(bad)))[:5] if bad.ndim else [()]
        lines = [
            f"    at {tuple(int(i) for i in ix)}: got {g[ix]!r}, numpy {w[ix]!r}, "
            f"error {err[ix]:.3g}, allowed {allowed[ix]:.3g}"
            for ix in idx
        ]
        raise AssertionError(f"{int(bad.sum())} of {bad.size} elements differ:\n" + "\n".join(lines))


def check(got, want, exact=False, rtol=None, atol=0.0):
    """`got` (a Tensor) has `want`'s dtype, shape and values."""
    g = as_np(got)
    w = np.asarray(want)
    assert g.dtype == w.dtype, f"dtype {g.dtype}, numpy's {w.dtype}"
    assert g.shape == w.shape, f"shape {g.shape}, numpy's {w.shape}"
    if exact or w.dtype.kind != "f":
        np.testing.assert_array_equal(g, w, strict=True)
    else:
        assert_close(g, w, RTOL[w.dtype.name] if rtol is None else rtol, atol)


def check_same(a, b):
    """Compiled and eager results are the same tensor, bit for bit."""
    x, y = as_np(a), as_np(b)
    assert x.dtype == y.dtype and x.shape == y.shape, f"{x.dtype}{x.shape} vs {y.dtype}{y.shape}"
    assert x.tobytes() == y.tobytes(), f"compiled {x!r}\n  eager    {y!r}"


def run_case(np_fn, af_fn, compare, message=True, jit_fn=None):
    """numpy's outcome against anfora's: an exception of the same class (and message), or a
    value `compare(got, want)` accepts. `jit_fn` runs the same case compiled."""
    want, err = quiet(np_fn)
    if err is not None:
        assert_raises_like(af_fn, err, message)
        if jit_fn is not None:
            assert_raises_like(jit_fn, err, message, compiled=True)
        return
    got = af_fn()
    compare(got, want)
    if jit_fn is not None:
        compiled = jit_fn()
        compare(compiled, want)
        check_same(compiled, got)


# ---------------------------------------------------------------------------------------------
# Elementwise functions of one tensor

SQRT_HALF = math.sqrt(0.5)


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x.copy()


def _erfc(x):
    return np.vectorize(math.erfc, otypes=[np.float64])(x) if x.size else x.copy()


def _sigmoid(x):
    with np.errstate(all="ignore"):
        return np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))


def _gelu(x):
    # x·Φ(x) with Φ(x) = erfc(-x/√2)/2, accurate for negative x as well
    return x * 0.5 * _erfc(-x * SQRT_HALF)


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


# name -> (anfora function, float64 reference, tolerance kind)
# "ulp": within RTOL of the float64 reference rounded to the dtype;
# "exact": equal to numpy's own result in the input's dtype.
UNARY = {
    "exp": (ops.exp, np.exp, "ulp"),
    "log": (ops.log, np.log, "ulp"),
    "log1p": (ops.log1p, np.log1p, "ulp"),
    "expm1": (ops.expm1, np.expm1, "ulp"),
    "tanh": (ops.tanh, np.tanh, "ulp"),
    "sin": (ops.sin, np.sin, "ulp"),
    "cos": (ops.cos, np.cos, "ulp"),
    "sqrt": (ops.sqrt, np.sqrt, "exact"),  # crates/anfora-tensor/src/lib.rs: sqrt is exact
    "rsqrt": (ops.rsqrt, lambda x: 1 / np.sqrt(x), "ulp"),
    "sigmoid": (ops.sigmoid, _sigmoid, "ulp"),
    "erf": (ops.erf, _erf, "ulp"),
    "softplus": (ops.softplus, lambda x: np.logaddexp(0.0, x), "ulp"),
    "silu": (ops.silu, lambda x: x * _sigmoid(x), "ulp"),
    "gelu": (ops.gelu, _gelu, "gelu"),
    "gelu_tanh": (lambda x: ops.gelu(x, approximate=True), _gelu_tanh, "gelu"),
}

# (Each compiled lambda is its own statement: anfora reads a lambda's source from the line it
# starts on, and a line such as `"exp": anfora.jit(lambda x: ...),` inside a dict display does
# not parse on its own.)
jit_exp = anfora.jit(lambda x: ops.exp(x))
jit_log1p = anfora.jit(lambda x: ops.log1p(x))
jit_tanh = anfora.jit(lambda x: ops.tanh(x))
jit_sigmoid = anfora.jit(lambda x: ops.sigmoid(x))
jit_erf = anfora.jit(lambda x: ops.erf(x))
jit_softplus = anfora.jit(lambda x: ops.softplus(x))
jit_gelu = anfora.jit(lambda x: ops.gelu(x))
jit_sqrt = anfora.jit(lambda x: ops.sqrt(x))
JIT_UNARY = {"exp": jit_exp, "log1p": jit_log1p, "tanh": jit_tanh, "sigmoid": jit_sigmoid,
             "erf": jit_erf, "softplus": jit_softplus, "gelu": jit_gelu, "sqrt": jit_sqrt}


@pytest.mark.parametrize("name", list(UNARY))
def test_float_functions(name):
    fn, ref, kind = UNARY[name]
    jit_fn = JIT_UNARY.get(name)
    for i, rng in cases(name, 60):
        with Case(name, i) as c:
            dtype = str(rng.choice(DTYPES, p=[0.1, 0.1, 0.1, 0.35, 0.35]))
            x = rand_arg(rng, rand_shape(rng), dtype)
            c.note(x=x)
            # Ints compute in float64 as in numpy; bools too (numpy gives float16:
            # docs/language.md "math functions of bool tensors ... give float64").
            out = x.a.dtype if x.a.dtype.kind == "f" else np.dtype(np.float64)
            x64 = x.a.astype(np.float64)
            with np.errstate(all="ignore"):
                want = np.asarray(ref(x64)).astype(out)
                if kind == "exact":
                    want = np.asarray(ref(x.a.astype(out)))
            compiled = jit_fn is not None and i < 6
            got = fn(x.t)
            # Results in the subnormal range have fewer bits: x·sigmoid(x) (silu, gelu) of a
            # subnormal sigmoid is exact only to |x| subnormal steps.
            tiny = float(np.finfo(out).smallest_subnormal) * 4 * (1 + np.abs(x64))
            if kind == "gelu":
                # x·Φ(x) loses the relative accuracy of Φ where 1 + erf cancels (x < 0), as
                # every implementation of the formula does: bound the error by |x| too.
                tol = RTOL[out.name]
                check(got, want, rtol=tol, atol=tol * np.abs(x64) + tiny)
            elif kind == "exact":
                check(got, want, exact=True)
            else:
                check(got, want, atol=tiny)
            if compiled:
                res = jit_fn(x.t)
                check_same(res, got)


def test_float_functions_of_python_scalars():
    """docs/language.md: math functions of a Python scalar return a Python float."""
    for i, rng in cases("scalar math", 30):
        with Case("scalar math", i) as c:
            name = str(rng.choice([n for n in UNARY if UNARY[n][2] != "gelu"]))
            v = float(rng.choice([rng.standard_normal() * 3, 0.0, -1.0, np.inf, -np.inf, np.nan]))
            if rng.random() < 0.3:
                v = int(rng.integers(-3, 4))
            c.note(op=name, v=v)
            fn, ref, kind = UNARY[name]
            got = fn(v)
            assert type(got) is float, f"{type(got).__name__}"
            with np.errstate(all="ignore"):
                want = float(ref(np.asarray(v, np.float64)))
            check(anfora.tensor(np.array(got)), np.array(want), exact=kind == "exact")


# numpy's own unary functions with exact results: name -> (anfora, numpy)
EXACT_UNARY = {
    "abs": (ops.abs, np.abs),
    "builtin abs": (abs, np.abs),
    "neg": (ops.neg, np.negative),
    "-x": (operator.neg, operator.neg),
    "~x": (operator.invert, operator.invert),
    "sign": (ops.sign, np.sign),
    "relu": (ops.relu, lambda x: np.maximum(x, np.zeros((), x.dtype))),
    "logical_not": (ops.logical_not, np.logical_not),
}


@pytest.mark.parametrize("name", list(EXACT_UNARY))
def test_exact_functions(name):
    fn, ref = EXACT_UNARY[name]
    for i, rng in cases(name, 50):
        with Case(name, i) as c:
            dtype = str(rng.choice(DTYPES))
            x = rand_arg(rng, rand_shape(rng), dtype, extremes=0.05)
            c.note(x=x)
            if name == "relu" and dtype == "bool":
                # docs/language.md: "ops.relu of a bool tensor is a TypeError (numpy has no relu)"
                assert_raises(lambda: fn(x.t), TypeError)
                continue
            run_case(lambda: ref(x.a), lambda: fn(x.t), lambda g, w: check(g, w, exact=True))


# ---------------------------------------------------------------------------------------------
# Binary operators and functions

BINARY = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
BINARY_OPS = {  # the same through anfora.ops
    "+": ops.add,
    "-": ops.sub,
    "*": ops.mul,
    "/": ops.div,
    "//": ops.floor_div,
    "%": ops.mod,
    "**": ops.pow,
    "==": ops.equal,
    "!=": ops.not_equal,
    "<": ops.less,
    "<=": ops.less_equal,
    ">": ops.greater,
    ">=": ops.greater_equal,
}
FUNCTIONS = {"maximum": (ops.maximum, np.maximum), "minimum": (ops.minimum, np.minimum)}
jit_add = anfora.jit(lambda a, b: a + b)
jit_mul = anfora.jit(lambda a, b: a * b)
jit_div = anfora.jit(lambda a, b: a / b)
jit_floordiv = anfora.jit(lambda a, b: a // b)
jit_mod = anfora.jit(lambda a, b: a % b)
jit_pow = anfora.jit(lambda a, b: a**b)
jit_lt = anfora.jit(lambda a, b: a < b)
jit_and = anfora.jit(lambda a, b: a & b)
jit_maximum = anfora.jit(lambda a, b: ops.maximum(a, b))
JIT_BINARY = {"+": jit_add, "*": jit_mul, "/": jit_div, "//": jit_floordiv, "%": jit_mod,
              "**": jit_pow, "<": jit_lt, "&": jit_and, "maximum": jit_maximum}


def rand_scalar(rng, name):
    """A Python scalar operand: bool, small int (sometimes one that fits no int32, or no
    int64) or float (sometimes special)."""
    r = rng.random()
    if r < 0.15:
        return bool(rng.random() < 0.5)
    if r < 0.6:
        if rng.random() < 0.08:
            return int(rng.choice([2**31, -(2**31) - 1, 2**40, 2**63, -(2**63) - 1]))
        lo = 0 if name == "**" else -5
        return int(rng.integers(lo, 6))
    if rng.random() < 0.15:
        return float(rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0]))
    return float(np.round(rng.standard_normal() * 4, int(rng.integers(0, 4))))


def rand_numpy_scalar(rng, name):
    """A numpy scalar operand (np.float64(2.5), np.int32(3), ...): a 0-d array to numpy's
    promotion, not a weak Python scalar, even np.float64, which subclasses float."""
    dtype = np.dtype(str(rng.choice(DTYPES)))
    v = rand_scalar(rng, name)
    if dtype.kind != "f" and (isinstance(v, float) and not math.isfinite(v) or abs(v) >= 2**31):
        v = 3
    return dtype.type(v)


def operand(rng, name, shape, dtype, divisor):
    """A tensor operand suited to the operator."""
    if name == "**":
        if divisor:  # exponents: small, seldom negative
            return rand_arg(rng, shape, dtype, lo=-1 if rng.random() < 0.2 else 0, hi=5, scale=1.0)
        return rand_arg(rng, shape, dtype, lo=-5, hi=5, extremes=0.02, scale=2.0)
    if divisor and name in ("//", "%", "/"):
        return rand_arg(rng, shape, dtype, lo=-6, hi=6)
    return rand_arg(rng, shape, dtype, extremes=0.05)


def binary_expectation(name, ref, xa, ya):
    """numpy's outcome, with anfora's documented differences applied."""
    want, err = quiet(lambda: ref(xa, ya))
    if err is not None:
        return None, err
    want = np.asarray(want)
    int_result = want.dtype.kind in "iub"
    if name in ("//", "%") and int_result and want.size:
        # docs/language.md: "integer and bool // and % by zero raise ZeroDivisionError" (numpy
        # returns 0 with a warning); with a non-empty result every divisor element is used.
        if np.any(np.asarray(ya) == 0):
            return None, ZeroDivisionError("integer division or modulo by zero")
    if want.dtype == np.int8:
        # docs/language.md: "results numpy gives as int8 (bool //, %, **, shifts) are int64"
        want = want.astype(np.int64)
    return want, None


@pytest.mark.parametrize("name", list(BINARY) + list(FUNCTIONS))
def test_binary(name):
    if name in FUNCTIONS:
        af, ref = FUNCTIONS[name]
        af_ops = None
    else:
        af = ref = BINARY[name]
        af_ops = BINARY_OPS.get(name)
    jit_fn = JIT_BINARY.get(name)
    exact = name not in ("**",)  # float ** is libm's pow (crates/anfora-tensor/src/lib.rs)
    for i, rng in cases(name, 60):
        with Case(name, i) as c:
            sa, sb = broadcast_shapes(rng)
            da, db = (str(d) for d in rng.choice(DTYPES, size=2))
            if rng.random() < 0.5:
                db = da
            x = operand(rng, name, sa, da, divisor=False)
            y = operand(rng, name, sb, db, divisor=True)
            xa, ya, xt, yt = x.a, y.a, x.t, y.t
            r = rng.random()
            if r < 0.2:
                ya = yt = rand_scalar(rng, name)
            elif r < 0.3:
                xa = xt = rand_scalar(rng, name)
            elif r < 0.4:
                ya = yt = rand_numpy_scalar(rng, name)
            c.note(x=x if xa is x.a else xa, y=y if ya is y.a else ya)
            # A Python int beyond int64 is an OverflowError with a message of anfora's own:
            # anfora's values are 64-bit (anfora-py's argument conversion).
            huge = beyond_int64(xa, ya)
            want, err = binary_expectation(name, ref, xa, ya)
            if huge:
                err = OverflowError()
            use_ops = af_ops is not None and rng.random() < 0.3
            fn = af_ops if use_ops else af
            c.note(via="anfora.ops" if use_ops else "operator")
            compiled = jit_fn is not None and i < 8
            if err is not None:
                # numpy's messages for operands it refuses are anfora's too (docs/language.md
                # "Errors at run time"), except ZeroDivisionError's, which is CPython's.
                assert_raises_like(lambda: fn(xt, yt), err, message=not huge)
                if compiled:
                    assert_raises_like(lambda: jit_fn(xt, yt), err, message=not huge, compiled=True)
                continue
            got = fn(xt, yt)
            check(got, want, exact=exact)
            if compiled:
                check_same(jit_fn(xt, yt), got)


def test_where():
    jit_where = anfora.jit(lambda c, x, y: ops.where(c, x, y))
    for i, rng in cases("where", 60):
        with Case("where", i) as c:
            sc, sx, sy = broadcast_shapes(rng, 3)
            cond = rand_arg(rng, sc, "bool" if rng.random() < 0.85 else str(rng.choice(NUMERIC)), lo=-1, hi=1)
            x = rand_arg(rng, sx, str(rng.choice(DTYPES)))
            y = rand_arg(rng, sy, str(rng.choice(DTYPES)))
            xa, xt, ya, yt = x.a, x.t, y.a, y.t
            if rng.random() < 0.25:
                xa = xt = rand_scalar(rng, "where")
            if rng.random() < 0.25:
                ya = yt = rand_scalar(rng, "where")
            c.note(cond=cond, x=x if xa is x.a else xa, y=y if ya is y.a else ya)
            want, err = quiet(lambda: np.where(cond.a, xa, ya))
            if beyond_int64(xa, ya) or (err is None and int_overflows(want, xa, ya)):
                assert_raises(lambda: ops.where(cond.t, xt, yt), OverflowError)
                continue
            run_case(
                lambda: np.where(cond.a, xa, ya),
                lambda: ops.where(cond.t, xt, yt),
                lambda g, w: check(g, w, exact=True),
                jit_fn=(lambda: jit_where(cond.t, xt, yt)) if i < 8 else None,
            )


def test_clip():
    jit_clip = anfora.jit(lambda x, lo, hi: ops.clip(x, lo, hi))
    for i, rng in cases("clip", 60):
        with Case("clip", i) as c:
            sx, slo, shi = broadcast_shapes(rng, 3)
            dx = str(rng.choice(NUMERIC + ("bool",), p=[0.2, 0.2, 0.25, 0.25, 0.1]))
            x = rand_arg(rng, sx, dx)

            def bound(shape, name):
                r = rng.random()
                if r < 0.2:
                    return None, None, None
                if r < 0.6:
                    v = rand_scalar(rng, name)
                    return v, v, v
                b = rand_arg(rng, shape, str(rng.choice(DTYPES)))
                return b, b.a, b.t

            lo, lo_a, lo_t = bound(slo, "min")
            hi, hi_a, hi_t = bound(shi, "max")
            c.note(x=x, min=lo, max=hi)
            if lo is None and hi is None:
                # docs/language.md: "a None bound left out", so no bound gives x (numpy 2's
                # clip is then np.positive(x), which refuses bools).
                exact(ops.clip(x.t, None, None), x.a)
                continue
            want, err = quiet(lambda: np.clip(x.a, lo_a, hi_a))
            if beyond_int64(lo_t, hi_t) or (err is None and int_overflows(want, lo_t, hi_t)):
                assert_raises(lambda: ops.clip(x.t, lo_t, hi_t), OverflowError)
                continue
            run_case(
                lambda: np.clip(x.a, lo_a, hi_a),
                lambda: ops.clip(x.t, lo_t, hi_t) if rng.random() < 0.5 else ops.clip(x.t, min=lo_t, max=hi_t),
                lambda g, w: check(g, w, exact=True),
                jit_fn=(lambda: jit_clip(x.t, lo_t, hi_t)) if i < 6 else None,
            )


def test_cast_and_astype():
    jit_cast = anfora.jit(lambda x, d: ops.cast(x, d))
    names = {"bool": anfora.bool_, "int32": anfora.int32, "int64": anfora.int64,
             "float32": anfora.float32, "float64": anfora.float64}
    for i, rng in cases("cast", 60):
        with Case("cast", i) as c:
            src, dst = (str(d) for d in rng.choice(DTYPES, size=2))
            shape = rand_shape(rng)
            if src in FLOATS and dst in INTS:
                # numpy leaves NaN, inf and out-of-range values undefined (a warning and a
                # platform-dependent value): only values that fit, fractions included.
                vals = np.asarray(rng.uniform(-1e4, 1e4, shape)).round(int(rng.integers(0, 3)))
                x = arg(rng, vals.astype(src))
            elif src == "float64" and dst == "float32":
                x = arg(rng, rand_values(rng, shape, src, scale=float(rng.choice([1.0, 1e30, 1e39, 1e-40]))))
            else:
                x = rand_arg(rng, shape, src, extremes=0.1)
            dtype = names[dst] if rng.random() < 0.5 else dst
            how = str(rng.choice(["ops.cast", "astype"]))
            c.note(x=x, dtype=dtype, via=how)
            with np.errstate(over="ignore"):
                want = x.a.astype(dst)
            got = ops.cast(x.t, dtype) if how == "ops.cast" else x.t.astype(dtype)
            check(got, want, exact=True)
            if i < 6:
                check_same(jit_cast(x.t, dtype), got)


# ---------------------------------------------------------------------------------------------
# Reductions

REDUCTIONS = {
    "sum": (ops.sum, np.sum),
    "mean": (ops.mean, np.mean),
    "max": (ops.max, np.max),
    "min": (ops.min, np.min),
    "prod": (ops.prod, np.prod),
}
jit_sum = anfora.jit(lambda x, axis, keepdims: ops.sum(x, axis=axis, keepdims=keepdims))
jit_max = anfora.jit(lambda x, axis, keepdims: ops.max(x, axis=axis, keepdims=keepdims))
jit_mean = anfora.jit(lambda x, axis, keepdims: ops.mean(x, axis=axis, keepdims=keepdims))
JIT_REDUCTIONS = {"sum": jit_sum, "max": jit_max, "mean": jit_mean}


def reduced_count(shape, axis):
    """Elements per output of a reduction over `axis` (a valid one)."""
    axes = norm_axes(axis, len(shape))
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def summation_tolerance(dtype, x, axis, keepdims, n):
    """The error bound of a sum computed in another order: a few ulp of the sum of the
    magnitudes, growing with the number of terms."""
    mag = np.abs(np.where(np.isfinite(x), x, 0).astype(np.float64))
    scale = np.sum(mag, axis=axis, keepdims=keepdims)
    return EPS[dtype] * (2 + n) * scale


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reductions(name):
    af, ref = REDUCTIONS[name]
    jit_fn = JIT_REDUCTIONS.get(name)
    for i, rng in cases(name, 60):
        with Case(name, i) as c:
            dtype = str(rng.choice(DTYPES))
            shape = rand_shape(rng)
            if name == "prod" and dtype in FLOATS:
                mag = rng.uniform(0.7, 1.4, shape) * rng.choice([-1, 1], shape)
                x = arg(rng, np.asarray(mag).astype(dtype))
            else:
                x = rand_arg(rng, shape, dtype, extremes=0.05 if name != "mean" else 0.0)
            axis = rand_axis(rng, len(shape))
            keepdims = bool(rng.random() < 0.4)
            how = str(rng.choice(["ops", "method"]))
            c.note(x=x, axis=axis, keepdims=keepdims, via=how)

            def anfora_fn():
                if how == "method":
                    return getattr(x.t, name)(axis=axis, keepdims=keepdims)
                return af(x.t, axis=axis, keepdims=keepdims)

            def compare(got, want):
                want = np.asarray(want)
                if want.dtype.kind != "f" or name in ("max", "min"):
                    return check(got, want, exact=True)
                n = reduced_count(shape, axis)
                tol = summation_tolerance(want.dtype.name, x.a, axis, keepdims, n)
                if name == "mean":
                    tol = tol / max(n, 1)
                if name == "prod":
                    return check(got, want, rtol=EPS[want.dtype.name] * (2 + n))
                return check(got, want, rtol=RTOL[want.dtype.name], atol=tol)

            run_case(
                lambda: ref(x.a, axis=axis, keepdims=keepdims),
                anfora_fn,
                compare,
                jit_fn=(lambda: jit_fn(x.t, axis, keepdims)) if jit_fn and i < 8 else None,
            )


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(name):
    af, ref = getattr(ops, name), getattr(np, name)
    jit_fn = anfora.jit(lambda x, axis, keepdims: ops.argmax(x, axis=axis, keepdims=keepdims))
    for i, rng in cases(name, 50):
        with Case(name, i) as c:
            dtype = str(rng.choice(DTYPES))
            shape = rand_shape(rng)
            # small ranges make ties: the first extreme wins, as in numpy
            x = rand_arg(rng, shape, dtype, lo=-3, hi=3, specials=0.15, extremes=0.05)
            axis = rand_axis(rng, len(shape), tuples=False)
            keepdims = bool(rng.random() < 0.4)
            c.note(x=x, axis=axis, keepdims=keepdims)
            run_case(
                lambda: ref(x.a, axis=axis, keepdims=keepdims),
                lambda: af(x.t, axis=axis, keepdims=keepdims),
                lambda g, w: check(g, w, exact=True),
                jit_fn=(lambda: jit_fn(x.t, axis, keepdims)) if name == "argmax" and i < 6 else None,
            )


def var_tolerance(dtype, x, axis, keepdims, divisor, n):
    """A variance computed in another summation order: a few ulp of the sum of the squares
    (which bounds the cancellation in the deviations), over the divisor."""
    mag = np.where(np.isfinite(x), x, 0).astype(np.float64)
    squares = np.sum(mag * mag, axis=axis, keepdims=keepdims)
    return EPS[dtype] * (4 + 2 * n) * squares / max(divisor, 1)


def test_var():
    jit_fn = anfora.jit(lambda x, axis, ddof, keepdims: ops.var(x, axis, ddof, keepdims))
    for i, rng in cases("var", 60):
        with Case("var", i) as c:
            dtype = str(rng.choice(DTYPES))
            shape = rand_shape(rng)
            x = rand_arg(rng, shape, dtype, specials=0.05)
            axis = rand_axis(rng, len(shape))
            # numpy divides by max(N - ddof, 0): a ddof of N or more gives inf or nan.
            ddof = [0, 1, 2, 1.5, 7][int(rng.integers(5))]
            keepdims = bool(rng.random() < 0.4)
            c.note(x=x, axis=axis, ddof=ddof, keepdims=keepdims)

            def compare(got, want):
                want = np.asarray(want)
                n = reduced_count(shape, axis)
                divisor = max(n - ddof, 0)
                tol = var_tolerance(want.dtype.name, x.a, axis, keepdims, divisor, n)
                check(got, want, rtol=RTOL[want.dtype.name], atol=tol)

            run_case(
                lambda: np.var(x.a, axis=axis, ddof=ddof, keepdims=keepdims),
                lambda: ops.var(x.t, axis=axis, ddof=ddof, keepdims=keepdims),
                compare,
                jit_fn=(lambda: jit_fn(x.t, axis, ddof, keepdims)) if i < 8 else None,
            )


def test_hardswish():
    jit_fn = anfora.jit(lambda x: ops.hardswish(x))
    for i, rng in cases("hardswish", 40):
        with Case("hardswish", i) as c:
            dtype = str(rng.choice(DTYPES, p=[0.05, 0.05, 0.1, 0.4, 0.4]))
            x = rand_arg(rng, rand_shape(rng), dtype, scale=float(rng.choice([1.0, 3.0])), specials=0.1)
            c.note(x=x)
            if x.a.dtype.kind != "f":
                # PyTorch's hardswish takes float tensors only.
                assert_raises(lambda: ops.hardswish(x.t), TypeError)
                continue
            # PyTorch's formula in the tensor's dtype (Python numbers are weak), step by step.
            with np.errstate(all="ignore"):
                want = x.a * np.minimum(np.maximum(x.a + 3, 0), 6) / 6
            got = ops.hardswish(x.t)
            check(got, want, exact=True)
            if i < 6:
                check_same(jit_fn(x.t), got)


# ---------------------------------------------------------------------------------------------
# The softmax family (float tensors only)


def ref_logsumexp(x, axis, keepdims):
    """scipy's logsumexp in float64: an infinite maximum is not subtracted, a reduction over
    no elements is -inf."""
    x = x.astype(np.float64)
    axes = norm_axes(axis, x.ndim)
    for a in axes:
        np.lib.array_utils.normalize_axis_index(a, x.ndim)  # numpy's AxisError
    if len(set(axes)) < len(axes):
        raise ValueError("duplicate value in 'axis'")
    if any(x.shape[a] == 0 for a in axes):
        shape = tuple(1 if a in axes else d for a, d in enumerate(x.shape)) if keepdims else tuple(
            d for a, d in enumerate(x.shape) if a not in axes
        )
        return np.full(shape, -np.inf), np.zeros(shape)
    m = np.max(x, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(all="ignore"):
        r = np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
    return (r if keepdims else np.squeeze(r, axis=axes)), m


def ref_softmax(x, axis, log):
    """PyTorch's softmax in x's dtype: the maximum subtracted (a row holding inf or only
    -inf is NaN)."""
    axes = norm_axes(axis, x.ndim)
    for a in axes:
        np.lib.array_utils.normalize_axis_index(a, x.ndim)  # numpy's AxisError
    if x.size == 0:
        return x.copy()
    m = np.max(x, axis=axes, keepdims=True)
    with np.errstate(all="ignore"):
        d = x - m
        s = np.sum(np.exp(d.astype(np.float64)), axis=axes, keepdims=True)
        if log:
            return (d - np.log(s)).astype(x.dtype)
        return (np.exp(d.astype(np.float64)) / s).astype(x.dtype)


def softmax_family_case(rng, c, name, tuples):
    dtype = str(rng.choice(DTYPES, p=[0.05, 0.05, 0.05, 0.45, 0.4]))
    shape = rand_shape(rng)
    x = rand_arg(rng, shape, dtype, specials=0.05)
    # docs/language.md: softmax and log_softmax take one axis; logsumexp an int, a tuple or None
    axis = rand_axis(rng, len(shape), tuples=tuples, none=tuples, bad=0.05 if dtype in FLOATS else 0.0)
    c.note(x=x, axis=axis)
    return x, axis


def test_logsumexp():
    jit_fn = anfora.jit(lambda x, axis, keepdims: ops.logsumexp(x, axis=axis, keepdims=keepdims))
    for i, rng in cases("logsumexp", 60):
        with Case("logsumexp", i) as c:
            x, axis = softmax_family_case(rng, c, "logsumexp", True)
            keepdims = bool(rng.random() < 0.4)
            c.note(keepdims=keepdims)
            if x.a.dtype.kind != "f":
                # docs/language.md, neural-network operations: float32 or float64 tensors;
                # another dtype is a TypeError.
                assert_raises(lambda: ops.logsumexp(x.t, axis=axis, keepdims=keepdims), TypeError)
                continue
            res, err = quiet(lambda: ref_logsumexp(x.a, axis, keepdims))
            if err is not None:
                # The neural-network operations raise numpy's exception classes with messages
                # of their own (docs/language.md).
                assert_raises_like(lambda: ops.logsumexp(x.t, axis=axis, keepdims=keepdims), err, message=False)
                continue
            want, m = res
            dt = x.a.dtype
            want = want.astype(dt)
            # log(sum) + max: a few ulp of the max and of the log of the sum's terms
            n = reduced_count(x.a.shape, axis)
            if not keepdims and m.shape != want.shape:
                m = np.squeeze(m, norm_axes(axis, x.a.ndim))
            atol = RTOL[dt.name] * np.abs(m) + EPS[dt.name] * (2 + n)
            got = ops.logsumexp(x.t, axis=axis, keepdims=keepdims)
            check(got, want, atol=atol)
            if i < 6:
                check_same(jit_fn(x.t, axis, keepdims), got)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax(name):
    af = getattr(ops, name)
    jit_fn = anfora.jit(lambda x, axis: ops.softmax(x, axis=axis))
    for i, rng in cases(name, 50):
        with Case(name, i) as c:
            x, axis = softmax_family_case(rng, c, name, False)
            if axis is None:  # (a 0-d x)
                axis = -1
                c.note(axis=axis)
            if x.a.dtype.kind != "f":
                # docs/language.md, neural-network operations: another dtype is a TypeError
                assert_raises(lambda: af(x.t, axis=axis), TypeError)
                continue
            want, err = quiet(lambda: ref_softmax(x.a, axis, name == "log_softmax"))
            if err is not None:
                # numpy's exception class, a message of anfora's own (docs/language.md)
                assert_raises_like(lambda: af(x.t, axis=axis), err, message=False)
                continue
            dt = x.a.dtype.name
            n = reduced_count(x.a.shape, axis) if x.a.size else 0
            if name == "softmax":
                # each exp within a few ulp, the sum within the summation bound
                tol = RTOL[dt] + EPS[dt] * (2 + n)
                # (a result in the subnormal range is exact to a few of its steps)
                tiny = 4 * float(np.finfo(x.a.dtype).smallest_subnormal)
                check(af(x.t, axis=axis), want, rtol=tol, atol=tiny)
            else:
                # (x - max) - log(sum): ulps of both terms
                axes = norm_axes(axis, x.a.ndim)
                with np.errstate(all="ignore"):
                    top = np.max(x.a, axis=axes, keepdims=True) if x.a.size else 0
                    mag = np.abs(x.a - top).astype(np.float64)
                atol = (RTOL[dt] + EPS[dt] * (2 + n)) * (1 + np.where(np.isfinite(mag), mag, 0))
                check(af(x.t, axis=axis), want, rtol=RTOL[dt], atol=atol)
            if name == "softmax" and i < 6:
                check_same(jit_fn(x.t, axis), af(x.t, axis=axis))


# ---------------------------------------------------------------------------------------------
# matmul


def test_matmul():
    jit_mm = anfora.jit(lambda a, b: a @ b)
    for i, rng in cases("matmul", 80):
        with Case("matmul", i) as c:
            n, k, m = (rand_dim(rng) for _ in range(3))
            ba, bb = broadcast_shapes(rng, 2, error=0.1)
            ba, bb = ba[: int(rng.integers(0, 3))], bb[: int(rng.integers(0, 3))]
            sa = (k,) if rng.random() < 0.2 else ba + (n, k)
            sb = (k,) if rng.random() < 0.2 else bb + (k, m)
            r = rng.random()
            if r < 0.08:  # the core dimensions disagree
                sb = sb[:-2] + (k + 1,) + sb[-1:] if len(sb) >= 2 else (k + 1,)
            elif r < 0.12:
                sa = ()
            da = str(rng.choice(DTYPES, p=[0.1, 0.15, 0.15, 0.3, 0.3]))
            db = da if rng.random() < 0.7 else str(rng.choice(DTYPES))
            x = rand_arg(rng, sa, da, lo=-9, hi=9, specials=0.03)
            y = rand_arg(rng, sb, db, lo=-9, hi=9, specials=0.03)
            c.note(a=x, b=y)
            how = str(rng.choice(["@", "ops.matmul"]))

            def compare(got, want):
                want = np.asarray(want)
                if want.dtype.kind != "f":
                    return check(got, want, exact=True)
                fa = np.abs(np.where(np.isfinite(x.a), x.a, 0).astype(np.float64))
                fb = np.abs(np.where(np.isfinite(y.a), y.a, 0).astype(np.float64))
                atol = EPS[want.dtype.name] * (2 + k) * np.matmul(fa, fb)
                check(got, want, rtol=RTOL[want.dtype.name], atol=atol)

            run_case(
                lambda: np.matmul(x.a, y.a),
                (lambda: x.t @ y.t) if how == "@" else (lambda: ops.matmul(x.t, y.t)),
                compare,
                jit_fn=(lambda: jit_mm(x.t, y.t)) if i < 8 else None,
            )


# ---------------------------------------------------------------------------------------------
# Shape and array functions (exact)


def exact(g, w):
    check(g, w, exact=True)


def check_parts(got, want):
    assert isinstance(got, tuple), f"expected a tuple, got {type(got).__name__}"
    assert len(got) == len(want), f"{len(got)} parts, numpy gives {len(want)}"
    for j, (g, w) in enumerate(zip(got, want)):
        try:
            exact(g, w)
        except AssertionError as e:
            raise AssertionError(f"part {j}: {e}") from None


def factor_shape(rng, size):
    """A random shape of `size` elements (dimension 0 when size is 0)."""
    rank = int(rng.integers(0 if size == 1 else 1, 5))
    if size == 0:
        dims = [rand_dim(rng) for _ in range(rank)]
        dims[int(rng.integers(0, rank))] = 0
        return dims
    dims = [1] * rank
    n = size
    p = 2
    while n > 1:
        while n % p == 0:
            dims[int(rng.integers(0, rank))] *= p
            n //= p
        p += 1
    return dims


def test_reshape():
    jit_reshape = anfora.jit(lambda x, s: ops.reshape(x, s))
    for i, rng in cases("reshape", 60):
        with Case("reshape", i) as c:
            x = rand_arg(rng, rand_shape(rng), str(rng.choice(DTYPES)))
            shape = factor_shape(rng, x.a.size)
            r = rng.random()
            if shape and r < 0.3:
                shape[int(rng.integers(0, len(shape)))] = -1
            elif r < 0.4:
                shape.append(int(rng.integers(2, 4)))  # usually the wrong size
            elif r < 0.45 and shape:
                shape[0] = -1
                shape.append(-1)
            shape = tuple(shape)
            how = str(rng.choice(["ops", "method tuple", "method args"]))
            c.note(x=x, shape=shape, via=how)

            def af():
                if how == "ops":
                    return ops.reshape(x.t, shape)
                if how == "method tuple":
                    return x.t.reshape(shape)
                return x.t.reshape(*shape)

            run_case(lambda: x.a.reshape(shape), af, exact,
                     jit_fn=(lambda: jit_reshape(x.t, shape)) if i < 6 else None)


def test_transpose():
    jit_t = anfora.jit(lambda x, axes: ops.transpose(x, axes))
    for i, rng in cases("transpose", 60):
        with Case("transpose", i) as c:
            x = rand_arg(rng, rand_shape(rng), str(rng.choice(DTYPES)))
            nd = x.a.ndim
            r = rng.random()
            if r < 0.15:
                axes = None
            else:
                axes = [int(a) - nd if rng.random() < 0.3 else int(a) for a in rng.permutation(nd)]
                if r < 0.2 and nd:
                    axes[0] = axes[-1] if nd > 1 else nd  # repeated or out of range
                elif r < 0.25:
                    axes = axes[1:] if nd else [0]  # the wrong length
                axes = tuple(axes)
            how = str(rng.choice(["ops", "method", ".T"]))
            if how == ".T":
                axes = None
            c.note(x=x, axes=axes, via=how)

            def af():
                if how == "ops":
                    return ops.transpose(x.t, axes)
                if how == ".T":
                    return x.t.T
                if axes == ():  # (x.transpose() is the reversed axes, not axes ())
                    return ops.transpose(x.t, axes)
                return x.t.transpose() if axes is None else x.t.transpose(*axes)

            run_case(lambda: np.transpose(x.a, axes), af, exact,
                     jit_fn=(lambda: jit_t(x.t, axes)) if i < 6 and how == "ops" else None)


def test_squeeze_expand_dims():
    for i, rng in cases("squeeze", 50):
        with Case("squeeze", i) as c:
            x = rand_arg(rng, rand_shape(rng, one=0.5), str(rng.choice(DTYPES)))
            axis = rand_axis(rng, x.a.ndim)
            c.note(x=x, axis=axis)
            run_case(lambda: np.squeeze(x.a, axis=axis), lambda: ops.squeeze(x.t, axis=axis), exact)
    for i, rng in cases("expand_dims", 50):
        with Case("expand_dims", i) as c:
            x = rand_arg(rng, rand_shape(rng, hi=3), str(rng.choice(DTYPES)))
            k = int(rng.integers(1, 3))
            out = x.a.ndim + k
            axis = tuple(int(a) - out if rng.random() < 0.3 else int(a) for a in rng.permutation(out)[:k])
            if rng.random() < 0.08:
                axis = axis + (out,)  # out of range
            elif rng.random() < 0.08:
                axis = axis + axis[:1]  # repeated
            if len(axis) == 1 and rng.random() < 0.5:
                axis = axis[0]
            c.note(x=x, axis=axis)
            run_case(lambda: np.expand_dims(x.a, axis), lambda: ops.expand_dims(x.t, axis), exact)


def test_broadcast_to():
    jit_b = anfora.jit(lambda x, s: ops.broadcast_to(x, s))
    for i, rng in cases("broadcast_to", 50):
        with Case("broadcast_to", i) as c:
            x = rand_arg(rng, rand_shape(rng, hi=3, one=0.4), str(rng.choice(DTYPES)))
            shape = rand_shape(rng, hi=2) + tuple(
                rand_dim(rng) if d == 1 and rng.random() < 0.7 else d for d in x.a.shape
            )
            if rng.random() < 0.1 and shape:
                shape = shape[:-1] + (shape[-1] + 1,)
            c.note(x=x, shape=shape)
            run_case(lambda: np.broadcast_to(x.a, shape), lambda: ops.broadcast_to(x.t, shape), exact,
                     jit_fn=(lambda: jit_b(x.t, shape)) if i < 6 else None)


def joinable(rng, stack):
    """1 to 4 tensors of one rank whose shapes agree except along `axis` (stack: agree
    everywhere), sometimes not; dtypes mixed."""
    rank = int(rng.integers(0 if stack else 1, 4)) if rng.random() > 0.05 else 0
    base = list(rand_shape(rng, rank))
    axis = int(rng.integers(-rank - (1 if stack else 0), rank + (1 if stack else 0))) if rank or stack else 0
    k = int(rng.integers(1, 5)) if rng.random() > 0.03 else 0
    dtype = str(rng.choice(DTYPES))
    xs = []
    for _ in range(k):
        s = list(base)
        if not stack and rank:
            s[axis] = rand_dim(rng)
        if rng.random() < 0.05 and s:
            s[int(rng.integers(0, len(s)))] += 1
        if rng.random() < 0.03:
            s = s + [1]
        xs.append(rand_arg(rng, tuple(s), dtype if rng.random() < 0.7 else str(rng.choice(DTYPES))))
    if not stack and rng.random() < 0.1:
        axis = None
    return xs, axis


def test_concat_stack():
    jit_concat = anfora.jit(lambda xs, axis: ops.concat(xs, axis))
    for name, npf, af in (("concat", np.concatenate, ops.concat), ("stack", np.stack, ops.stack)):
        for i, rng in cases(name, 50):
            with Case(name, i) as c:
                xs, axis = joinable(rng, name == "stack")
                seq = list if rng.random() < 0.5 else tuple
                c.note(tensors=xs, axis=axis, sequence=seq.__name__)
                run_case(
                    lambda: npf([x.a for x in xs], axis=axis),
                    lambda: af(seq(x.t for x in xs), axis=axis),
                    exact,
                    jit_fn=(lambda: jit_concat(tuple(x.t for x in xs), axis))
                    if name == "concat" and i < 6 and xs else None,
                )


def test_split():
    for i, rng in cases("split", 50):
        with Case("split", i) as c:
            x = rand_arg(rng, rand_shape(rng, lo=1), str(rng.choice(DTYPES)))
            nd = x.a.ndim
            axis = int(rng.integers(-nd, nd))
            size = x.a.shape[axis]
            if rng.random() < 0.5:
                divisors = [d for d in range(1, 6) if size % d == 0]
                spec = int(rng.choice(divisors)) if rng.random() < 0.85 else int(rng.integers(1, 5))
            else:
                spec = [int(v) for v in rng.integers(-2, size + 3, size=int(rng.integers(0, 4)))]
                if rng.random() < 0.7:
                    spec = sorted(spec)
                if rng.random() < 0.3:
                    spec = tuple(spec)
            c.note(x=x, indices_or_sections=spec, axis=axis)
            run_case(lambda: tuple(np.split(x.a, spec, axis=axis)),
                     lambda: ops.split(x.t, spec, axis=axis), check_parts)


def test_take():
    jit_take = anfora.jit(lambda x, idx, axis: ops.take(x, idx, axis))
    for i, rng in cases("take", 60):
        with Case("take", i) as c:
            x = rand_arg(rng, rand_shape(rng), str(rng.choice(DTYPES)))
            nd = x.a.ndim
            axis = None if nd == 0 or rng.random() < 0.3 else int(rng.integers(-nd, nd))
            size = x.a.size if axis is None else x.a.shape[axis]
            lo, hi = -size, size - 1
            if rng.random() < 0.1 or size == 0:
                lo, hi = -size - 2, size + 1  # out of bounds
            if rng.random() < 0.2:
                idx_a = idx_t = int(rng.integers(lo, hi + 1)) if hi >= lo else 0
            else:
                ishape = rand_shape(rng, hi=2)
                vals = rng.integers(lo, hi + 1, size=ishape) if hi >= lo else np.zeros(ishape)
                idx = arg(rng, np.asarray(vals).astype(str(rng.choice(INTS))))
                idx_a, idx_t = idx.a, idx.t
            c.note(x=x, indices=idx_t if isinstance(idx_t, int) else idx, axis=axis)
            run_case(lambda: np.take(x.a, idx_a, axis=axis), lambda: ops.take(x.t, idx_t, axis=axis), exact,
                     jit_fn=(lambda: jit_take(x.t, idx_t, axis)) if i < 6 else None)


def test_one_hot():
    for i, rng in cases("one_hot", 50):
        with Case("one_hot", i) as c:
            depth = int(rng.integers(0, 6))
            idx = rand_arg(rng, rand_shape(rng, hi=3), str(rng.choice(INTS)), lo=-2, hi=depth + 1)
            dtype = None if rng.random() < 0.3 else str(rng.choice(DTYPES))
            c.note(indices=idx, depth=depth, dtype=dtype)
            # docs/language.md: an index outside [0, depth) gives a row of zeros; float32 default
            want = (idx.a[..., None] == np.arange(depth)).astype(dtype or "float32")
            got = ops.one_hot(idx.t, depth) if dtype is None else ops.one_hot(idx.t, depth, dtype)
            exact(got, want)


def test_pad():
    jit_pad = anfora.jit(lambda x, pw, v: ops.pad(x, pw, constant_values=v))
    for i, rng in cases("pad", 60):
        with Case("pad", i) as c:
            dtype = str(rng.choice(DTYPES))
            x = rand_arg(rng, rand_shape(rng, hi=3), dtype)
            nd = x.a.ndim
            form = str(rng.choice(["int", "(n,)", "pair", "per axis"]))
            lo = -1 if rng.random() < 0.05 else 0
            ints = lambda: int(rng.integers(lo, 3))  # noqa: E731
            pw = {
                "int": ints(),
                "(n,)": (ints(),),
                "pair": (ints(), ints()),
                "per axis": tuple((ints(), ints()) for _ in range(nd)),
            }[form]
            if dtype in FLOATS:
                value = float(rng.choice([0.0, 1.5, -2.25, np.inf, np.nan]))
            elif dtype == "bool":
                value = bool(rng.random() < 0.5)
            else:
                value = int(rng.integers(-5, 6)) if rng.random() < 0.8 else float(rng.choice([2.7, -1.5]))
            c.note(x=x, pad_width=pw, value=value)
            # docs/language.md: numpy's pad in constant mode, value cast to x's dtype
            run_case(
                lambda: np.pad(x.a, pw, mode="constant", constant_values=value),
                lambda: ops.pad(x.t, pw, constant_values=value),
                exact,
                jit_fn=(lambda: jit_pad(x.t, pw, value)) if i < 6 else None,
            )


def test_pad_copying_modes():
    # Widths up to 7 exceed most axes here: reflect and symmetric then reflect again, as numpy.
    for i, rng in cases("pad_modes", 60):
        with Case("pad_modes", i) as c:
            dtype = str(rng.choice(DTYPES))
            x = rand_arg(rng, rand_shape(rng, hi=3), dtype)
            mode = str(rng.choice(["edge", "reflect", "symmetric"]))
            pw = tuple((int(rng.integers(0, 8)), int(rng.integers(0, 8))) for _ in range(x.a.ndim))
            c.note(x=x, pad_width=pw, mode=mode)
            run_case(
                lambda: np.pad(x.a, pw, mode=mode),
                lambda: ops.pad(x.t, pw, mode),
                exact,
            )


# ---------------------------------------------------------------------------------------------
# Indexing


def rand_index(rng, ndim):
    """A basic index: ints (negative, sometimes out of range), slices (negative steps, bounds
    past the ends), None and one Ellipsis; sometimes too many entries or two Ellipses."""
    items = []
    n = ndim + (1 if rng.random() < 0.05 else 0)
    used = int(rng.integers(0, n + 1))
    for _ in range(used):
        r = rng.random()
        if r < 0.3:
            items.append(int(rng.integers(-6, 6)))
        else:
            bound = lambda: None if rng.random() < 0.3 else int(rng.integers(-7, 8))  # noqa: E731
            step = None if rng.random() < 0.3 else int(rng.choice([-3, -2, -1, 1, 2, 3] + ([0] if rng.random() < 0.05 else [])))
            items.append(slice(bound(), bound(), step))
    for _ in range(int(rng.integers(0, 3))):
        items.insert(int(rng.integers(0, len(items) + 1)), None)
    if rng.random() < 0.4:
        items.insert(int(rng.integers(0, len(items) + 1)), Ellipsis)
        if rng.random() < 0.05:
            items.insert(int(rng.integers(0, len(items) + 1)), Ellipsis)
    if len(items) == 1 and rng.random() < 0.5:
        return items[0]
    return tuple(items)


index_a = lambda x: x[..., ::-2]  # noqa: E731
index_b = lambda x: x[None, ..., 1:]  # noqa: E731
index_c = lambda x: x[-1]  # noqa: E731
index_d = lambda x: x[::2, ..., None, -1]  # noqa: E731
index_e = lambda x: x[1:-1, ::-1]  # noqa: E731
JIT_INDEX = [(1, index_a), (1, index_b), (1, index_c), (2, index_d), (2, index_e)]


def test_indexing():
    for i, rng in cases("indexing", 120):
        with Case("indexing", i) as c:
            x = rand_arg(rng, rand_shape(rng), str(rng.choice(DTYPES)))
            index = rand_index(rng, x.a.ndim)
            c.note(x=x, index=index)
            run_case(lambda: x.a[index], lambda: x.t[index], exact)
    for j, (rank, fn) in enumerate(JIT_INDEX):
        jf = anfora.jit(fn)
        for i, rng in cases(f"jit indexing {j}", 4):
            with Case(f"jit indexing {j}", i) as c:
                x = rand_arg(rng, rand_shape(rng, lo=rank), str(rng.choice(DTYPES)))
                c.note(x=x)
                run_case(lambda: fn(x.a), lambda: fn(x.t), exact, jit_fn=lambda: jf(x.t))


def test_numpy_scalars_keep_their_dtype():
    """A numpy scalar is a 0-d array of its dtype, np.float64 (a subclass of Python's float)
    included: as a tensor and as an operand (not a weak Python scalar, NEP 50)."""
    for i, rng in cases("numpy scalars", 20):
        with Case("numpy scalars", i) as c:
            dtype = np.dtype(str(rng.choice(DTYPES)))
            v = dtype.type(rand_values(rng, (), dtype, specials=0.0))
            x = rand_arg(rng, rand_shape(rng, hi=2), str(rng.choice(DTYPES)))
            c.note(v=v, x=x)
            exact(anfora.tensor(v), np.asarray(v))
            run_case(lambda: x.a * v, lambda: x.t * v, exact)
            # (`v - x.t` would be numpy's: a numpy scalar's operators convert the tensor)
            run_case(lambda: v - x.a, lambda: ops.sub(v, x.t), exact)

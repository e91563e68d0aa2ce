"""`mindspore.common.initializer`: the initializers of Parameters and of `Tensor(init=...)`,
and `initializer(init, shape, dtype)`. Values are drawn when the tensor is made (MindSpore
draws them lazily, at `init_data()` or the first use), from the generator `ms.set_seed`
seeds.

Fans follow MindSpore's (and PyTorch's) rule: for a shape (out, in, *kernel),
`fan_in = in · prod(kernel)` and `fan_out = out · prod(kernel)`; a 1-D shape has both equal
to its length."""

import math as _math

import numpy as _np

from .. import _random

__all__ = ["Initializer", "Zero", "One", "Constant", "Normal", "Uniform", "TruncatedNormal",
           "XavierUniform", "XavierNormal", "HeUniform", "HeNormal", "Identity", "initializer"]


def _fans(shape):
    if len(shape) == 0:
        raise ValueError("an initializer that depends on fans needs a shape of 1 dimension or more")
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = int(_np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _gain(nonlinearity, param):
    """PyTorch's and MindSpore's `calculate_gain`."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return _math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return _math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError(f"unknown nonlinearity {nonlinearity!r}")


class Initializer:
    """Fills an array of a given shape; subclasses define `_values(shape, rng)`."""

    def __call__(self, shape, dtype=_np.float32):
        shape = tuple(int(d) for d in shape)
        return _np.asarray(self._values(shape, _random.generator())).astype(dtype)

    def _values(self, shape, rng):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


class Zero(Initializer):
    def _values(self, shape, rng):
        return _np.zeros(shape)


class One(Initializer):
    def _values(self, shape, rng):
        return _np.ones(shape)


class Constant(Initializer):
    def __init__(self, value):
        self.value = value

    def _values(self, shape, rng):
        return _np.full(shape, self.value)


class Normal(Initializer):
    """N(mean, sigma²)."""

    def __init__(self, sigma=0.01, mean=0.0):
        self.sigma, self.mean = float(sigma), float(mean)

    def _values(self, shape, rng):
        return rng.normal(self.mean, self.sigma, shape)


class Uniform(Initializer):
    """U(-scale, scale)."""

    def __init__(self, scale=0.07):
        self.scale = float(scale)

    def _values(self, shape, rng):
        return rng.uniform(-self.scale, self.scale, shape)


class TruncatedNormal(Initializer):
    """N(mean, sigma²) restricted to [a, b]: the bounds are values, not multiples of sigma
    (checked against MindSpore 2.7.2: `sigma=0.2` with the default bounds ±2 is a plain
    normal in effect). Bounds holding under 1 % of the distribution are refused."""

    def __init__(self, sigma=0.01, mean=0.0, a=-2.0, b=2.0):
        self.sigma, self.mean, self.a, self.b = float(sigma), float(mean), float(a), float(b)
        if not self.a < self.b:
            raise ValueError(f"TruncatedNormal: a ({a}) must be below b ({b})")
        if self.sigma < 0:
            raise ValueError("sigma < 0")

    def _values(self, shape, rng):
        import math

        count = int(_np.prod(shape, dtype=_np.int64))
        if self.sigma == 0:
            if not self.a <= self.mean <= self.b:
                raise ValueError("TruncatedNormal: sigma 0 with the mean outside [a, b]")
            return _np.full(shape, self.mean)
        cdf = [0.5 * math.erfc(-(v - self.mean) / (self.sigma * math.sqrt(2)))
               for v in (self.a, self.b)]
        kept = cdf[1] - cdf[0]
        if kept < 0.01:
            raise ValueError(f"TruncatedNormal: [{self.a}, {self.b}] holds {kept:.2g} of "
                             f"N({self.mean}, {self.sigma}²); anfora draws by rejection and "
                             "refuses bounds that hold under 1 %")
        out = _np.empty(0)
        while out.size < count:
            need = count - out.size
            draw = rng.normal(self.mean, self.sigma, int(need / kept * 1.1) + 16)
            out = _np.concatenate([out, draw[(draw >= self.a) & (draw <= self.b)][:need]])
        return out.reshape(shape)


class XavierUniform(Initializer):
    """U(±gain·sqrt(6 / (fan_in + fan_out)))."""

    def __init__(self, gain=1):
        self.gain = float(gain)

    def _values(self, shape, rng):
        fan_in, fan_out = _fans(shape)
        bound = self.gain * _math.sqrt(6.0 / (fan_in + fan_out))
        return rng.uniform(-bound, bound, shape)


class XavierNormal(Initializer):
    """N(0, (gain·sqrt(2 / (fan_in + fan_out)))²)."""

    def __init__(self, gain=1):
        self.gain = float(gain)

    def _values(self, shape, rng):
        fan_in, fan_out = _fans(shape)
        return rng.normal(0.0, self.gain * _math.sqrt(2.0 / (fan_in + fan_out)), shape)


class _He(Initializer):
    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        if mode not in ("fan_in", "fan_out"):
            raise ValueError(f"mode must be 'fan_in' or 'fan_out', not {mode!r}")
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _std(self, shape):
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        return _gain(self.nonlinearity, self.negative_slope) / _math.sqrt(fan)


class HeUniform(_He):
    """U(±sqrt(3)·gain / sqrt(fan)), gain from the nonlinearity (leaky ReLU by default)."""

    def _values(self, shape, rng):
        bound = _math.sqrt(3.0) * self._std(shape)
        return rng.uniform(-bound, bound, shape)


class HeNormal(_He):
    """N(0, (gain / sqrt(fan))²)."""

    def _values(self, shape, rng):
        return rng.normal(0.0, self._std(shape), shape)


class Identity(Initializer):
    """The identity matrix (2-D shapes)."""

    def _values(self, shape, rng):
        if len(shape) != 2:
            raise ValueError(f"Identity initializes 2-D shapes, not {len(shape)}-D")
        return _np.eye(*shape)


_NAMES = {
    "zeros": Zero, "zero": Zero, "ones": One, "one": One, "normal": Normal, "uniform": Uniform,
    "truncatednormal": TruncatedNormal, "xavieruniform": XavierUniform,
    "xaviernormal": XavierNormal, "heuniform": HeUniform, "henormal": HeNormal,
    "identity": Identity, "eye": Identity,
}


def by_name(name):
    """The initializer a name stands for (case and underscores ignored: `"xavier_uniform"`,
    `"XavierUniform"`)."""
    key = name.lower().replace("_", "")
    if key not in _NAMES:
        raise ValueError(f"For 'initializer', the class corresponding to {name!r} was not found "
                         f"(known: {', '.join(sorted(_NAMES))})")
    return _NAMES[key]()


def values(init, shape, dtype=_np.float32):
    """The array `init` gives for `shape`: an Initializer, a name, a number, or an array or
    Tensor of that shape."""
    shape = tuple(int(d) for d in shape)
    if isinstance(init, str):
        init = by_name(init)
    if isinstance(init, Initializer):
        return init(shape, dtype)
    if isinstance(init, (bool, int, float)):
        return _np.full(shape, init, dtype=dtype)
    arr = _np.asarray(init)
    if arr.shape != shape:
        raise ValueError(f"an initial value of shape {arr.shape} for shape {shape}")
    return arr.astype(dtype)


def initializer(init, shape=None, dtype=None):
    """MindSpore's `initializer(init, shape, dtype=mstype.float32)`: a Tensor of `shape` filled
    by `init`."""
    from .tensor import Tensor
    from . import dtype as mstype

    if shape is None:
        if not hasattr(init, "shape"):
            raise ValueError("initializer needs a shape unless init is a Tensor or an array")
        shape = init.shape
    if isinstance(shape, int):
        shape = (shape,)
    dtype = mstype.float32 if dtype is None else dtype
    return Tensor(values(init, shape, _numpy_dtype(dtype)), dtype)


def _numpy_dtype(dtype):
    name = getattr(dtype, "name", None)
    if name == "bfloat16":
        return _np.float32  # numpy has none: drawn in float32, cast by Tensor
    return _np.dtype(name if isinstance(name, str) else dtype)

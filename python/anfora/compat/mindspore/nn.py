"""`mindspore.nn`: anfora's Cells, layers, losses and optimizers (already MindSpore's: Cell
and `construct`, `SequentialCell`, `Conv2d` with OIHW weights, `WithLossCell`,
`TrainOneStepCell`, `Momentum`, ...), with `Dense` in MindSpore's layout and initializers and
`Dropout` taking `keep_prob`."""

import numpy as _np

from anfora import Parameter
from anfora import nn as _nn
from anfora import ops as _ops
from anfora.nn import *  # noqa: F401,F403
from anfora.nn import ReLU, Tanh  # noqa: F401
from anfora.nn import Dropout as _Dropout

from . import _random

_NEG_INF = float("-inf")
from .common import initializer as _init


def _initial(init, shape, fan_in, dtype):
    """A MindSpore initializer's values (`common.initializer.values`: an Initializer, a name, a
    number, an array or Tensor), or for None MindSpore's default for weights, HeUniform with
    negative slope sqrt(5): uniform in ±1/sqrt(fan_in)."""
    if init is None:
        bound = 1.0 / _np.sqrt(max(fan_in, 1))
        return _random.generator().uniform(-bound, bound, shape).astype(dtype)
    return _init.values(init, shape, dtype)


def _default_name(name):
    """Whether a Parameter kept the name it got for having none (`Parameter12`)."""
    return name.startswith("Parameter") and name[len("Parameter"):].isdigit()


class Cell(_nn.Cell):
    """MindSpore's `Cell(auto_prefix=True, flags=None)`: anfora's Cell, whose Parameters are
    named after where they are held, as MindSpore names them. Setting a Cell attribute
    renames every Parameter of that Cell to `attribute.path` (its path inside it, e.g.
    `fc1.weight`, `seq.0.bias`); as Cells are built inside out, names end as the full path
    from the outermost Cell that prefixes. A Parameter set directly keeps its name unless it
    has none, then takes the attribute's. `auto_prefix=False` (MindSpore's wrappers, such as
    `TrainOneStepCell`) renames nothing. A Cell starts in evaluation mode, as MindSpore's
    do: `set_train()` (or `Model.train`) selects the training behaviour."""

    training = False

    def __init__(self, auto_prefix=True, flags=None):
        object.__setattr__(self, "_auto_prefix", bool(auto_prefix))

    def parameters_and_names(self):
        """`[(path, Parameter)]` in MindSpore's order and names: this Cell's own Parameters
        (also those in its tuples), then each Cell it holds with that Cell's own paths (a
        `SequentialCell`'s `0.weight`), each Parameter once. anfora's order is the
        attributes'."""
        cells = {n: v for n, v in vars(self).items() if isinstance(v, _nn.Cell)}
        out = [(p, v) for p, v in super().parameters_and_names() if p.split(".")[0] not in cells]
        seen = {id(v) for _, v in out}
        for name, cell in cells.items():
            for path, param in cell.parameters_and_names():
                if id(param) not in seen:
                    seen.add(id(param))
                    out.append((f"{name}.{path}", param))
        return out

    def __setattr__(self, name, value):
        if getattr(self, "_auto_prefix", True) and not name.startswith("_"):
            if isinstance(value, _nn.Cell):
                for path, param in value.parameters_and_names():
                    param.name = f"{name}.{path}"
            elif isinstance(value, Parameter) and _default_name(value.name):
                value.name = name
        super().__setattr__(name, value)


class Sigmoid(Cell):
    def construct(self, x):
        return _ops.sigmoid(x)


class _Activation(Cell):
    """An activation `get_activation` names, with MindSpore's defaults (`Softmax` on the
    last axis, `LeakyReLU` alpha 0.2, `ELU` alpha 1)."""

    def __init__(self, fn):
        self.fn = fn

    def construct(self, x):
        return self.fn(x)


def _ReLU6(x):
    return _ops.clip(x, 0.0, 6.0)


def _SiLU(x):
    return _ops.silu(x)


def _Softmax(x):
    return _ops.softmax(x, -1)


def _LogSoftmax(x):
    return _ops.log_softmax(x, -1)


def _HSwish(x):
    return _ops.hardswish(x)


def _HSigmoid(x):
    return _ops.clip(x + 3.0, 0.0, 6.0) / 6.0


def _LeakyReLU(x):
    return _ops.maximum(x, x * 0.2)


def _ELU(x):
    return _ops.where(x > 0.0, x, _ops.exp(_ops.minimum(x, 0.0)) - 1.0)


def _Softsign(x):
    return x / (_ops.abs(x) + 1.0)


def _LogSigmoid(x):
    return -_ops.softplus(-x)


def _Mish(x):
    return x * _ops.tanh(_ops.softplus(x))


def _Tanhshrink(x):
    return x - _ops.tanh(x)


# MindSpore's names for `Dense(activation=...)` / `get_activation`: those anfora computes.
_ACTIVATIONS = {"relu": ReLU, "sigmoid": Sigmoid, "tanh": Tanh}
for _name, _fn in [("relu6", _ReLU6), ("silu", _SiLU), ("softmax", _Softmax),
                   ("logsoftmax", _LogSoftmax), ("hswish", _HSwish), ("hsigmoid", _HSigmoid),
                   ("leakyrelu", _LeakyReLU), ("elu", _ELU), ("softsign", _Softsign),
                   ("logsigmoid", _LogSigmoid), ("mish", _Mish), ("tanhshrink", _Tanhshrink)]:
    _ACTIVATIONS[_name] = _fn
# MindSpore's other names: refused by name rather than computed differently.
_MINDSPORE_ONLY = ["softmin", "softmax2d", "logsoftmaxExt", "rrelu", "hardtanh", "gelu",
                   "fast_gelu", "prelu", "preluExt", "softshrink", "hshrink", "threshold"]


def get_activation(name, prim_name=None):
    """MindSpore's `nn.get_activation(name)`: the activation Cell of that name (None for
    None); a KeyError, as MindSpore's, for a name it does not know."""
    if name is None:
        return None
    if name in ("relu", "sigmoid", "tanh"):
        return _ACTIVATIONS[name]()
    if name in _ACTIVATIONS:
        return _Activation(_ACTIVATIONS[name])
    if name in _MINDSPORE_ONLY:
        raise KeyError(f"activation {name!r} is not supported by anfora's MindSpore layer")
    known = list(_ACTIVATIONS) + _MINDSPORE_ONLY
    raise KeyError(f"The 'name' must be in {known}, but got {name}.")


class Dense(Cell):
    """MindSpore's `Dense(in_channels, out_channels, weight_init=None, bias_init=None,
    has_bias=True, activation=None)`: `x @ weight.T + bias`, weight of shape (out_channels,
    in_channels) as MindSpore lays it out, then the activation (a name or a Cell)."""

    def __init__(self, in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True,
                 activation=None, dtype="float32"):
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.weight = Parameter(_initial(weight_init, (out_channels, in_channels), in_channels, dtype),
                                name="weight")
        self.has_bias = has_bias
        self.bias = (Parameter(_initial(bias_init, (out_channels,), in_channels, dtype), name="bias")
                     if has_bias else None)
        if isinstance(activation, str):
            activation = get_activation(activation.lower())
        self.activation = activation
        self.activation_flag = activation is not None

    def construct(self, x):
        y = _ops.matmul(x, _ops.transpose(self.weight))
        if self.has_bias:
            y = y + self.bias
        if self.activation_flag:
            y = self.activation(y)
        return y


class Dropout(_Dropout):
    """MindSpore's `Dropout(keep_prob=0.5, p=None)`: drops with probability `p`, or
    `1 - keep_prob`, once `set_train()` (it starts in evaluation mode, as MindSpore's)."""

    training = False

    def __init__(self, keep_prob=0.5, p=None):
        super().__init__(p=1.0 - keep_prob if p is None else p)


class BatchNorm2d(_nn.BatchNorm2d):
    """anfora's `BatchNorm2d` (MindSpore's momentum convention), starting in evaluation mode
    (the moving statistics) as MindSpore's does."""

    training = False


class BatchNorm1d(_nn.BatchNorm1d):
    """anfora's `BatchNorm1d`, starting in evaluation mode as MindSpore's does."""

    training = False


def _same_pads(size, kernel, stride):
    """MindSpore's (TensorFlow's) "same" padding of one axis: `ceil(size / stride)` outputs,
    the odd element of the padding after."""
    total = max((-(-size // stride) - 1) * stride + kernel - size, 0)
    return (total // 2, total - total // 2)


class _Pool2d(Cell):
    """MindSpore's pooling layers' arguments: `kernel_size=1, stride=1` (not the kernel size),
    `pad_mode` "valid", "same" or "pad" (with `padding`), NCHW."""

    def __init__(self, name, kernel_size, stride, pad_mode, padding, data_format):
        mode = str(pad_mode).upper()
        if mode not in ("VALID", "SAME", "PAD"):
            raise ValueError(f"For '{name}', the 'pad_mode' must be str and must be in "
                             f"'['VALID', 'SAME', 'PAD']', but got '{mode}'.")
        if mode != "PAD" and padding not in (0, (0, 0), (0, 0, 0, 0)):
            raise ValueError(f"{name}: padding must be 0 unless pad_mode is 'pad', got {padding!r}")
        if data_format != "NCHW":
            raise ValueError(f"{name}: data_format {data_format!r} is not supported (NCHW only)")
        self.kernel_size = _nn._pair(kernel_size, "kernel_size")
        self.stride = _nn._pair(stride, "stride")
        self.padding = _nn._pair(padding, "padding") if mode == "PAD" else (0, 0)
        self.same = mode == "SAME"

    def same_pad(self, x, value):
        """`x` padded to the "same" outputs on its last two axes with `value`."""
        kh, kw = self.kernel_size
        sh, sw = self.stride
        top = _same_pads(x.shape[-2], kh, sh)
        left = _same_pads(x.shape[-1], kw, sw)
        if len(x.shape) == 4:
            return _ops.pad(x, ((0, 0), (0, 0), top, left), constant_values=value)
        return _ops.pad(x, ((0, 0), top, left), constant_values=value)


class MaxPool2d(_Pool2d):
    """MindSpore's `MaxPool2d(kernel_size=1, stride=1, pad_mode="valid", padding=0,
    dilation=1, return_indices=False, ceil_mode=False, data_format="NCHW")` on (N, C, H, W)
    or (C, H, W): "same" pads with -inf (the odd row and column after)."""

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False, data_format="NCHW"):
        if dilation not in (1, (1, 1)) or return_indices or ceil_mode:
            raise ValueError("MaxPool2d: dilation, return_indices and ceil_mode are not "
                             "supported by anfora's MindSpore layer")
        super().__init__("MaxPool2d", kernel_size, stride, pad_mode, padding, data_format)

    def construct(self, x):
        if self.same:
            x = self.same_pad(x, _NEG_INF)
        return _ops.max_pool2d(x, self.kernel_size, self.stride, self.padding)


class AvgPool2d(_Pool2d):
    """MindSpore's `AvgPool2d(kernel_size=1, stride=1, pad_mode="valid", padding=0,
    ceil_mode=False, count_include_pad=True, divisor_override=None, data_format="NCHW")`:
    with "pad" the padded zeros count in the mean; with "same" they do not (each window's sum
    over the elements it covers, divided by their number)."""

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None, data_format="NCHW"):
        if ceil_mode or divisor_override is not None:
            raise ValueError("AvgPool2d: ceil_mode and divisor_override are not supported by "
                             "anfora's MindSpore layer")
        super().__init__("AvgPool2d", kernel_size, stride, pad_mode, padding, data_format)
        if not count_include_pad and self.padding != (0, 0):
            raise ValueError("AvgPool2d: count_include_pad=False with padding is not supported "
                             "by anfora's MindSpore layer")

    def construct(self, x):
        if self.same:
            sums = _ops.avg_pool2d(self.same_pad(x, 0.0), self.kernel_size, self.stride, 0)
            ones = self.same_pad(_ops.ones_like(x), 0.0)
            counts = _ops.avg_pool2d(ones, self.kernel_size, self.stride, 0)
            return sums / counts
        return _ops.avg_pool2d(x, self.kernel_size, self.stride, self.padding)


class Conv2d(_nn.Conv2d):
    """MindSpore's `Conv2d(in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
    padding=0, dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
    data_format="NCHW")`: OIHW weights from MindSpore's initializers."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
                 data_format="NCHW", dtype="float32"):
        if data_format != "NCHW":
            raise ValueError(f"Conv2d: data_format must be 'NCHW', not {data_format!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                         dilation, group, has_bias, dtype=dtype)
        shape = tuple(self.weight.shape)
        fan_in = shape[1] * shape[2] * shape[3]
        self.weight = Parameter(_initial(weight_init, shape, fan_in, dtype), name="weight")
        if has_bias:
            self.bias = Parameter(_initial(bias_init, (out_channels,), fan_in, dtype), name="bias")


def _plain(what, loss_scale, use_locking):
    """MindSpore optimizer arguments anfora has no use for: the defaults only."""
    if loss_scale != 1.0:
        raise ValueError(f"{what}: loss_scale other than 1.0 is not supported by anfora's MindSpore layer")
    del use_locking  # each update is one in-place write of the Parameter: nothing to lock


class SGD(_nn.SGD):
    """MindSpore's `SGD(params, learning_rate=0.1, momentum=0.0, dampening=0.0,
    weight_decay=0.0, nesterov=False, loss_scale=1.0)`: with momentum (or weight decay),
    `Momentum`'s update."""

    def __new__(cls, params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
                nesterov=False, loss_scale=1.0):
        _plain("SGD", loss_scale, False)
        if dampening != 0.0:
            raise ValueError("SGD: dampening is not supported by anfora's MindSpore layer")
        if momentum or weight_decay or nesterov:
            return Momentum(params, learning_rate, momentum, weight_decay, use_nesterov=nesterov)
        return super().__new__(cls)

    def __init__(self, params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, loss_scale=1.0):
        super().__init__(params, learning_rate)


class Momentum(_nn.Momentum):
    """MindSpore's `Momentum(params, learning_rate, momentum, weight_decay=0.0,
    loss_scale=1.0, use_nesterov=False)`."""

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0,
                 use_nesterov=False):
        _plain("Momentum", loss_scale, False)
        super().__init__(params, learning_rate, momentum, weight_decay, use_nesterov)


class Adam(_nn.Adam):
    """MindSpore's `Adam(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
    use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0)`."""

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                 use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0):
        _plain("Adam", loss_scale, use_locking)
        if use_nesterov:
            raise ValueError("Adam: use_nesterov is not supported by anfora's MindSpore layer")
        super().__init__(params, learning_rate, beta1, beta2, eps, weight_decay)


# MindSpore 1.x keeps the metrics in `nn` as well.
from .train.model import Accuracy, Loss  # noqa: E402

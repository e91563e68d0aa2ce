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
    `TrainOneStepCell`) renames nothing."""

    def __init__(self, auto_prefix=True, flags=None):
        object.__setattr__(self, "_auto_prefix", bool(auto_prefix))

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


_ACTIVATIONS = {"relu": ReLU, "sigmoid": Sigmoid, "tanh": Tanh}


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
            if activation.lower() not in _ACTIVATIONS:
                raise ValueError(f"unknown activation {activation!r} ({', '.join(_ACTIVATIONS)})")
            activation = _ACTIVATIONS[activation.lower()]()
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
    `1 - keep_prob`."""

    def __init__(self, keep_prob=0.5, p=None):
        super().__init__(p=1.0 - keep_prob if p is None else p)


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

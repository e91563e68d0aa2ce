"""anfora.nn: Cells (MindSpore's name for modules), layers, losses, optimizers and the
one-call training step. A Cell's `construct` is compiled on its first call (as `@anfora.jit`
methods are); sub-cells, Parameters and settings are read from its attributes when it
compiles, so a whole network, its loss, the gradient and the optimizer update compile into one
program."""

from . import _anfora
from ._anfora import Parameter
from . import ops, value_and_grad

__all__ = [
    "Cell",
    "Dense",
    "Adam",
    "Flatten",
    "MSELoss",
    "Momentum",
    "ParameterTuple",
    "ReLU",
    "SGD",
    "SequentialCell",
    "SoftmaxCrossEntropyWithLogits",
    "Tanh",
    "TrainOneStepCell",
    "WithLossCell",
]


class ParameterTuple(tuple):
    """A tuple of Parameters (what `trainable_params()` returns)."""

    def __new__(cls, params=()):
        params = tuple(params)
        for p in params:
            if not isinstance(p, Parameter):
                raise TypeError(f"ParameterTuple holds Parameters, not {type(p).__name__}")
        return super().__new__(cls, params)


class Cell:
    """A network building block: define `construct`; call the Cell to run it compiled."""

    def construct(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must define construct()")

    def __call__(self, *args, **kwargs):
        return self.compiled()(*args, **kwargs)

    def parameters_and_names(self):
        """`[(path, Parameter)]` of this Cell and its sub-cells, each Parameter once."""
        return _anfora.parameters_of(self)

    def trainable_params(self):
        return ParameterTuple(p for _, p in self.parameters_and_names() if p.requires_grad)

    def compiled(self):
        """The compiled `construct` (for `.lower(...)`, `.explain()`, `.grad(...)`), made on
        first use and kept on the instance."""
        f = self.__dict__.get("_anfora_construct")
        if f is None:
            f = _anfora.jit(type(self).construct).__get__(self, type(self))
            self.__dict__["_anfora_construct"] = f
        return f


class Dense(Cell):
    """`x @ weight + bias`; weight is (in_channels, out_channels), initialized uniformly in
    ±1/sqrt(in_channels) (seeded by `seed`), bias zeros."""

    def __init__(self, in_channels, out_channels, has_bias=True, seed=0, dtype="float32"):
        # numpy is imported here, not with the package: it would triple `import anfora`.
        import numpy as _np

        rng = _np.random.default_rng(seed)
        bound = 1.0 / _np.sqrt(in_channels)
        w = rng.uniform(-bound, bound, (in_channels, out_channels)).astype(dtype)
        self.weight = Parameter(w, name="weight")
        self.has_bias = has_bias
        self.bias = Parameter(_np.zeros(out_channels, dtype), name="bias") if has_bias else None

    def construct(self, x):
        y = x @ self.weight
        if self.has_bias:
            y = y + self.bias
        return y


class ReLU(Cell):
    def construct(self, x):
        return ops.relu(x)


class Tanh(Cell):
    def construct(self, x):
        return ops.tanh(x)


class Flatten(Cell):
    """(N, ...) -> (N, prod(...))."""

    def construct(self, x):
        return ops.reshape(x, (x.shape[0], -1))


class _Chain(Cell):
    def __init__(self, first, rest):
        self.first = first
        self.rest = rest

    def construct(self, x):
        return self.rest(self.first(x))


class SequentialCell(Cell):
    """Runs its cells in order."""

    def __init__(self, *cells):
        if len(cells) == 1 and isinstance(cells[0], (list, tuple)):
            cells = tuple(cells[0])
        if not cells:
            raise ValueError("SequentialCell needs at least one cell")
        self.cells = tuple(cells)
        # A fixed chain of calls, so that the compiler sees each cell as a constant.
        chain = cells[-1]
        for c in reversed(cells[:-1]):
            chain = _Chain(c, chain)
        self.chain = chain

    def construct(self, x):
        return self.chain(x)

    def parameters_and_names(self):
        return _anfora.parameters_of(_Named(self.cells))


class _Named:
    def __init__(self, cells):
        for i, c in enumerate(cells):
            setattr(self, str(i), c)


class MSELoss(Cell):
    """mean((logits - labels) ** 2)."""

    def construct(self, logits, labels):
        d = logits - labels
        return ops.mean(d * d)


class SoftmaxCrossEntropyWithLogits(Cell):
    """Mean softmax cross-entropy of logits (N, C) against one-hot (or probability) labels,
    computed stably (logits shifted by their row maximum)."""

    def construct(self, logits, labels):
        shift = ops.stop_gradient(ops.max(logits, axis=-1, keepdims=True))
        z = logits - shift
        lse = ops.log(ops.sum(ops.exp(z), axis=-1, keepdims=True))
        return ops.mean(ops.sum((lse - z) * labels, axis=-1))


class WithLossCell(Cell):
    """`loss_fn(backbone(data), label)`."""

    def __init__(self, backbone, loss_fn):
        self.backbone = backbone
        self.loss_fn = loss_fn

    def construct(self, data, label):
        return self.loss_fn(self.backbone(data), label)


class SGD(Cell):
    """Plain SGD, `param -= learning_rate * grad`, as in-graph updates (`ops.sgd`)."""

    def __init__(self, params, learning_rate=0.01):
        self.parameters = ParameterTuple(params)
        self.learning_rate = float(learning_rate)

    def construct(self, gradients):
        for p, g in zip(self.parameters, gradients):
            ops.sgd(p, g, self.learning_rate)
        return True


def _slots(params, what):
    """Zero-initialized optimizer state, one Parameter per parameter (not trained)."""
    import numpy as _np

    return ParameterTuple(
        Parameter(_np.zeros(p.shape, p.dtype.name), name=f"{what}.{p.name}", requires_grad=False)
        for p in params
    )


class Momentum(Cell):
    """SGD with momentum (`ops.apply_momentum`, in place): `accum = momentum * accum + grad`,
    then `param -= learning_rate * accum`, or with `use_nesterov`
    `param -= learning_rate * (grad + momentum * accum)`. `weight_decay` adds
    `weight_decay * param` to each gradient first."""

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, use_nesterov=False):
        self.parameters = ParameterTuple(params)
        self.learning_rate = float(learning_rate)
        self.momentum = float(momentum)
        self.weight_decay = float(weight_decay)
        self.use_nesterov = bool(use_nesterov)
        self.moments = _slots(self.parameters, "moments")

    def construct(self, gradients):
        for p, accum, g in zip(self.parameters, self.moments, gradients):
            if self.weight_decay != 0.0:
                g = g + self.weight_decay * p
            ops.apply_momentum(p, accum, self.learning_rate, g, self.momentum, self.use_nesterov)
        return True


class Adam(Cell):
    """Adam (`ops.adam`, in place) with bias correction; the step count is a Parameter too, so
    a training step stays one compiled call and the state can be checkpointed.
    `weight_decay` adds `weight_decay * param` to each gradient (L2, not AdamW)."""

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0):
        import numpy as _np

        self.parameters = ParameterTuple(params)
        self.learning_rate = float(learning_rate)
        self.beta1 = float(beta1)
        self.beta2 = float(beta2)
        self.eps = float(eps)
        self.weight_decay = float(weight_decay)
        self.moment1 = _slots(self.parameters, "moment1")
        self.moment2 = _slots(self.parameters, "moment2")
        self.step = Parameter(_np.zeros((), "float64"), name="step", requires_grad=False)

    def construct(self, gradients):
        ops.assign_add(self.step, 1.0)
        for p, m, v, g in zip(self.parameters, self.moment1, self.moment2, gradients):
            if self.weight_decay != 0.0:
                g = g + self.weight_decay * p
            ops.adam(p, m, v, g, self.step, self.learning_rate, self.beta1, self.beta2, self.eps)
        return True


class TrainOneStepCell(Cell):
    """One training step as one compiled call: the loss, its gradient with respect to the
    optimizer's Parameters, and the optimizer's updates. Returns the loss."""

    def __init__(self, network, optimizer):
        self.network = network
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.loss_and_grad = network.construct

    def construct(self, data, label):
        loss, grads = value_and_grad(self.loss_and_grad, None, self.weights)(data, label)
        self.optimizer(grads)
        return loss

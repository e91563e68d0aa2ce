"""anfora.nn: Cells (MindSpore's name for modules), layers, losses, optimizers and the
one-call training step. A Cell's `construct` is compiled on its first call (as `@anfora.jit`
methods are); sub-cells, Parameters and settings are read from its attributes when it
compiles, so a whole network, its loss, the gradient and the optimizer update compile into one
program."""

from . import _anfora
from ._anfora import Parameter
from . import ops, value_and_grad

__all__ = [
    "AvgPool2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "Cell",
    "Conv2d",
    "Dropout",
    "FakeQuant",
    "GELU",
    "LayerNorm",
    "MaxPool2d",
    "Dense",
    "Adam",
    "Flatten",
    "MSELoss",
    "Momentum",
    "ParameterTuple",
    "ReflectionPad2d",
    "ReLU",
    "ReplicationPad2d",
    "SGD",
    "SequentialCell",
    "SoftmaxCrossEntropyWithLogits",
    "Tanh",
    "TrainOneStepCell",
    "WithLossCell",
    "ZeroPad2d",
]


def _cells_in(obj, seen=None):
    """The Cells an object holds, depth first through attributes, lists, tuples and dicts."""
    seen = set() if seen is None else seen
    items = obj.__dict__.values() if hasattr(obj, "__dict__") else ()
    for v in items:
        stack = [v]
        while stack:
            x = stack.pop()
            if isinstance(x, (list, tuple)):
                stack.extend(x)
            elif isinstance(x, dict):
                stack.extend(x.values())
            elif isinstance(x, Cell) and id(x) not in seen:
                seen.add(id(x))
                yield x
                yield from _cells_in(x, seen)


class ParameterTuple(tuple):
    """A tuple of Parameters (what `trainable_params()` returns)."""

    def __new__(cls, params=()):
        params = tuple(params)
        for p in params:
            if not isinstance(p, Parameter):
                raise TypeError(f"ParameterTuple holds Parameters, not {type(p).__name__}")
        return super().__new__(cls, params)


# Bumped by every `set_train`: a Cell's compiled construct folds `self.training` (and every
# other attribute) when it compiles, so a mode change recompiles whatever was compiled before.
_mode_version = [0]


class Cell:
    """A network building block: define `construct`; call the Cell to run it compiled.
    `self.training` (True until `set_train(False)`) selects training behaviour (Dropout,
    BatchNorm)."""

    training = True

    def set_train(self, mode=True):
        """Sets training mode on this Cell and every Cell it holds; compiled code recompiles."""
        for cell in [self] + [c for c in _cells_in(self)]:
            cell.training = bool(mode)
        _mode_version[0] += 1
        _anfora.forget_parsed_functions()
        return self

    def construct(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must define construct()")

    def __call__(self, *args, **kwargs):
        return self.compiled()(*args, **kwargs)

    def parameters_and_names(self):
        """`[(path, Parameter)]` of this Cell and its sub-cells, each Parameter once."""
        return _anfora.parameters_of(self)

    def trainable_params(self):
        return ParameterTuple(p for _, p in self.parameters_and_names() if p.requires_grad)

    def untrainable_params(self):
        return ParameterTuple(p for _, p in self.parameters_and_names() if not p.requires_grad)

    def get_parameters(self):
        """The Parameters, each once (MindSpore's generator)."""
        return iter(p for _, p in self.parameters_and_names())

    def parameters_dict(self):
        """`{path: Parameter}`, in order."""
        return dict(self.parameters_and_names())

    def cells_and_names(self, prefix=""):
        """`(path, Cell)` of this Cell (path `prefix`) and the Cells in its attributes, depth
        first, each once."""
        seen = set()

        def walk(cell, path):
            if id(cell) in seen:
                return
            seen.add(id(cell))
            yield path, cell
            for name, value in vars(cell).items():
                if isinstance(value, Cell):
                    yield from walk(value, f"{path}.{name}" if path else name)

        return list(walk(self, prefix))

    def set_grad(self, requires_grad=True):
        """MindSpore marks a Cell whose gradient is taken; anfora differentiates any Cell, so
        this only returns the Cell."""
        return self

    def compiled(self):
        """The compiled `construct` (for `.lower(...)`, `.explain()`, `.grad(...)`), made on
        first use and kept on the instance."""
        cached = self.__dict__.get("_anfora_construct")
        if cached is None or cached[0] != _mode_version[0]:
            f = _anfora.jit(type(self).construct).__get__(self, type(self))
            cached = (_mode_version[0], f)
            self.__dict__["_anfora_construct"] = cached
        return cached[1]


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

    def __getitem__(self, index):
        """The cell at `index` (a SequentialCell for a slice), as MindSpore's."""
        if isinstance(index, slice):
            return SequentialCell(*self.cells[index])
        return self.cells[index]

    def __len__(self):
        return len(self.cells)

    def parameters_and_names(self):
        return _anfora.parameters_of(_Named(self.cells))


class _Named:
    def __init__(self, cells):
        for i, c in enumerate(cells):
            setattr(self, str(i), c)


def _pair(v, what):
    if isinstance(v, int):
        return (v, v)
    v = tuple(v)
    if len(v) != 2 or not all(isinstance(i, int) for i in v):
        raise TypeError(f"{what} must be an int or a pair of ints, got {v!r}")
    return v


def _uniform(shape, bound, seed, dtype):
    import numpy as _np

    return _np.random.default_rng(seed).uniform(-bound, bound, shape).astype(dtype)


class Conv2d(Cell):
    """2-D convolution of NCHW input (`ops.conv2d`). `pad_mode` is "same" (output as large as
    the input; stride 1), "valid" (no padding) or "pad" (`padding` zeros on each side, an int
    or a pair). The weight (out_channels, in_channels / group, kh, kw) is initialized uniformly
    in ±1/sqrt(fan_in) (seeded by `seed`); the bias, if any, is zeros."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 dilation=1, group=1, has_bias=False, seed=0, dtype="float32"):
        import numpy as _np

        if in_channels % group or out_channels % group:
            raise ValueError(f"in_channels ({in_channels}) and out_channels ({out_channels}) must be divisible by group ({group})")
        if pad_mode not in ("same", "valid", "pad"):
            raise ValueError(f"pad_mode must be 'same', 'valid' or 'pad', got {pad_mode!r}")
        kh, kw = _pair(kernel_size, "kernel_size")
        fan_in = in_channels // group * kh * kw
        self.weight = Parameter(
            _uniform((out_channels, in_channels // group, kh, kw), 1.0 / _np.sqrt(fan_in), seed, dtype),
            name="weight",
        )
        self.has_bias = has_bias
        self.bias = Parameter(_np.zeros(out_channels, dtype), name="bias") if has_bias else None
        self.stride = _pair(stride, "stride")
        self.padding = pad_mode if pad_mode != "pad" else _pair(padding, "padding")
        self.dilation = _pair(dilation, "dilation")
        self.group = group

    def construct(self, x):
        y = ops.conv2d(x, self.weight, self.stride, self.padding, self.dilation, self.group)
        if self.has_bias:
            y = y + ops.reshape(self.bias, (-1, 1, 1))
        return y


class _Pool2d(Cell):
    def __init__(self, kernel_size, stride=None, padding=0):
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.stride = self.kernel_size if stride is None else _pair(stride, "stride")
        self.padding = _pair(padding, "padding")


class MaxPool2d(_Pool2d):
    """Max pooling over `kernel_size` windows of NCHW input, moving by `stride` (default: the
    kernel size), with `padding` (implicit -inf) on each side."""

    def construct(self, x):
        return ops.max_pool2d(x, self.kernel_size, self.stride, self.padding)


class AvgPool2d(_Pool2d):
    """Average pooling over `kernel_size` windows of NCHW input, moving by `stride` (default:
    the kernel size); zero `padding` counts in the average (PyTorch's default)."""

    def construct(self, x):
        return ops.avg_pool2d(x, self.kernel_size, self.stride, self.padding)


def _padding4(v):
    if isinstance(v, int) and not isinstance(v, bool):
        return (v, v, v, v)
    v = tuple(v)
    if len(v) != 4 or not all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        raise TypeError(f"padding must be an int or 4 ints (left, right, top, bottom), got {v!r}")
    return v


class _Pad2d(Cell):
    def __init__(self, padding):
        self.padding = _padding4(padding)


class ReflectionPad2d(_Pad2d):
    """Pads the last two axes of (N, C, H, W) or (C, H, W) input with their reflection
    (`ops.reflection_pad2d`): `padding` an int or (left, right, top, bottom), each less than
    the size of its axis."""

    def construct(self, x):
        return ops.reflection_pad2d(x, self.padding)


class ReplicationPad2d(_Pad2d):
    """Pads the last two axes of (N, C, H, W) or (C, H, W) input with copies of their edge
    elements (`ops.replication_pad2d`): `padding` an int or (left, right, top, bottom)."""

    def construct(self, x):
        return ops.replication_pad2d(x, self.padding)


class ZeroPad2d(_Pad2d):
    """Pads the last two axes of (N, C, H, W) or (C, H, W) input with zeros
    (`ops.zero_pad2d`): `padding` an int or (left, right, top, bottom)."""

    def construct(self, x):
        return ops.zero_pad2d(x, self.padding)


class GELU(Cell):
    """GELU. `approximate=True` (MindSpore's default) is the tanh form
    `0.5 x (1 + tanh(sqrt(2/π) (x + 0.044715 x³)))`; `approximate=False` the exact
    `0.5 x (1 + erf(x / sqrt(2)))`."""

    def __init__(self, approximate=True):
        self.approximate = bool(approximate)

    def construct(self, x):
        return ops.gelu(x, approximate=self.approximate)


class Dropout(Cell):
    """Zeroes each element with probability `p` while training (scaling the rest by 1/(1-p)),
    the identity in evaluation (`set_train(False)`). The gradient uses the same mask."""

    def __init__(self, p=0.5):
        if not 0.0 <= p < 1.0:
            raise ValueError(f"Dropout probability must be in [0, 1), got {p}")
        self.p = float(p)

    def construct(self, x):
        if self.training and self.p > 0.0:
            return ops.dropout(x, self.p, True)
        return x


class LayerNorm(Cell):
    """Normalizes over the last `len(normalized_shape)` axes to zero mean and unit variance,
    then scales by `gamma` (ones) and shifts by `beta` (zeros)."""

    def __init__(self, normalized_shape, epsilon=1e-5, dtype="float32"):
        import numpy as _np

        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(d) for d in normalized_shape)
        self.axes = tuple(range(-len(self.normalized_shape), 0))
        self.epsilon = float(epsilon)
        self.gamma = Parameter(_np.ones(self.normalized_shape, dtype), name="gamma")
        self.beta = Parameter(_np.zeros(self.normalized_shape, dtype), name="beta")

    def construct(self, x):
        mean = ops.mean(x, axis=self.axes, keepdims=True)
        d = x - mean
        var = ops.mean(d * d, axis=self.axes, keepdims=True)
        return d / ops.sqrt(var + self.epsilon) * self.gamma + self.beta


class FakeQuant(Cell):
    """Quant-aware training's fake quantization (`ops.fake_quant`): the values a `uint8`
    quantization of the tracked range `[min_val, max_val]` gives back, so training sees the
    rounding and clipping of the int8 model, with the straight-through gradient (passed on
    inside the range, zero where clipped). While training, the range follows the batches'
    smallest and largest values by an exponential moving average (`ema_decay`), in the same
    compiled call, as MindSpore's `FakeQuantWithMinMaxObserver` does; in evaluation it is fixed.
    The converter (`anfora.convert(..., quantize="int8")`) takes a layer's input and output
    quantization from the `FakeQuant` that reads it, so a quant-aware model needs no
    calibration data."""

    def __init__(self, ema_decay=0.99, min_init=-6.0, max_init=6.0):
        import numpy as _np

        self.ema_decay = float(ema_decay)
        self.min_val = Parameter(_np.array(min_init, "float32"), name="min_val", requires_grad=False)
        self.max_val = Parameter(_np.array(max_init, "float32"), name="max_val", requires_grad=False)

    def construct(self, x):
        if self.training:
            lo = ops.stop_gradient(ops.min(x))
            hi = ops.stop_gradient(ops.max(x))
            self.min_val = self.min_val * self.ema_decay + lo * (1.0 - self.ema_decay)
            self.max_val = self.max_val * self.ema_decay + hi * (1.0 - self.ema_decay)
        return ops.fake_quant(x, self.min_val, self.max_val)


class BatchNorm2d(Cell):
    """Batch normalization of NCHW input per channel. While training it normalizes by the
    batch's mean and (biased) variance and updates the moving statistics in the same compiled
    call: `moving = momentum * moving + (1 - momentum) * batch` (MindSpore's convention; the
    moving variance takes the unbiased batch variance). In evaluation it uses the moving
    statistics. `gamma` (ones) and `beta` (zeros) are trained."""

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, dtype="float32"):
        import numpy as _np

        self.eps = float(eps)
        self.momentum = float(momentum)
        self.affine = bool(affine)
        self.gamma = Parameter(_np.ones(num_features, dtype), name="gamma", requires_grad=affine)
        self.beta = Parameter(_np.zeros(num_features, dtype), name="beta", requires_grad=affine)
        self.moving_mean = Parameter(_np.zeros(num_features, dtype), name="moving_mean", requires_grad=False)
        self.moving_variance = Parameter(_np.ones(num_features, dtype), name="moving_variance", requires_grad=False)

    def construct(self, x):
        if self.training:
            mean = ops.mean(x, axis=(0, 2, 3), keepdims=True)
            d = x - mean
            var = ops.mean(d * d, axis=(0, 2, 3), keepdims=True)
            n = x.shape[0] * x.shape[2] * x.shape[3]
            unbiased = ops.stop_gradient(ops.reshape(var, (-1,))) * (n / max(n - 1, 1))
            self.moving_mean = self.moving_mean * self.momentum + ops.stop_gradient(ops.reshape(mean, (-1,))) * (1.0 - self.momentum)
            self.moving_variance = self.moving_variance * self.momentum + unbiased * (1.0 - self.momentum)
        else:
            mean = ops.reshape(self.moving_mean, (1, -1, 1, 1))
            d = x - mean
            var = ops.reshape(self.moving_variance, (1, -1, 1, 1))
        y = d / ops.sqrt(var + self.eps)
        return y * ops.reshape(self.gamma, (1, -1, 1, 1)) + ops.reshape(self.beta, (1, -1, 1, 1))


class BatchNorm1d(BatchNorm2d):
    """Batch normalization of (N, C) or (N, C, L) input per channel (MindSpore's and PyTorch's
    BatchNorm1d): the statistics are taken over every axis but the channels; otherwise as
    `BatchNorm2d` (training on the batch's statistics while updating the moving ones,
    evaluation on the moving ones)."""

    def construct(self, x):
        if len(x.shape) == 2:
            axes = (0,)
            shape = (1, -1)
            n = x.shape[0]
        else:
            axes = (0, 2)
            shape = (1, -1, 1)
            n = x.shape[0] * x.shape[2]
        if self.training:
            mean = ops.mean(x, axis=axes, keepdims=True)
            d = x - mean
            var = ops.mean(d * d, axis=axes, keepdims=True)
            unbiased = ops.stop_gradient(ops.reshape(var, (-1,))) * (n / max(n - 1, 1))
            self.moving_mean = self.moving_mean * self.momentum + ops.stop_gradient(ops.reshape(mean, (-1,))) * (1.0 - self.momentum)
            self.moving_variance = self.moving_variance * self.momentum + unbiased * (1.0 - self.momentum)
        else:
            d = x - ops.reshape(self.moving_mean, shape)
            var = ops.reshape(self.moving_variance, shape)
        y = d / ops.sqrt(var + self.eps)
        return y * ops.reshape(self.gamma, shape) + ops.reshape(self.beta, shape)


class MSELoss(Cell):
    """mean((logits - labels) ** 2)."""

    def construct(self, logits, labels):
        d = logits - labels
        return ops.mean(d * d)


class SoftmaxCrossEntropyWithLogits(Cell):
    """Softmax cross-entropy of logits (N, C), `-sum(labels * log_softmax(logits), -1)`, as
    MindSpore defines it: with `sparse=False` the labels are one-hot (or probability) rows of
    logits' shape; with `sparse=True` they are class indices (N,) of an integer dtype. The
    per-example losses are reduced by `reduction`: 'none' (MindSpore's default), 'mean' or
    'sum'."""

    def __init__(self, sparse=False, reduction="none"):
        if reduction not in ("none", "mean", "sum"):
            raise ValueError(f"reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
        self.sparse = bool(sparse)
        self.reduction = reduction

    def construct(self, logits, labels):
        if self.sparse:
            labels = ops.one_hot(labels, logits.shape[-1], dtype=logits.dtype)
        loss = -ops.sum(labels * ops.log_softmax(logits, -1), axis=-1)
        if self.reduction == "mean":
            return ops.mean(loss)
        if self.reduction == "sum":
            return ops.sum(loss)
        return loss


class WithLossCell(Cell):
    """`loss_fn(backbone(data), label)`."""

    def __init__(self, backbone, loss_fn):
        self.backbone = backbone
        self.loss_fn = loss_fn

    def construct(self, data, label):
        return self.loss_fn(self.backbone(data), label)


class _Optimizer(Cell):
    """What every optimizer holds: the Parameters it updates and its learning rate."""

    def __init__(self, params, learning_rate):
        self.parameters = ParameterTuple(params)
        self.learning_rate = float(learning_rate)


class SGD(_Optimizer):
    """Plain SGD, `param -= learning_rate * grad`, as in-graph updates (`ops.sgd`)."""

    def __init__(self, params, learning_rate=0.01):
        super().__init__(params, learning_rate)

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


class Momentum(_Optimizer):
    """SGD with momentum (`ops.apply_momentum`, in place): `accum = momentum * accum + grad`,
    then `param -= learning_rate * accum`, or with `use_nesterov`
    `param -= learning_rate * (grad + momentum * accum)`. `weight_decay` adds
    `weight_decay * param` to each gradient first."""

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, use_nesterov=False):
        super().__init__(params, learning_rate)
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


class Adam(_Optimizer):
    """Adam (`ops.adam`, in place) with bias correction; the step count is a Parameter too, so
    a training step stays one compiled call and the state can be checkpointed.
    `weight_decay` adds `weight_decay * param` to each gradient (L2, not AdamW)."""

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0):
        import numpy as _np

        super().__init__(params, learning_rate)
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
    optimizer's Parameters, and the optimizer's updates. Returns the loss.

    With `data_parallel=True` (under `mpirun`, after `anfora.distributed.init()`), every
    process calls the step on its own shard of the global batch: the Parameters start from
    rank 0's values (broadcast when the cell is made), the gradients are averaged over the
    processes by `ops.all_reduce` in buckets of about `bucket_bytes` (the last layers'
    first, as the backward pass produces them), every process applies the same update, and
    the step returns the mean of the processes' losses; `rank_losses` holds each one's."""

    def __init__(self, network, optimizer, data_parallel=False, bucket_bytes=1 << 20):
        self.network = network
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.loss_and_grad = network.construct
        self.data_parallel = bool(data_parallel)
        self.buckets = ()
        self.rank_losses = None
        if self.data_parallel:
            from . import distributed

            if not distributed.is_initialized():
                raise RuntimeError(
                    "TrainOneStepCell(data_parallel=True) needs anfora.distributed.init() first")
            _broadcast_parameters(network, optimizer)
            self.buckets = _buckets(self.weights, bucket_bytes)
            # Every process's own loss of the last step, for logging (the step returns their
            # mean).
            import numpy as _np

            self.rank_losses = Parameter(_np.zeros(distributed.size()), name="rank_losses",
                                         requires_grad=False)

    def construct(self, data, label):
        loss, grads = value_and_grad(self.loss_and_grad, None, self.weights)(data, label)
        if self.data_parallel:
            # The first bucket holds the last layers' gradients, which the backward pass
            # computes first: its all-reduce starts as soon as they exist (the optimizer's
            # schedule pass moves the start there) and runs while the backward pass computes
            # the rest. It carries the loss too: one collective fewer.
            lo, hi = self.buckets[0]
            first = grads[lo:hi] + (loss,)
            handle = ops.all_reduce_start(first, "mean")
            averaged = ()
            for lo, hi in self.buckets[1:]:
                averaged = ops.all_reduce(grads[lo:hi], "mean") + averaged
            first = ops.all_reduce_wait(handle, first)
            # After the start: a collective before it would hold it back on the chain.
            ops.assign(self.rank_losses, ops.all_gather(ops.reshape(loss, (1,)), 0))
            loss = first[-1]
            grads = averaged + first[:-1]
        self.optimizer(grads)
        return loss


def _broadcast_parameters(*cells):
    """Every Parameter of `cells` (weights and optimizer state) takes rank 0's value."""
    from . import distributed

    seen = set()
    for cell in cells:
        for _, p in cell.parameters_and_names():
            if id(p) not in seen:
                seen.add(id(p))
                p.set_data(distributed.broadcast(p.value, 0))


def _buckets(params, bucket_bytes):
    """`(lo, hi)` ranges of `params` of about `bucket_bytes` each, the last Parameters'
    first: the backward pass computes their gradients first, so their collective can start
    earliest."""
    out, hi, size = [], len(params), 0
    for i in range(len(params) - 1, -1, -1):
        size += params[i].size * params[i].dtype.itemsize
        if size >= bucket_bytes:
            out.append((i, hi))
            hi, size = i, 0
    if hi > 0:
        out.append((0, hi))
    return tuple(out)


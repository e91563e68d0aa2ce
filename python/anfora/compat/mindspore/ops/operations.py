"""MindSpore's primitive classes (`mindspore.ops.operations`, imported as `P`): each is built
with its attributes, then called on tensors, in Python or inside a Cell's `construct` (anfora
compiles each `__call__` as it compiles any object used as a value). Their values are
anfora's operations, which follow numpy's semantics."""

import anfora as _af
from anfora import ops


class Primitive:
    """The base of the primitive classes (MindSpore's `Primitive`)."""

    def __repr__(self):
        return f"{type(self).__name__}()"


class Add(Primitive):
    def __call__(self, x, y):
        return x + y


class Sub(Primitive):
    def __call__(self, x, y):
        return x - y


class Mul(Primitive):
    def __call__(self, x, y):
        return x * y


class RealDiv(Primitive):
    def __call__(self, x, y):
        return x / y


Div = RealDiv


class Pow(Primitive):
    def __call__(self, x, y):
        return x ** y


class Maximum(Primitive):
    def __call__(self, x, y):
        return ops.maximum(x, y)


class Minimum(Primitive):
    def __call__(self, x, y):
        return ops.minimum(x, y)


class Greater(Primitive):
    def __call__(self, x, y):
        return x > y


class GreaterEqual(Primitive):
    def __call__(self, x, y):
        return x >= y


class Less(Primitive):
    def __call__(self, x, y):
        return x < y


class LessEqual(Primitive):
    def __call__(self, x, y):
        return x <= y


class Equal(Primitive):
    def __call__(self, x, y):
        return x == y


class NotEqual(Primitive):
    def __call__(self, x, y):
        return x != y


class Neg(Primitive):
    def __call__(self, x):
        return -x


class Square(Primitive):
    def __call__(self, x):
        return x * x


class Sqrt(Primitive):
    def __call__(self, x):
        return ops.sqrt(x)


class Exp(Primitive):
    def __call__(self, x):
        return ops.exp(x)


class Log(Primitive):
    def __call__(self, x):
        return ops.log(x)


class Abs(Primitive):
    def __call__(self, x):
        return ops.abs(x)


class ReLU(Primitive):
    def __call__(self, x):
        return ops.relu(x)


class Sigmoid(Primitive):
    def __call__(self, x):
        return ops.sigmoid(x)


class Tanh(Primitive):
    def __call__(self, x):
        return ops.tanh(x)


class Softmax(Primitive):
    def __init__(self, axis=-1):
        self.axis = axis

    def __call__(self, x):
        return ops.softmax(x, axis=self.axis)


class LogSoftmax(Primitive):
    def __init__(self, axis=-1):
        self.axis = axis

    def __call__(self, x):
        return ops.log_softmax(x, axis=self.axis)


class MatMul(Primitive):
    """`MatMul(transpose_a=False, transpose_b=False)(a, b)` for matrices."""

    def __init__(self, transpose_a=False, transpose_b=False):
        self.transpose_a = transpose_a
        self.transpose_b = transpose_b

    def __call__(self, a, b):
        if self.transpose_a:
            a = ops.transpose(a)
        if self.transpose_b:
            b = ops.transpose(b)
        return a @ b


class _Reduce(Primitive):
    """`ReduceX(keep_dims=False)(x, axis=())`: `()` reduces every axis, as in MindSpore."""

    def __init__(self, keep_dims=False):
        self.keep_dims = keep_dims


class ReduceSum(_Reduce):
    def __call__(self, x, axis=()):
        return ops.sum(x, axis=None if axis == () else axis, keepdims=self.keep_dims)


class ReduceMean(_Reduce):
    def __call__(self, x, axis=()):
        return ops.mean(x, axis=None if axis == () else axis, keepdims=self.keep_dims)


class ReduceMax(_Reduce):
    def __call__(self, x, axis=()):
        return ops.max(x, axis=None if axis == () else axis, keepdims=self.keep_dims)


class ReduceMin(_Reduce):
    def __call__(self, x, axis=()):
        return ops.min(x, axis=None if axis == () else axis, keepdims=self.keep_dims)


class ReduceProd(_Reduce):
    def __call__(self, x, axis=()):
        return ops.prod(x, axis=None if axis == () else axis, keepdims=self.keep_dims)


class AddN(Primitive):
    """`AddN()(inputs)`: the sum of a tuple or list of tensors."""

    def __call__(self, inputs):
        total = inputs[0]
        for t in inputs[1:]:
            total = total + t
        return total


class Cast(Primitive):
    def __call__(self, x, dtype):
        return ops.cast(x, dtype)


class Reshape(Primitive):
    def __call__(self, x, shape):
        return ops.reshape(x, shape)


class Transpose(Primitive):
    def __call__(self, x, perm):
        return ops.transpose(x, perm)


class Shape(Primitive):
    def __call__(self, x):
        return x.shape


class OnesLike(Primitive):
    def __call__(self, x):
        return ops.ones_like(x)


class ZerosLike(Primitive):
    def __call__(self, x):
        return ops.zeros_like(x)


class Concat(Primitive):
    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, inputs):
        return ops.concat(inputs, axis=self.axis)


class ExpandDims(Primitive):
    def __call__(self, x, axis):
        return ops.expand_dims(x, axis)


class Squeeze(Primitive):
    """`Squeeze(axis=())(x)`: `()` removes every axis of length 1."""

    def __init__(self, axis=()):
        self.axis = axis

    def __call__(self, x):
        return ops.squeeze(x, None if self.axis == () else self.axis)


class Gather(Primitive):
    """`Gather()(input_params, input_indices, axis)`: rows (or slices along `axis`) at the
    indices."""

    def __call__(self, input_params, input_indices, axis):
        return ops.take(input_params, input_indices, axis)


class OneHot(Primitive):
    """`OneHot(axis=-1)(indices, depth, on_value, off_value)`."""

    def __init__(self, axis=-1):
        if axis != -1:
            raise ValueError("OneHot: only axis=-1 is supported by anfora's MindSpore layer")
        self.axis = axis

    def __call__(self, indices, depth, on_value, off_value):
        hot = ops.one_hot(indices, depth, on_value.dtype)
        return hot * (on_value - off_value) + off_value


class Argmax(Primitive):
    """`Argmax(axis=-1, output_type=int32)(x)`."""

    def __init__(self, axis=-1, output_type=_af.int32):
        self.axis = axis
        self.output_type = output_type

    def __call__(self, x):
        return ops.cast(ops.argmax(x, axis=self.axis), self.output_type)


class Select(Primitive):
    """`Select()(condition, x, y)`: `x` where the condition holds, else `y`."""

    def __call__(self, condition, x, y):
        return ops.where(condition, x, y)


class Stack(Primitive):
    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, inputs):
        return ops.stack(inputs, axis=self.axis)


class Sin(Primitive):
    def __call__(self, x):
        return ops.sin(x)


class Cos(Primitive):
    def __call__(self, x):
        return ops.cos(x)


class Erf(Primitive):
    def __call__(self, x):
        return ops.erf(x)


class Assign(Primitive):
    """`Assign()(variable, value)`: writes the Parameter and returns it."""

    def __call__(self, variable, value):
        return ops.assign(variable, value)


class AssignAdd(Primitive):
    def __call__(self, variable, value):
        return ops.assign_add(variable, value)


class AssignSub(Primitive):
    def __call__(self, variable, value):
        return ops.assign_sub(variable, value)


class ScatterAdd(Primitive):
    """`ScatterAdd()(input_x, indices, updates)`: adds `updates` into the Parameter's rows."""

    def __call__(self, input_x, indices, updates):
        return ops.scatter_add(input_x, indices, updates)


class ScatterUpdate(Primitive):
    def __call__(self, input_x, indices, updates):
        return ops.scatter_update(input_x, indices, updates)


class ScatterNdUpdate(Primitive):
    def __call__(self, input_x, indices, updates):
        return ops.scatter_nd_update(input_x, indices, updates)


class ScatterNdAdd(Primitive):
    def __call__(self, input_x, indices, updates):
        return ops.scatter_nd_add(input_x, indices, updates)


class Depend(Primitive):
    """`Depend()(value, expr)`: `value`, after `expr` (ordering side effects)."""

    def __call__(self, value, expr):
        return ops.depend(value, expr)


class StandardNormal(Primitive):
    """`StandardNormal(seed=0, seed2=0)(shape)`: draws from anfora's generator (the seeds set
    by `set_seed`; the per-primitive seeds are not reproduced, docs/mindspore.md)."""

    def __init__(self, seed=0, seed2=0):
        self.seed = seed
        self.seed2 = seed2

    def __call__(self, shape):
        return ops.normal(shape)


class UniformReal(StandardNormal):
    def __call__(self, shape):
        return ops.uniform(shape)


class Print(Primitive):
    """`Print()(*inputs)`: MindSpore's Print in graph mode, each input on a line of its own,
    tensors in its layout (`Tensor(shape=[2], dtype=Float32, value=[...])`, a 0-d tensor as
    its value), strings and numbers as they are. Called from Python it writes the same (where
    MindSpore's PyNative mode writes each tensor's `repr`)."""

    def __call__(self, *inputs):
        lines = ()
        for x in inputs:
            lines = lines + (ops.format_tensor(x, "mindspore_print"),)
        print(*lines, sep="\n")


__all__ = [n for n, v in dict(globals()).items()
           if isinstance(v, type) and issubclass(v, Primitive) and not n.startswith("_")]

"""`mindspore.ops.functional` (`F`) and MindSpore 2.x's functional gradients, `grad` and
`value_and_grad`. Their results are objects whose `__call__` compiles, so they can be made at
module level and called inside `ms.jit` functions and `construct`, as MindSpore 2.x's
tutorials write training steps."""

import anfora as _af
from anfora.nn import Cell as _Cell


class _Split(_Cell):
    """`fn`'s outputs `(value, aux...)` as the pair `(value, (aux...))` that anfora's
    `has_aux` takes apart."""

    def __init__(self, fn):
        self.fn = fn

    def construct(self, *args):
        out = self.fn(*args)
        return out[0], out[1:]


class _Gradient:
    """The gradient function `grad` / `value_and_grad` return. With `has_aux`, `fn` returns
    `(value, aux...)`: the gradient is that of `value` alone; `grad` returns
    `(gradients, (aux...))` and `value_and_grad` `((value, aux...), gradients)`, as
    MindSpore's do, from one run of `fn`."""

    def __init__(self, fn, grad_position, weights, has_aux, with_value):
        self.fn = fn
        self.split = _Split(fn)
        self.argnums = grad_position
        self.weights = weights
        self.has_aux = has_aux
        self.with_value = with_value
        # `split` takes `*args`, so its gradient at one position comes as a 1-tuple, where
        # MindSpore gives the tensor for an int `grad_position`.
        self.one_position = isinstance(grad_position, int)

    def __call__(self, *args):
        if self.has_aux:
            if self.with_value:
                (value, aux), grads = _af.value_and_grad(
                    self.split, self.argnums, self.weights, False, "cast", True)(*args)
                return (value,) + aux, self._unwrapped(grads)
            grads, aux = _af.grad(self.split, self.argnums, self.weights, False, "cast",
                                  True)(*args)
            return self._unwrapped(grads), aux
        if self.with_value:
            return _af.value_and_grad(self.fn, self.argnums, self.weights, False, "cast")(*args)
        return _af.grad(self.fn, self.argnums, self.weights, False, "cast")(*args)

    def _unwrapped(self, grads):
        """`split`'s gradients as MindSpore gives `fn`'s: an int position's alone."""
        if not self.one_position:
            return grads
        return (grads[0][0], grads[1]) if self.weights is not None else grads[0]


def _checked(grad_position, weights):
    if grad_position is None and weights is None:
        raise ValueError("`grad_position` and `weight` can not be None at the same time.")
    return grad_position


def grad(fn, grad_position=0, weights=None, has_aux=False):
    """MindSpore's `ops.grad`: the gradients of `fn` with respect to the arguments at
    `grad_position` (an int, a tuple, or None for none) and the Parameters `weights` (then
    `(argument gradients, weight gradients)`)."""
    return _Gradient(fn, _checked(grad_position, weights), weights, bool(has_aux), False)


def value_and_grad(fn, grad_position=0, weights=None, has_aux=False):
    """MindSpore's `ops.value_and_grad`: `(value, gradients)`, as `grad` gives them."""
    return _Gradient(fn, _checked(grad_position, weights), weights, bool(has_aux), True)


__all__ = ["grad", "value_and_grad"]

"""`mindspore.ops.functional` (`F`) and MindSpore 2.x's functional gradient."""

import anfora as _af


def grad(fn, grad_position=0, weights=None, has_aux=False):
    """MindSpore's `ops.grad`: gradients of `fn` with respect to the arguments at
    `grad_position` (an int or a tuple) and, when given, the Parameters `weights` (then a pair
    `(argument gradients, weight gradients)`)."""
    if has_aux:
        raise NotImplementedError("grad(has_aux=True) is not supported by anfora's MindSpore layer")
    return _af.grad(fn, argnums=grad_position, weights=weights)


def value_and_grad(fn, grad_position=0, weights=None, has_aux=False):
    """MindSpore's `ops.value_and_grad`: `(value, gradients)`."""
    if has_aux:
        raise NotImplementedError("value_and_grad(has_aux=True) is not supported by anfora's MindSpore layer")
    return _af.value_and_grad(fn, argnums=grad_position, weights=weights)


__all__ = ["grad", "value_and_grad"]

"""Parameters and their updates, run sequentially by CPython.

A ``Parameter`` is a ``Tensor`` whose array is replaced by the update
primitives; a value read from it earlier keeps the old array (reads are
values). ``assign`` is numpy's ``p[...] = v`` (broadcast, any cast); the other
updates compute the new value with the Tensor operators and require the
Parameter's shape and a ``same_kind`` cast, as numpy's in-place operators do.
"""

import numpy as np

from ._core import Tensor, wrap


class Parameter(Tensor):
    __slots__ = ("name", "requires_grad")

    def __init__(self, data, name=None, requires_grad=True):
        if not isinstance(data, Tensor):
            raise TypeError("Parameter() expects a Tensor as data, got " + type(data).__name__)
        super().__init__(np.array(data._a))
        self.name = name
        self.requires_grad = requires_grad

    def assign(self, value):
        return assign(self, value)

    def assign_add(self, value):
        return assign_add(self, value)

    def assign_sub(self, value):
        return assign_sub(self, value)


def _param(fn, p):
    if not isinstance(p, Parameter):
        raise TypeError(
            "ops.%s() expects a Parameter as its first argument, got %s" % (fn, type(p).__name__)
        )
    return p


def _store(fn, p, new):
    a = new._a if isinstance(new, Tensor) else np.asarray(new)
    if a.shape != p._a.shape:
        raise ValueError("%s: shape %s does not fit Parameter of shape %s" % (fn, a.shape, p._a.shape))
    if not np.can_cast(a.dtype, p._a.dtype, "same_kind"):
        raise TypeError("%s: cannot cast %s to %s" % (fn, a.dtype, p._a.dtype))
    p._a = a.astype(p._a.dtype)


def _current(p):
    return Tensor(p._a)


def assign(variable, value):
    p = _param("assign", variable)
    new = np.empty_like(p._a)
    new[...] = value._a if isinstance(value, Tensor) else value
    p._a = new
    return p


def assign_add(variable, value):
    p = _param("assign_add", variable)
    _store("ops.assign_add", p, _current(p) + value)
    return p


def assign_sub(variable, value):
    p = _param("assign_sub", variable)
    _store("ops.assign_sub", p, _current(p) - value)
    return p


def _scatter(fn, variable, indices, updates, nd, add):
    p = _param(fn, variable)
    new = p._a.copy()
    idx = indices._a
    if nd:
        idx = tuple(idx[..., k] for k in range(idx.shape[-1]))
    u = updates._a.astype(p._a.dtype)
    if add:
        np.add.at(new, idx, u)
    else:
        new[idx] = u
    p._a = new
    return p


def scatter_update(input_x, indices, updates):
    return _scatter("scatter_update", input_x, indices, updates, False, False)


def scatter_add(input_x, indices, updates):
    return _scatter("scatter_add", input_x, indices, updates, False, True)


def scatter_nd_update(input_x, indices, updates):
    return _scatter("scatter_nd_update", input_x, indices, updates, True, False)


def scatter_nd_add(input_x, indices, updates):
    return _scatter("scatter_nd_add", input_x, indices, updates, True, True)


def sgd(param, grad, lr):
    p = _param("sgd", param)
    _store("ops.sgd", p, _current(p) - lr * grad)
    return p


def apply_momentum(variable, accumulation, learning_rate, gradient, momentum, use_nesterov=False):
    p = _param("apply_momentum", variable)
    acc = _param("apply_momentum", accumulation)
    _store("ops.apply_momentum", acc, _current(acc) * momentum + gradient)
    a = _current(acc)
    if use_nesterov:
        delta = gradient * learning_rate + a * momentum * learning_rate
    else:
        delta = a * learning_rate
    _store("ops.apply_momentum", p, _current(p) - delta)
    return p


def adam(param, m, v, grad, step, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-8):
    p = _param("adam", param)
    _store("ops.adam", m, beta1 * _current(m) + (1.0 - beta1) * grad)
    _store("ops.adam", v, beta2 * _current(v) + (1.0 - beta2) * (grad * grad))
    c1 = 1.0 - beta1 ** step
    c2 = 1.0 - beta2 ** step
    m_hat = _current(m) / c1
    v_hat = _current(v) / c2
    denom = wrap(np.sqrt(v_hat._a)) + eps
    _store("ops.adam", p, _current(p) - lr * (m_hat / denom))
    return p


def depend(value, *states):
    return value


def set_seed(seed):
    """The oracle does not reproduce anfora's generator: corpus programs never
    print random values, only what does not depend on them."""

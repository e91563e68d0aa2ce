"""Closures that escape (stored, passed, returned) and read variables their creator assigns
later, or assign them with `nonlocal`: Python's late binding through cells, compiled, against
the same code run by CPython + numpy."""

import numpy as np
import pytest

import anfora
from anfora import ops


def scaled_sums(x, n):
    fs = []
    for k in range(n):
        fs = fs + [lambda: x * k]
    total = x * 0.0
    for f in fs:
        total = total + f()
    return total


def make_accumulator(start):
    total = start

    def add(v):
        nonlocal total
        total = total + v
        return total

    def peek():
        return total

    return add, peek


def accumulate(x, n):
    add, peek = make_accumulator(x * 0.0)
    other, other_peek = make_accumulator(x)
    for i in range(n):
        add(x * i)
        other(x)
    return peek(), other_peek()


def late_weights(x, w):
    layers = (lambda v: v @ w,)
    w = w * 2.0
    return layers[0](x)


def _np(a):
    return np.asarray(a, np.float32)


def test_lambdas_collected_in_a_loop_see_the_last_value():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    got = anfora.jit(scaled_sums)(anfora.tensor(x), 4)
    np.testing.assert_array_equal(np.asarray(got), scaled_sums(x, 4))
    np.testing.assert_array_equal(np.asarray(got), x * 12)


def test_factories_keep_a_cell_per_call():
    x = np.array([[1.0, -2.0]], np.float32)
    a, b = anfora.jit(accumulate)(anfora.tensor(x), 3)
    ea, eb = accumulate(x, 3)
    np.testing.assert_array_equal(np.asarray(a), ea)
    np.testing.assert_array_equal(np.asarray(b), eb)
    np.testing.assert_array_equal(np.asarray(b), x * 4)


def test_a_matrix_reassigned_after_the_closure_is_read_when_it_runs():
    x = np.ones((2, 3), np.float32)
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = anfora.jit(late_weights)(anfora.tensor(x), anfora.tensor(w))
    np.testing.assert_allclose(np.asarray(got), late_weights(x, w))


def test_gradients_flow_through_cells():
    def loss(w):
        fs = (lambda: ops.sum(w * w),)
        w = w * 2.0
        return fs[0]()

    v = np.array([1.0, -2.0, 0.5])
    # The closure reads the reassigned w: sum((2v)^2), whose gradient is 8v.
    np.testing.assert_allclose(np.asarray(anfora.grad(loss)(anfora.tensor(v))), 8.0 * v)
    # Eagerly (no compilation) the same function runs as Python does.
    assert float(loss(anfora.tensor(np.ones(3, np.float32)))) == 12.0

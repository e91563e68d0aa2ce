"""Methods compiled with @anfora.jit: `self` attributes resolve at compile time, Parameters
by reference, sub-objects and other methods are compiled on demand."""

import numpy as np
import pytest

import anfora
from anfora import ops


def t(a):
    return anfora.tensor(np.asarray(a))


class Dense:
    def __init__(self, w, b):
        self.w = anfora.Parameter(np.asarray(w, np.float32))
        self.b = anfora.Parameter(np.asarray(b, np.float32))

    def construct(self, x):
        return ops.relu(x @ self.w + self.b)


class Model:
    def __init__(self, rng):
        self.l1 = Dense(rng.standard_normal((4, 3)), rng.standard_normal(3))
        self.l2 = Dense(rng.standard_normal((3, 2)), rng.standard_normal(2))
        self.scale = 0.5
        self.layers = (self.l1, self.l2)

    def head(self, h):
        return h * self.scale

    @anfora.jit
    def forward(self, x):
        h = self.l1(x)  # calling an object runs its `construct`
        for i in range(3):
            h = h + self.l2.b.sum() * 0.0 if i == 0 else h
        return self.head(self.l2(h)), self.l2.w.shape


def np_forward(m, x):
    relu = lambda v: np.maximum(v, 0)
    h = relu(x @ m.l1.w.numpy() + m.l1.b.numpy())
    return relu(h @ m.l2.w.numpy() + m.l2.b.numpy()) * 0.5


def test_methods_sub_objects_and_attributes():
    rng = np.random.default_rng(0)
    m = Model(rng)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    y, shape = m.forward(t(x))
    np.testing.assert_allclose(np.asarray(y), np_forward(m, x), rtol=1e-5, atol=1e-6)
    assert shape == (3, 2)


def test_bound_methods_are_cached_per_instance_and_see_their_own_parameters():
    rng = np.random.default_rng(1)
    a, b = Model(rng), Model(rng)
    assert a.forward is a.forward and a.forward is not b.forward
    x = rng.standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(a.forward(t(x))[0]), np_forward(a, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(b.forward(t(x))[0]), np_forward(b, x), rtol=1e-5, atol=1e-6)
    # Parameters are read when the compiled code runs, not when it compiles.
    a.l1.w.set_data(np.zeros((4, 3), np.float32))
    np.testing.assert_allclose(np.asarray(a.forward(t(x))[0]), np_forward(a, x), rtol=1e-5, atol=1e-6)
    assert a.forward.cache_size == 1


class Counter:
    def __init__(self):
        self.count = anfora.Parameter(np.zeros((), np.float32), name="count")

    @anfora.jit
    def step(self, x):
        ops.assign_add(self.count, ops.sum(x))
        return self.count + 0.0


def test_methods_update_their_parameters():
    c = Counter()
    assert float(c.step(t(np.ones(3, np.float32)))) == 3.0
    assert float(c.step(t(np.ones(3, np.float32)))) == 6.0
    assert float(c.count.numpy()) == 6.0


def test_unbound_access_returns_the_function():
    assert isinstance(Model.forward, anfora.Function)
    assert "bound method" in repr(Model(np.random.default_rng(0)).forward)

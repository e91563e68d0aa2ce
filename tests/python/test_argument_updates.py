"""A function that updates its argument in place changes the caller's array, as numpy does
(issue 27): called by name from compiled code, from a method through `self`, with a Parameter
passed (`sgd(self.w, g)` writes the Parameter), and called from Python with numpy arrays
or anfora arrays (written back into them). Where the caller's array may be held elsewhere, it
is refused (E0306)."""

import numpy as np
import pytest

import anfora
from anfora import Parameter, nn, ops


def sgd(w, g, lr):
    w -= lr * g


class Buffers(nn.Cell):
    def __init__(self):
        self.scale = 2.0

    def construct(self, x):
        buf = x * ops.ones(2)  # a tensor: `alias` names the same array
        alias = buf
        self.double_into(buf)
        self.add_one(buf)
        y = buf * 1.0
        sgd(y, x, 0.5)
        return buf, alias, y

    def double_into(self, b):
        b *= self.scale

    def add_one(self, b):
        self.add(b, 1.0)

    def add(self, b, v):
        b += v


def test_methods_update_the_callers_array_through_a_chain_of_calls():
    x = np.array([1.0, 2.0])
    buf, alias, y = Buffers()(anfora.tensor(x))
    np.testing.assert_array_equal(np.asarray(buf), x * 2.0 + 1.0)
    np.testing.assert_array_equal(np.asarray(alias), x * 2.0 + 1.0)
    np.testing.assert_array_equal(np.asarray(y), x * 2.0 + 1.0 - 0.5 * x)


class Trains(nn.Cell):
    def __init__(self):
        self.w = Parameter(np.array([1.0, 2.0]), name="w")

    def construct(self, g):
        sgd(self.w, g, 0.5)
        return self.w * 1.0


def test_a_parameter_passed_to_a_function_that_updates_it_is_written():
    net = Trains()
    g = anfora.tensor(np.array([1.0, 1.0]))
    np.testing.assert_array_equal(np.asarray(net(g)), [0.5, 1.5])
    np.testing.assert_array_equal(np.asarray(net(g)), [0.0, 1.0])
    np.testing.assert_array_equal(np.asarray(net.w), [0.0, 1.0])


@anfora.jit
def updates_callers_array(x, g):
    sgd(x, g, 1.0)
    return x


def test_an_anfora_tensor_from_python_is_updated_as_a_numpy_array_is():
    x = anfora.tensor(np.ones(2))
    alias = x
    row = anfora.tensor(np.ones((2, 2)))
    out = updates_callers_array(x, anfora.tensor(np.ones(2)))
    np.testing.assert_array_equal(np.asarray(out), [0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(alias), [0.0, 0.0])
    # A view passed in writes its base, as numpy's would.
    updates_callers_array(row[1], anfora.tensor(np.array([1.0, 2.0])))
    np.testing.assert_array_equal(np.asarray(row), [[1.0, 1.0], [0.0, -1.0]])
    # A 0-d tensor: numpy would only rebind a scalar but change a 0-d array, and compiled
    # code has one 0-d type, so it refuses.
    s = anfora.tensor(np.ones(2)).sum()
    with pytest.raises(anfora.CompileError, match="E0306"):
        counts(s, np.zeros(2))
    assert float(s) == 2.0


@anfora.jit
def fill_rows(buf, v):
    for i in range(buf.shape[0]):
        buf[i] = v * i
    buf += 0.5
    return buf.sum()


@anfora.jit
def counts(n, buf):
    n += 1
    buf[0] = n
    return n


def test_numpy_arrays_passed_from_python_are_updated_in_place():
    buf = np.zeros((3, 2))
    alias = buf
    total = fill_rows(buf, np.array([1.0, 2.0]))
    expected = np.array([[0.5, 0.5], [1.5, 2.5], [2.5, 4.5]])
    np.testing.assert_array_equal(buf, expected)
    assert alias is buf and float(total) == expected.sum()
    # An int is only rebound: the caller's stays.
    b = np.zeros(2, dtype=np.int64)
    n = 4
    assert counts(n, b) == 5 and n == 4
    np.testing.assert_array_equal(b, [5, 0])
    # The same function called with anfora Tensors updates them the same way.
    t = anfora.tensor(np.zeros((3, 2)))
    fill_rows(t, anfora.tensor(np.array([1.0, 2.0])))
    np.testing.assert_array_equal(np.asarray(t), expected)


@anfora.jit
def add_into(x, y):
    x += 1.0
    return y * 1.0


def test_an_array_passed_twice_to_a_function_that_updates_one_is_refused():
    a = np.zeros(2)
    with pytest.raises(ValueError, match="'x' in place, and the same array is also passed as 'y'"):
        add_into(a, a)
    with pytest.raises(ValueError, match="also passed as 'y'"):
        add_into(a, a[1:])
    np.testing.assert_array_equal(a, [0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(add_into(a, np.ones(2))), [1.0, 1.0])
    np.testing.assert_array_equal(a, [1.0, 1.0])
    # anfora arrays alike: the same object, or a view of it.
    t = anfora.tensor(np.zeros(2))
    with pytest.raises(ValueError, match="also passed as 'y'"):
        add_into(t, t)
    with pytest.raises(ValueError, match="also passed as 'y'"):
        add_into(t[1:], t)
    np.testing.assert_array_equal(np.asarray(t), [0.0, 0.0])


def scale_rows(x, w):
    x[0] = x[0] * 2.0
    x *= w
    return ops.sum(ops.tanh(x) * x)


def np_scale_rows(x, w):
    x = x.copy()
    x[0] = x[0] * 2.0
    x *= w
    return float(np.sum(np.tanh(x) * x))


def test_the_gradient_of_a_function_updating_its_argument_updates_the_callers_array():
    """`anfora.grad(f)(x, w)` with numpy arrays, where f updates x in place: the gradient is
    f's on the values passed (checked against central differences; the overwritten part's is
    zero), and x is updated as calling f would; `value_and_grad` too, and the same through
    `grad` inside compiled code."""
    rng = np.random.default_rng(5)
    x0, w = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    x = x0.copy()
    alias = x
    gx, gw = anfora.grad(scale_rows, argnums=(0, 1))(x, w)
    eps = 1e-6
    for arg, g, i in ((x0, gx, 0), (w, gw, 1)):
        for idx in np.ndindex(arg.shape):
            plus, minus = [x0, w], [x0, w]
            plus[i], minus[i] = arg.copy(), arg.copy()
            plus[i][idx] += eps
            minus[i][idx] -= eps
            fd = (np_scale_rows(*plus) - np_scale_rows(*minus)) / (2 * eps)
            np.testing.assert_allclose(np.asarray(g)[idx], fd, rtol=1e-6, atol=1e-9)
    updated = x0.copy()
    updated[0] *= 2.0
    updated *= w
    assert alias is x
    np.testing.assert_allclose(x, updated, rtol=1e-15)
    # value_and_grad, and an anfora array.
    t = anfora.tensor(x0.copy())
    value, g = anfora.value_and_grad(scale_rows)(t, anfora.tensor(w))
    np.testing.assert_allclose(float(value), np_scale_rows(x0, w), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(g), np.asarray(gx), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(t), updated, rtol=1e-15)
    # The same array twice is refused before anything runs.
    a = x0.copy()
    with pytest.raises(ValueError, match="'x' in place, and the same array is also passed as 'w'"):
        anfora.grad(scale_rows)(a, a)
    np.testing.assert_array_equal(a, x0)


@anfora.jit
def step_in_compiled_code(x, w):
    x = x * 1.0
    g = anfora.grad(scale_rows, argnums=1)(x, w)
    return x, g


def test_the_gradient_of_a_function_updating_its_argument_inside_compiled_code():
    rng = np.random.default_rng(6)
    x0, w = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    x, g = step_in_compiled_code(x0, w)
    updated = x0.copy()
    updated[0] *= 2.0
    updated *= w
    np.testing.assert_allclose(np.asarray(x), updated, rtol=1e-15)
    want = anfora.grad(scale_rows, argnums=1)(x0.copy(), w)
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-14)

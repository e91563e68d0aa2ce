"""A function that updates its argument in place changes the caller's array, as numpy does
(issue 27): called by name from compiled code, from a method through `self`, and with a
Parameter passed (`sgd(self.w, g)` writes the Parameter). Where the caller's array may be
held elsewhere, or the caller is Python, it is refused (E0306)."""

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


def test_an_array_from_python_is_not_updated_but_refused():
    with pytest.raises(anfora.CompileError, match=r"E0306.*in-place update of 'x'") as info:
        updates_callers_array(anfora.tensor(np.ones(2)), anfora.tensor(np.ones(2)))
    assert f"{__file__}:{updates_callers_array.__wrapped__.__code__.co_firstlineno + 2}:5" in str(info.value)

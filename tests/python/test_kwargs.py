"""`**kwargs`, `f(**d)` and dicts with string keys in compiled code, against the same code run
by CPython + numpy; gradients through them against central finite differences in float64."""

import numpy as np
import pytest

import anfora
from anfora import Parameter, nn, ops
from test_grad import numeric_grad  # central differences in float64


def t(a):
    return anfora.tensor(np.asarray(a, dtype=np.float64))


def layer(x, w, *, act=None, **opts):
    y = x * w
    if "bias" in opts:
        y = y + opts["bias"]
    if act == "relu":
        y = ops.relu(y)
    return y * opts.get("scale", 1.0)


def forward(*args, **kwargs):
    return layer(*args, **kwargs)


def configured(x, cfg):
    return forward(x, cfg["w"], **cfg["extra"])


def describe(**kw):
    return kw, len(kw), tuple(kw)


def test_keyword_arguments_are_collected_and_forwarded():
    x = np.array([1.0, -2.0, 3.0])
    f = anfora.jit(forward)
    for kwargs in ({}, {"bias": 0.5}, {"act": "relu", "scale": 2.0, "bias": -1.0}):
        got = f(t(x), 2.0, **kwargs)
        want = forward(x, 2.0, **{k: v for k, v in kwargs.items()})
        np.testing.assert_allclose(np.asarray(got), want)


def test_dicts_pass_in_and_out_of_compiled_code():
    x = np.array([0.5, 1.5])
    cfg = {"w": 3.0, "extra": {"bias": 1.0, "scale": 0.5}}
    got = anfora.jit(configured)(t(x), cfg)
    np.testing.assert_allclose(np.asarray(got), configured(x, cfg))
    kw, n, keys = anfora.jit(describe)(a=1, b="two", c=(3.0,))
    assert kw == {"a": 1, "b": "two", "c": (3.0,)} and n == 3 and keys == ("a", "b", "c")
    with pytest.raises(TypeError, match="dicts with string keys"):
        anfora.jit(configured)(t(x), {1: 2.0})


def test_a_keyword_given_twice_raises_as_in_python():
    def twice(x):
        d = {"bias": 1.0}
        return layer(x, 2.0, bias=3.0, **d)

    with pytest.raises(TypeError, match="got multiple values for keyword argument 'bias'"):
        anfora.jit(twice)(t([1.0]))


class Scaled(nn.Cell):
    def __init__(self):
        self.w = Parameter(np.array([1.5, -0.5]), name="w")

    def construct(self, x, **opts):
        return layer(x, self.w, **opts)


def test_cell_methods_take_keyword_arguments():
    net = Scaled()
    x = np.array([2.0, 4.0])
    got = net(t(x), bias=1.0, scale=3.0)
    np.testing.assert_allclose(np.asarray(got), (x * np.array([1.5, -0.5]) + 1.0) * 3.0)


def test_gradients_through_dict_items_match_finite_differences():
    def loss(w, b):
        cfg = {"w": w, "shift": b * b, "scale": 2.0}
        y = cfg["w"] * cfg.get("shift") * cfg.get("scale", 1.0) + cfg.get("missing", w)
        return ops.sum(ops.tanh(y))

    w = np.array([0.3, -0.7, 1.1])
    b = np.array([0.5, 0.2, -0.4])
    gw, gb = anfora.grad(loss, argnums=(0, 1))(t(w), t(b))

    def value(w, b):
        y = w * (b * b) * 2.0 + w
        return np.sum(np.tanh(y))

    np.testing.assert_allclose(np.asarray(gw), numeric_grad(value, (w, b), 0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), numeric_grad(value, (w, b), 1), rtol=1e-6)


def weighted(x, **weights):
    total = x * 0.0
    for name, w in weights.items():
        total = total + w * len(name)
    return total, tuple(weights.keys())


def test_dict_views_in_for_headers():
    x = np.array([1.0, 2.0])
    got, keys = anfora.jit(weighted)(t(x), a=1.0, bb=2.0)
    want, want_keys = weighted(x, a=1.0, bb=2.0)
    np.testing.assert_allclose(np.asarray(got), want)
    assert keys == want_keys == ("a", "bb")

"""Objects as values in compiled code (issue 27): Cells, bound methods, compiled functions and
other objects passed as arguments, stored in tuples, returned, chosen by a condition and
handed to grad / GradOperation; their attributes read through the value; the Parameters
reached that way read and written as through `self`. Gradients are checked against central
finite differences in float64."""

import threading

import numpy as np
import pytest

import anfora
from anfora import GradOperation, Parameter, nn, ops
from test_grad import numeric_grad  # central differences in float64


def t(a):
    return anfora.tensor(np.asarray(a, dtype=np.float64))


class Scale(nn.Cell):
    def __init__(self, k):
        self.w = Parameter(np.array([k, k + 1.0]), name=f"w{int(k)}")
        self.k = k
        self.order = 1
        self.lock = threading.Lock()
        self.config = Config()

    def construct(self, x):
        return self.w * x

    def double(self, x):
        return 2.0 * self(x)


class Config:
    def __init__(self):
        self.offset = 3.0

    def shifted(self, x):
        return x + self.offset


def apply(f, x):
    return f(x)


def read(net, x):
    return net.w * x + net.k + net.double(x)


def pick(a, b, first):
    return a if first else b


class Passes(nn.Cell):
    def __init__(self):
        self.a = Scale(1.0)
        self.b = Scale(2.0)

    def construct(self, x, flag):
        chosen = self.a if flag > 0 else self.b
        returned = pick(self.a, self.b, False)
        pair = (self.a, self.b)
        return chosen(x) + apply(self.b, x) + read(self.a, x) + returned(x) + pair[0](x)


def test_cells_are_passed_returned_stored_and_chosen():
    x = np.array([3.0, 4.0])
    a = np.array([1.0, 2.0]) * x
    b = np.array([2.0, 3.0]) * x
    net = Passes()
    for flag, chosen in [(1.0, a), (-1.0, b)]:
        expected = chosen + b + (a + 1.0 + 2 * a) + b + a
        np.testing.assert_array_equal(np.asarray(net(t(x), flag)), expected)


class Stack(nn.Cell):
    def __init__(self):
        self.layers = (Scale(1.0), Scale(2.0), Scale(3.0))

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return x + self.layers[1](x)


def test_a_tuple_of_cells_is_iterated_and_indexed():
    x = np.array([1.0, -2.0])
    y = x * np.array([1.0, 2.0]) * np.array([2.0, 3.0]) * np.array([3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(Stack()(t(x))), y + np.array([2.0, 3.0]) * y)


class RunTimeChoice(nn.Cell):
    def __init__(self):
        self.a = Scale(1.0)
        self.b = Scale(2.0)

    def construct(self, x):
        chosen = self.a if ops.sum(x) > 0 else self.b
        # Both objects have `order` 1: the attribute is known whichever runs.
        return chosen(x) * chosen.order


def test_an_object_chosen_by_a_tensor_condition_is_called():
    net = RunTimeChoice()
    np.testing.assert_array_equal(np.asarray(net(t([3.0, 4.0]))), [3.0, 8.0])
    np.testing.assert_array_equal(np.asarray(net(t([-3.0, -4.0]))), [-6.0, -12.0])


@anfora.jit
def square(x):
    return x * x


def twice(f, x):
    return f(f(x))


@anfora.jit
def square_twice(x):
    return twice(square, x)


def test_compiled_functions_and_bound_methods_are_values():
    np.testing.assert_array_equal(np.asarray(square_twice(t([2.0, 3.0]))), [16.0, 81.0])

    class Uses(nn.Cell):
        def __init__(self):
            self.inner = Scale(2.0)

        def construct(self, x):
            return twice(self.inner.double, x)

    np.testing.assert_array_equal(np.asarray(Uses()(t([1.0, 1.0]))), [16.0, 36.0])


def bump(net, x):
    ops.assign_add(net.w, x)
    return x


class Writes(nn.Cell):
    def __init__(self):
        self.a = Scale(1.0)

    def construct(self, x):
        bump(self.a, x)
        return self.a.w * 1.0


def test_parameters_written_through_an_object_passed_in():
    net = Writes()
    x = t([3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(net(x)), [4.0, 6.0])
    np.testing.assert_array_equal(np.asarray(net(x)), [7.0, 10.0])
    np.testing.assert_array_equal(np.asarray(net.a.w), [7.0, 10.0])


class PassesConfig(nn.Cell):
    """Passes its Config (an object without `__call__`) to `helper`."""

    def __init__(self, helper):
        self.config = Config()
        self.helper = helper

    def construct(self, x):
        return self.helper(self.config, x)


def shift(config, x):
    return config.shifted(x) + config.offset


def call_it(config, x):
    return config(x)


def test_an_object_that_cannot_be_called_is_a_value_too():
    np.testing.assert_array_equal(np.asarray(PassesConfig(shift)(t([1.0, 2.0]))), [7.0, 8.0])


def test_calling_an_object_that_cannot_be_called_raises_type_error():
    with pytest.raises(TypeError, match="'Config' object is not callable"):
        PassesConfig(call_it)(t([1.0]))


# ---- gradients ----------------------------------------------------------------------------


class Quadratic(nn.Cell):
    def __init__(self):
        self.w = Parameter(np.array([0.5, -1.5, 2.0]), name="w")

    def construct(self, x, y):
        h = ops.tanh(self.w * x) * y
        return (h * h).sum()


def quadratic(w, x, y):
    h = np.tanh(w * x) * y
    return np.sum(h * h)


class GradAll(nn.Cell):
    """MindSpore's gradient wrapper, as written in MindSpore's tutorials."""

    def __init__(self, net):
        self.net = net
        self.grad = GradOperation(get_all=True)

    def construct(self, *inputs):
        return self.grad(self.net)(*inputs)


class GradWeights(nn.Cell):
    def __init__(self, net):
        self.net = net
        self.weights = nn.ParameterTuple([net.w])
        self.grad = GradOperation(get_by_list=True)

    def construct(self, x, y):
        return self.grad(self.net, self.weights)(x, y)


class ValueAndGrad(nn.Cell):
    def __init__(self, net):
        self.net = net

    def construct(self, x, y):
        return anfora.value_and_grad(self.net, (0, 1), (self.net.w,))(x, y)


def test_grad_of_a_cell_passed_to_grad_operation_matches_finite_differences():
    net = Quadratic()
    w = np.asarray(net.w)
    x, y = np.array([0.3, -0.7, 1.1]), np.array([1.5, 0.25, -2.0])
    gx, gy = GradAll(net)(t(x), t(y))
    np.testing.assert_allclose(np.asarray(gx), numeric_grad(quadratic, [w, x, y], 1), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(np.asarray(gy), numeric_grad(quadratic, [w, x, y], 2), rtol=1e-6, atol=1e-9)
    (gw,) = GradWeights(net)(t(x), t(y))
    np.testing.assert_allclose(np.asarray(gw), numeric_grad(quadratic, [w, x, y], 0), rtol=1e-6, atol=1e-9)
    value, ((gx2, gy2), (gw2,)) = ValueAndGrad(net)(t(x), t(y))
    assert float(value) == pytest.approx(quadratic(w, x, y), rel=1e-12)
    np.testing.assert_allclose(np.asarray(gx2), np.asarray(gx), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gy2), np.asarray(gy), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gw2), np.asarray(gw), rtol=1e-12)


def methods(x):
    a = x.reshape(2, 3).sum(axis=0)
    b = x.reshape((3, 2)).transpose().mean(1, keepdims=True)
    c = x.reshape(3, 2).transpose(1, 0).max(axis=1)
    return (a * a).sum() + (b * b).sum() + c.prod() + x.astype(anfora.float64).min()


def np_methods(x):
    a = x.reshape(2, 3).sum(axis=0)
    b = x.reshape((3, 2)).transpose().mean(1, keepdims=True)
    c = x.reshape(3, 2).transpose(1, 0).max(axis=1)
    return (a * a).sum() + (b * b).sum() + c.prod() + x.min()


def test_grad_through_tensor_methods_matches_finite_differences():
    x = np.array([0.5, -1.0, 2.0, 1.5, -0.25, 3.0])
    assert float(anfora.jit(methods)(t(x))) == pytest.approx(np_methods(x), rel=1e-12)
    g = anfora.grad(methods)(t(x))
    np.testing.assert_allclose(np.asarray(g), numeric_grad(np_methods, [x], 0), rtol=1e-6, atol=1e-8)


# ---- *args from Python ---------------------------------------------------------------------


@anfora.jit
def packs(first, *rest, scale=2.0):
    total = first
    for r in rest:
        total = total + r
    return total * scale, len(rest)


def test_star_args_entries_bind_as_python_does():
    x = t([1.0, 2.0])
    out, n = packs(x)
    np.testing.assert_array_equal(np.asarray(out), [2.0, 4.0])
    assert n == 0
    out, n = packs(x, x, x, scale=0.5)
    np.testing.assert_array_equal(np.asarray(out), [1.5, 3.0])
    assert n == 2


# ---- refusals --------------------------------------------------------------------------------


def peek(net, x):
    return net.missing * x


def locked(net, x):
    return net.lock


class Refused(nn.Cell):
    def __init__(self, which):
        self.a = Scale(1.0)
        self.b = Scale(2.0)
        self.wide = Wide()
        self.which = which

    def construct(self, x):
        if self.which == 0:
            return peek(self.a, x)
        if self.which == 1:
            return locked(self.a, x)
        chosen = self.a if ops.sum(x) > 0 else self.wide
        return chosen.w * x


class Wide(nn.Cell):
    def __init__(self):
        self.w = Parameter(np.ones(3), name="wide_w")

    def construct(self, x):
        return self.w * x


class Chosen(nn.Cell):
    def __init__(self):
        self.a = Scale(1.0)
        self.b = Scale(2.0)
        self.c = Scale(3.0)

    def construct(self, x, k):
        chosen = self.a if ops.sum(x) > 0 else self.b
        third = self.c if k == 2 else chosen
        return chosen.w * x + third.k + third.w


def test_attributes_of_objects_chosen_at_run_time_are_those_of_the_chosen_one():
    # The objects differ in `w` (two Parameters of one shape) and in `k` (numbers): the read
    # selects the chosen object's, as Python does.
    net = Chosen()
    x = t([1.0, 2.0])
    for sign, k in ((1.0, 0), (-1.0, 0), (1.0, 2), (-1.0, 2)):
        got = np.asarray(net(x * sign, anfora.mutable(k)))
        chosen = net.a if sign > 0 else net.b
        third = net.c if k == 2 else chosen
        want = np.asarray(chosen.w) * np.asarray(x * sign) + third.k + np.asarray(third.w)
        np.testing.assert_allclose(got, want)


def line_of(fn, text):
    import inspect

    lines, first = inspect.getsourcelines(fn)
    row = next(i for i, s in enumerate(lines) if text in s)
    return first + row, lines[row].index(text) + 1


@pytest.mark.parametrize(
    "which, code, message, fn, text",
    [
        (0, "E0206", "'Scale' object has no attribute 'missing'", peek, "net.missing"),
        (1, "E0209", "'Scale.lock' is a 'lock' object", locked, "net.lock"),
        (2, "E0210", "the attribute 'w' is read from an object chosen at run time, and the objects it may be differ there", Refused.construct, "chosen.w"),
    ],
)
def test_attributes_through_values_that_cannot_be_read_are_refused_at_their_use(which, code, message, fn, text):
    with pytest.raises(anfora.CompileError) as info:
        Refused(which)(t([1.0, 2.0]))
    msg = str(info.value)
    line, col = line_of(fn, text)
    flat = " ".join(msg.replace("│", " ").split())  # long messages wrap
    assert f"error[{code}]: {message}" in flat, msg
    assert f"{__file__}:{line}:{col}" in msg, msg


class ChosenLoss(nn.Cell):
    def __init__(self):
        self.a = Scale(1.0)
        self.b = Scale(2.0)

    def construct(self, x):
        chosen = self.a if ops.sum(x) > 0 else self.b
        return ops.sum(chosen.w * x * x)


def test_attributes_of_objects_chosen_at_run_time_in_differentiated_code_are_refused_at_the_read():
    net = ChosenLoss()
    x = t([1.0, 2.0])
    np.testing.assert_allclose(np.asarray(net(x)), np.sum(np.array([1.0, 2.0]) * np.array([1.0, 4.0])))
    with pytest.raises(anfora.CompileError) as info:
        anfora.grad(lambda v: net(v))(x)
    msg = " ".join(str(info.value).replace("│", " ").split())
    assert "error[E0502]: the attribute 'w' of a 'Scale' object used as a value is read in differentiated code" in msg, msg
    line, col = line_of(ChosenLoss.construct, "chosen.w")
    assert f"{__file__}:{line}:{col}" in str(info.value), str(info.value)


# ---- Cells held in a tuple or list, called in a loop, in differentiated code ----------------


class Layers(nn.Cell):
    """Layers of different shapes in a tuple (or a list) attribute, run by a `for` loop: the
    usual shape of a network, which the grad stage unrolls as inference unrolls the loop."""

    def __init__(self, sizes, as_list=False):
        pairs = list(zip(sizes, sizes[1:]))
        layers = [nn.Dense(a, b, seed=i, dtype="float64") for i, (a, b) in enumerate(pairs)]
        self.layers = layers if as_list else tuple(layers)

    def construct(self, x):
        for layer in self.layers:
            x = ops.tanh(layer(x))
        return ops.sum(x * x)


def stack_loss_np(weights, x):
    """Layers' loss in numpy, with weights as (w0, b0, w1, b1, ...)."""
    for w, b in zip(weights[::2], weights[1::2]):
        x = np.tanh(x @ w + b)
    return np.sum(x * x)


def check_against_differences(net, got, x):
    weights = [np.asarray(p) for p in net.trainable_params()]
    assert len(got) == len(weights)
    for i, g in enumerate(got):
        want = numeric_grad(lambda *ws: stack_loss_np(ws, x), weights, i)
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("as_list", [False, True])
def test_grad_of_a_cell_whose_layers_a_loop_runs_equals_finite_differences(as_list):
    net = Layers([3, 5, 4, 2], as_list=as_list)
    x = np.random.default_rng(1).normal(size=(2, 3))
    np.testing.assert_allclose(
        np.asarray(net(t(x))), stack_loss_np([np.asarray(p) for p in net.trainable_params()], x)
    )
    # The Cell itself handed to grad from Python, as MindSpore's GradOperation takes it.
    got = anfora.grad(net, argnums=None, weights=net.trainable_params())(t(x))
    check_against_differences(net, got, x)
    by_list = GradOperation(get_by_list=True)(net, net.trainable_params())(t(x))
    for a, b in zip(got, by_list):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


class LayersStep(nn.Cell):
    """The gradient taken inside compiled code, of a network whose loop runs its layers."""

    def __init__(self, net):
        self.net = net
        self.weights = net.trainable_params()
        self.grad = GradOperation(get_by_list=True)

    def construct(self, x):
        return self.grad(self.net, self.weights)(x)


def test_grad_inside_compiled_code_of_a_loop_over_layers_equals_finite_differences():
    net = Layers([2, 3, 3, 1])
    x = np.random.default_rng(2).normal(size=(4, 2))
    check_against_differences(net, LayersStep(net)(t(x)), x)


class Enumerated(nn.Cell):
    def __init__(self):
        self.layers = (nn.Dense(2, 3, seed=3, dtype="float64"), nn.Dense(3, 2, seed=4, dtype="float64"))

    def construct(self, x):
        total = 0.0
        for i, layer in enumerate(self.layers):
            x = layer(x)
            total = total + (i + 1.0) * ops.sum(x * x)
        return total


def test_grad_through_enumerate_over_layers_equals_finite_differences():
    net = Enumerated()
    x = np.random.default_rng(3).normal(size=(2, 2))

    def loss_np(ws, x):
        total = 0.0
        for i, (w, b) in enumerate(zip(ws[::2], ws[1::2])):
            x = x @ w + b
            total += (i + 1.0) * np.sum(x * x)
        return total

    got = anfora.grad(net, argnums=None, weights=net.trainable_params())(t(x))
    weights = [np.asarray(p) for p in net.trainable_params()]
    for i, g in enumerate(got):
        want = numeric_grad(lambda *ws: loss_np(ws, x), weights, i)
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6, atol=1e-9)


# ---- star and `**` calls in differentiated code ------------------------------------------------


class Affine(nn.Cell):
    def __init__(self):
        self.fc = nn.Dense(3, 2, seed=5, dtype="float64")

    def construct(self, x, scale, shift=0.0):
        return ops.tanh(self.fc(x) * scale + shift)


class StarLoss(nn.Cell):
    """MindSpore's loss wrapper for any number of inputs: the last is the label."""

    def __init__(self, net):
        self.net = net

    def construct(self, *inputs):
        out = self.net(*inputs[:-1])
        return ops.sum((out - inputs[-1]) ** 2)


class KeywordLoss(nn.Cell):
    def __init__(self, net):
        self.net = net

    def construct(self, x, y, **kw):
        return ops.sum((self.net(x, **kw) - y) ** 2)


def affine_loss_np(w, b, x, y, scale, shift=0.0):
    return np.sum((np.tanh((x @ w + b) * scale + shift) - y) ** 2)


def test_grad_through_star_and_double_star_calls_of_a_cell_equals_finite_differences():
    rng = np.random.default_rng(6)
    x, y, scale = rng.normal(size=(4, 3)), rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    net = Affine()
    weights = [np.asarray(p) for p in net.trainable_params()]
    cases = [
        (StarLoss(net), (t(x), t(scale), t(y)), {}, lambda w, b: affine_loss_np(w, b, x, y, scale)),
        (
            KeywordLoss(net),
            (t(x), t(y)),
            {"scale": t(scale), "shift": t(0.5)},
            lambda w, b: affine_loss_np(w, b, x, y, scale, 0.5),
        ),
    ]
    for loss, args, kwargs, loss_np in cases:
        np.testing.assert_allclose(np.asarray(loss(*args, **kwargs)), loss_np(*weights))
        got = GradOperation(get_by_list=True)(loss, net.trainable_params())(*args, **kwargs)
        for i, g in enumerate(got):
            want = numeric_grad(loss_np, weights, i)
            np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6, atol=1e-9)


# ---- attributes read through objects used as values, in differentiated code -----------------


class PenalizedLayers(nn.Cell):
    """An L2 penalty over the layers a loop runs: each layer's weight read through the loop's
    variable, in differentiated code."""

    def __init__(self):
        self.layers = (
            nn.Dense(3, 4, seed=7, dtype="float64"),
            nn.Dense(4, 2, seed=8, dtype="float64"),
        )

    def construct(self, x):
        penalty = 0.0
        for layer in self.layers:
            x = ops.tanh(layer(x))
            penalty = penalty + 0.5 * ops.sum(layer.weight * layer.weight)
        return ops.sum(x * x) + penalty


def scaled_by(net, x):
    return net.w * x + net.k


class PassesItself(nn.Cell):
    def __init__(self):
        self.s = Scale(1.5)

    def construct(self, x):
        return ops.sum(scaled_by(self.s, x) ** 2)


def test_parameters_read_through_objects_in_differentiated_code_get_their_gradients():
    x = np.random.default_rng(9).normal(size=(2, 3))
    net = PenalizedLayers()
    weights = [np.asarray(p) for p in net.trainable_params()]

    def loss_np(w0, b0, w1, b1):
        h = np.tanh(np.tanh(x @ w0 + b0) @ w1 + b1)
        return np.sum(h * h) + 0.5 * (np.sum(w0 * w0) + np.sum(w1 * w1))

    np.testing.assert_allclose(np.asarray(net(t(x))), loss_np(*weights))
    got = anfora.grad(net, argnums=None, weights=net.trainable_params())(t(x))
    for i, g in enumerate(got):
        np.testing.assert_allclose(np.asarray(g), numeric_grad(loss_np, weights, i), rtol=1e-6, atol=1e-9)

    # An object passed to a helper that reads its Parameter and a number.
    net = PassesItself()
    v = np.array([0.5, -1.0])
    w = np.asarray(net.s.w)
    gx, (gw,) = anfora.grad(net, argnums=0, weights=[net.s.w])(t(v))
    np.testing.assert_allclose(np.asarray(gx), numeric_grad(lambda v: np.sum((w * v + 1.5) ** 2), [v], 0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gw), numeric_grad(lambda w: np.sum((w * v + 1.5) ** 2), [w], 0), rtol=1e-6)


def _applied(net, x, k):
    return ops.sum(ops.tanh(net(x)) * k)


class GradOfAHelperTakingTheNet(nn.Cell):
    """`grad(helper, ...)(self.net, x, k)`: the network passed to the differentiated function
    as an argument (the same constant at the call), as JAX users pass a model to a loss."""

    def __init__(self):
        self.net = Scale(0.5)
        self.weights = (self.net.w,)

    def construct(self, x, k):
        gx = anfora.grad(_applied, argnums=(1, 2))(self.net, x, k)
        gw = anfora.grad(_applied, argnums=None, weights=self.weights)(self.net, x, k)
        return gx, gw


def test_grad_of_a_function_the_network_is_passed_to_equals_finite_differences():
    x, k = np.array([0.3, -1.2]), 1.5
    net = GradOfAHelperTakingTheNet()
    w = np.asarray(net.net.w)
    (gx, gk), (gw,) = net(t(x), k)

    def loss(w, x, k):
        return float(np.sum(np.tanh(w * x) * k))

    np.testing.assert_allclose(np.asarray(gx), numeric_grad(loss, [w, x, k], 1), rtol=1e-6)
    np.testing.assert_allclose(float(gk), numeric_grad(loss, [w, x, k], 2), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gw), numeric_grad(loss, [w, x, k], 0), rtol=1e-6)


class Body(nn.Cell):
    def __init__(self, w):
        self.w = Parameter(np.asarray(w, dtype=np.float64))

    def construct(self, x):
        return ops.tanh(x * self.w)

    def energy(self, x):
        return ops.sum(x * self.w * self.w)


class WithBody(nn.Cell):
    def __init__(self):
        self.body = Body([0.5, -1.0, 2.0])
        self.head = Body([1.5, 0.25, -0.5])

    def construct(self, x):
        return self.head(self.body(x))


def _through_parts(net, x):
    # Sub-objects, a sub-object's method and a chain of attributes, read through `net`.
    return ops.sum(net.head(net.body(x))) + net.body.energy(x) * net.head.w[0]


class CallsAHelperWithItsNet(nn.Cell):
    def __init__(self):
        self.net = WithBody()

    def construct(self, x):
        return _through_parts(self.net, x)


class GradOfAHelperReadingParts(nn.Cell):
    def __init__(self):
        self.net = WithBody()
        self.weights = self.net.trainable_params()

    def construct(self, x):
        return anfora.grad(_through_parts, argnums=None, weights=self.weights)(self.net, x)


def _through_parts_np(w_body, w_head, x):
    return float(np.sum(np.tanh(np.tanh(x * w_body) * w_head)) + np.sum(x * w_body * w_body) * w_head[0])


def test_methods_and_sub_objects_read_through_an_object_passed_by_name_get_gradients():
    """In differentiated code, a helper given a network (the same object at every call) reads
    its sub-objects and their methods: the helper is copied for that object, its reads become
    the attributes, and the gradients of the input and every weight equal central
    differences; also when the helper itself is what `grad` differentiates."""
    x = np.array([0.3, -1.2, 0.8])
    top = CallsAHelperWithItsNet()
    wb, wh = np.asarray(top.net.body.w), np.asarray(top.net.head.w)
    np.testing.assert_allclose(float(top(t(x))), _through_parts_np(wb, wh, x), rtol=1e-14)
    gx, (gb, gh) = anfora.grad(top, argnums=0, weights=top.trainable_params())(t(x))
    args = [wb, wh, x]
    np.testing.assert_allclose(np.asarray(gx), numeric_grad(_through_parts_np, args, 2), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), numeric_grad(_through_parts_np, args, 0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gh), numeric_grad(_through_parts_np, args, 1), rtol=1e-6)
    gb2, gh2 = GradOfAHelperReadingParts()(t(x))
    np.testing.assert_allclose(np.asarray(gb2), np.asarray(gb), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(gh2), np.asarray(gh), rtol=1e-14)


def _parts_in_a_loop(net, x):
    for _ in range(2):
        x = net.body(x)
    return ops.sum(x)


class CallsALoopWithItsNet(nn.Cell):
    def __init__(self):
        self.net = WithBody()

    def construct(self, x):
        return _parts_in_a_loop(self.net, x)


def test_sub_objects_read_through_an_object_where_the_helper_cannot_be_copied_are_refused():
    """A helper that creates functions (a loop's body reads its values) is not copied for
    the object it is given: its read of a sub-object stays E0502, at the read."""
    top = CallsALoopWithItsNet()
    x = t([0.3, -1.2, 0.8])
    np.testing.assert_allclose(float(top(x)), float(np.sum(np.tanh(np.tanh(np.asarray(x) * 0.5 * np.array([1, -2, 4])) * np.array([0.5, -1.0, 2.0])))), rtol=1e-14)
    with pytest.raises(anfora.CompileError) as info:
        anfora.grad(top, argnums=0)(x)
    msg = " ".join(str(info.value).replace("│", " ").split())
    assert "error[E0502]: the attribute 'body' of a 'WithBody' object used as a value is read in differentiated code" in msg, msg
    line, col = line_of(_parts_in_a_loop, "net.body")
    assert f"{__file__}:{line}:{col}" in str(info.value), str(info.value)


class CapturesItsParts(nn.Cell):
    """A differentiated lambda reading a tuple of Cells built in `construct`: it calls one and
    reads the other's method."""

    def __init__(self):
        self.b = Body([0.5, -1.0, 2.0])
        self.c = Body([1.0, 2.0, 3.0])

    def construct(self, x):
        pick = (self.b, self.c)
        return anfora.grad(lambda v: ops.sum(pick[0](v)) + pick[1].energy(v))(x)


class CapturesAChoice(nn.Cell):
    def __init__(self):
        self.b = Body([0.5, -1.0, 2.0])
        self.c = Body([1.0, 2.0, 3.0])

    def construct(self, x):
        chosen = self.b if ops.sum(x) > 0 else self.c
        return anfora.grad(lambda v: ops.sum(chosen(v)))(x)


def test_cells_a_differentiated_lambda_reads_from_its_enclosing_function():
    x = np.array([0.3, -1.2, 0.8])
    wb, wc = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    got = CapturesItsParts()(t(x))
    want = numeric_grad(lambda v: float(np.sum(np.tanh(v * wb)) + np.sum(v * wc * wc)), [x], 0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    # A Cell chosen at run time outside the differentiated function is refused at the grad.
    with pytest.raises(anfora.CompileError) as info:
        CapturesAChoice()(t(x))
    msg = " ".join(str(info.value).replace("│", " ").split())
    assert ("error[E0501]: a value the differentiated function reads from its enclosing function "
            "holds a function known only when the program runs") in msg, msg
    line, col = line_of(CapturesAChoice.construct, "anfora.grad(lambda v: ops.sum(chosen(v)))(x)")
    assert f"{__file__}:{line}:{col}" in str(info.value), str(info.value)


def _loss_of(net, x, k):
    return ops.sum(net(x)) * k + net.body.energy(x)


def _loss_of_np(wb, wh, x, k):
    return float(np.sum(np.tanh(np.tanh(x * wb) * wh)) * k + np.sum(x * wb * wb))


def test_a_network_passed_from_python_to_compiled_functions_and_gradients():
    """`anfora.jit(loss)(net, x, k)` and `anfora.grad(loss, ...)(net, x, k)` from Python, as
    JAX and PyTorch users pass a model to a loss: the Cell is a constant of a generated
    function calling the same transform in compiled code; the gradients of the data and of
    the Parameters it reaches (its sub-objects', through a method too) equal central
    differences, and the Cell itself cannot be differentiated."""
    net = WithBody()
    x, k = np.array([0.3, -1.2, 0.8]), 2.0
    wb, wh = np.asarray(net.body.w), np.asarray(net.head.w)
    args = [wb, wh, x, k]
    np.testing.assert_allclose(float(anfora.jit(_loss_of)(net, x, k)), _loss_of_np(*args), rtol=1e-14)
    gx = anfora.grad(_loss_of, argnums=1)(net, x, k)
    np.testing.assert_allclose(np.asarray(gx), numeric_grad(_loss_of_np, args, 2), rtol=1e-6)
    gb, gh = anfora.grad(_loss_of, argnums=None, weights=net.trainable_params())(net, x, k)
    np.testing.assert_allclose(np.asarray(gb), numeric_grad(_loss_of_np, args, 0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gh), numeric_grad(_loss_of_np, args, 1), rtol=1e-6)
    value, (gx2, gk) = anfora.value_and_grad(_loss_of, argnums=(1, 2))(net, x, k=k)
    np.testing.assert_allclose(float(value), _loss_of_np(*args), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(gx2), np.asarray(gx), rtol=1e-14)
    np.testing.assert_allclose(float(gk), numeric_grad(_loss_of_np, args, 3), rtol=1e-6)
    with pytest.raises(TypeError, match=r"argnums 0 is 'net', a WithBody object: differentiate its Parameters with `weights=`"):
        anfora.grad(_loss_of, argnums=0)(net, x, k)
    # Something compiled code cannot hold at all is refused naming the parameter.
    with pytest.raises(anfora.CompileError, match=r"global 'net' is a 'object' object"):
        anfora.jit(_loss_of)(object(), x, k)
    # Another network compiles its own function; the same one reuses it.
    other = WithBody()
    other.body.w.set_data(anfora.tensor(np.array([1.0, 1.0, 1.0])))
    want = _loss_of_np(np.ones(3), wh, x, k)
    np.testing.assert_allclose(float(anfora.jit(_loss_of)(other, x, k)), want, rtol=1e-14)

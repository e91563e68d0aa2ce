"""Gradients from Python: f.grad, anfora.grad / value_and_grad, and the gradients of methods
with respect to their object's Parameters, checked against central finite differences in
float64."""

import numpy as np
import pytest

import anfora
from anfora import ops


def t(a):
    return anfora.tensor(np.asarray(a))


def numeric_grad(f, args, i, eps=1e-6):
    """Central differences of scalar numpy function f with respect to args[i]."""
    x = np.array(args[i], dtype=np.float64)
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        for sign in (1, -1):
            xs = x.copy()
            xs[idx] += sign * eps
            a = list(args)
            a[i] = xs
            g[idx] += sign * f(*a) / (2 * eps)
    return g


@anfora.jit
def loss(w, x, b):
    h = ops.tanh(x @ w + b)
    return ops.sum(h * h) / 2.0


def np_loss(w, x, b):
    h = np.tanh(x @ w + b)
    return np.sum(h * h) / 2.0


def test_grad_of_every_float_tensor_argument_matches_finite_differences():
    rng = np.random.default_rng(0)
    w, x, b = rng.standard_normal((3, 2)), rng.standard_normal((4, 3)), rng.standard_normal(2)
    gw, gx, gb = loss.grad(t(w), t(x), t(b))
    for i, g in enumerate([gw, gx, gb]):
        np.testing.assert_allclose(np.asarray(g), numeric_grad(np_loss, [w, x, b], i), rtol=1e-6, atol=1e-8)


def test_grad_transform_with_argnums_and_value_and_grad():
    rng = np.random.default_rng(1)
    w, x, b = rng.standard_normal((3, 2)), rng.standard_normal((4, 3)), rng.standard_normal(2)
    gw = anfora.grad(loss, argnums=0)(t(w), t(x), t(b))
    np.testing.assert_allclose(np.asarray(gw), numeric_grad(np_loss, [w, x, b], 0), rtol=1e-6, atol=1e-8)
    value, (gw2, gb) = anfora.value_and_grad(loss, argnums=(0, 2))(t(w), t(x), t(b))
    assert float(value) == pytest.approx(np_loss(w, x, b), rel=1e-12)
    np.testing.assert_allclose(np.asarray(gw2), np.asarray(gw), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gb), numeric_grad(np_loss, [w, x, b], 2), rtol=1e-6, atol=1e-8)


def plain(x):
    return ops.sum(ops.exp(x) * x)


def test_grad_of_an_undecorated_function():
    x = np.array([0.5, -1.0, 2.0])
    g = anfora.grad(plain)(t(x))
    np.testing.assert_allclose(np.asarray(g), np.exp(x) * (x + 1), rtol=1e-12)


W = anfora.Parameter(np.array([[1.0, 2.0], [3.0, 4.0]]), name="W")


def weighted(x):
    return ops.sum(ops.sin(x @ W))


def test_grad_with_respect_to_parameters():
    x = np.array([[0.1, 0.2], [0.3, -0.4]])
    gx, (gW,) = anfora.grad(weighted, argnums=0, weights=[W])(t(x))
    w = W.numpy()
    np.testing.assert_allclose(np.asarray(gW), x.T @ np.cos(x @ w), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gx), np.cos(x @ w) @ w.T, rtol=1e-12)
    with pytest.raises(TypeError, match="weights must be Parameters"):
        anfora.grad(weighted, weights=[1.0])


class Linear:
    def __init__(self, w, b):
        self.weight = anfora.Parameter(w, name="weight")
        self.bias = anfora.Parameter(b, name="bias")
        self.frozen = anfora.Parameter(np.ones(2), name="frozen", requires_grad=False)

    @anfora.jit
    def loss(self, x):
        y = x @ self.weight + self.bias + self.frozen * 0.0
        return ops.sum(y * y)


def test_method_grad_returns_and_accumulates_parameter_gradients():
    rng = np.random.default_rng(2)
    w, b, x = rng.standard_normal((3, 2)), rng.standard_normal(2), rng.standard_normal((4, 3))
    m = Linear(w, b)
    gx, (gw, gb) = m.loss.grad(t(x))
    y = x @ w + b
    np.testing.assert_allclose(np.asarray(gw), x.T @ (2 * y), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gb), (2 * y).sum(0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gx), (2 * y) @ w.T, rtol=1e-12)
    np.testing.assert_allclose(m.weight.grad.numpy(), x.T @ (2 * y), rtol=1e-12)
    m.loss.grad(t(x))
    np.testing.assert_allclose(m.weight.grad.numpy(), 2 * (x.T @ (2 * y)), rtol=1e-12)
    assert m.frozen.grad is None
    assert [p for p, _ in anfora.parameters_of(m)] == ["weight", "bias", "frozen"]


def test_grad_needs_something_to_differentiate():
    @anfora.jit
    def count(n):
        return n + 1

    with pytest.raises(ValueError, match="nothing to differentiate"):
        count.grad(3)


def test_grad_operation_default_get_all_and_get_by_list():
    w = anfora.Parameter(np.array([2.0, 3.0, 4.0]), name="w")
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([0.5, -1.0, 2.0])

    def f(x, y):
        return ops.sum(x * y * x * w)

    # d/dx = 2*x*y*w, d/dy = x*x*w, d/dw = x*x*y
    dx, dy, dw = 2 * a * b * w.numpy(), a * a * w.numpy(), a * a * b
    first = anfora.GradOperation()(f)(t(a), t(b))
    np.testing.assert_allclose(first.numpy(), dx)
    gx, gy = anfora.GradOperation(get_all=True)(f)(t(a), t(b))
    np.testing.assert_allclose(gx.numpy(), dx)
    np.testing.assert_allclose(gy.numpy(), dy)
    (gw,) = anfora.GradOperation(get_by_list=True)(f, (w,))(t(a), t(b))
    np.testing.assert_allclose(gw.numpy(), dw)
    (gx, gy), (gw,) = anfora.GradOperation(get_all=True, get_by_list=True)(f, (w,))(t(a), t(b))
    np.testing.assert_allclose(gy.numpy(), dy)
    np.testing.assert_allclose(gw.numpy(), dw)
    # anfora.grad with argnums=None asks for the weights only, as the compiled primitive does.
    (gw,) = anfora.grad(f, None, (w,))(t(a), t(b))
    np.testing.assert_allclose(gw.numpy(), dw)


def test_grad_operation_sens_param_is_a_vector_jacobian_product():
    a = np.array([[1.0, 2.0], [3.0, -1.0]])
    s = np.array([[1.0, 0.0], [2.0, 0.5]])

    def f(x):
        return ops.tanh(x) * 3.0

    g = anfora.GradOperation(sens_param=True)(f)(t(a), t(s))
    np.testing.assert_allclose(g.numpy(), s * 3.0 * (1 - np.tanh(a) ** 2))
    # A sensitivity of another shape is refused, with both shapes named.
    with pytest.raises(anfora.CompileError) as e:
        anfora.GradOperation(sens_param=True)(f)(t(a), t(s[0]))
    text = " ".join(str(e.value).replace("│", " ").split())
    assert "output sensitivity: expected a float64 tensor of shape (2, 2) like the output, got a float64 tensor of shape (2,)" in text
    # The context line above the indented def is the file's own (blank) line.
    assert "if 1:" not in text
    with pytest.raises(TypeError, match="sensitivity"):
        anfora.GradOperation(sens_param=True)(f)()


def test_grad_operation_inside_a_cell_differentiates_a_method_passed_to_it():
    w = anfora.Parameter(np.array([2.0, 3.0, 4.0]), name="w")

    class Net(anfora.nn.Cell):
        def __init__(self):
            self.w = w
            self.grad_op = anfora.GradOperation(get_all=True, get_by_list=True, sens_param=True)

        def forward(self, x):
            return x * x * self.w

        def construct(self, x, sens):
            return self.grad_op(self.forward, (self.w,))(x, sens)

    x, s = np.array([1.0, 2.0, 3.0]), np.array([1.0, -1.0, 0.5])
    (gx,), (gw,) = Net()(t(x), t(s))
    np.testing.assert_allclose(gx.numpy(), s * 2 * x * w.numpy())
    np.testing.assert_allclose(gw.numpy(), s * x * x)


def _host_f(x, y):
    return ops.sin(x) * y + x * x


def test_vjp_and_jvp_from_python_match_the_derivatives():
    x = np.array([0.1, -0.7, 1.3])
    y = np.array([2.0, 3.0, -1.0])
    out, pullback = anfora.vjp(_host_f, anfora.tensor(x), anfora.tensor(y))
    np.testing.assert_allclose(np.asarray(out), np.sin(x) * y + x * x, rtol=1e-14)
    ct = np.array([1.0, -2.0, 0.5])
    dx, dy = pullback(anfora.tensor(ct))
    np.testing.assert_allclose(np.asarray(dx), ct * (np.cos(x) * y + 2 * x), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(dy), ct * np.sin(x), rtol=1e-14)
    tx, ty = np.array([1.0, 0.0, 2.0]), np.array([0.5, 0.5, 0.5])
    value, tangent = anfora.jvp(_host_f, (anfora.tensor(x), anfora.tensor(y)), (anfora.tensor(tx), anfora.tensor(ty)))
    np.testing.assert_allclose(np.asarray(value), np.sin(x) * y + x * x, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(tangent), (np.cos(x) * y + 2 * x) * tx + np.sin(x) * ty, rtol=1e-14)
    # Both agree: <pullback(ct), t> == <ct, jvp(t)>.
    assert np.dot(ct, np.asarray(tangent)) == pytest.approx(np.dot(np.asarray(dx), tx) + np.dot(np.asarray(dy), ty), rel=1e-12)
    with pytest.raises(ValueError, match="2 primals but 1 tangents"):
        anfora.jvp(_host_f, (anfora.tensor(x), anfora.tensor(y)), (anfora.tensor(tx),))
    with pytest.raises(anfora.CompileError, match="shape"):
        pullback(anfora.tensor(np.ones(4)))


def hardswish_sum(x):
    return ops.sum(ops.hardswish(x))


def test_hardswish_gradient_is_pytorch_s_at_the_ends():
    x = np.array([-4.0, -3.0, -1.5, 0.0, 2.0, 3.0, 4.0])
    g = anfora.grad(hardswish_sum)(t(x))
    np.testing.assert_allclose(np.asarray(g), [0.0, -0.5, 0.0, 0.5, 7 / 6, 1.5, 1.0], rtol=1e-15)


def weighted_var(x, w, axis, ddof):
    return ops.sum(ops.var(x, axis=axis, ddof=ddof) * w)


def test_var_gradient_matches_finite_differences():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4))
    for axis, ddof in [(None, 0), (1, 1), (0, 2.5), ((0, 1), 3)]:
        shape = np.var(x, axis=axis).shape
        w = np.cos(np.arange(np.prod(shape))).reshape(shape)

        def np_f(x):
            return np.sum(np.var(x, axis=axis, ddof=ddof) * w)

        g = anfora.grad(weighted_var)(t(x), t(w), axis, ddof)
        np.testing.assert_allclose(np.asarray(g), numeric_grad(np_f, [x], 0), rtol=1e-6, atol=1e-8)


def sines(x, n):
    for _ in range(n):
        x = ops.sin(x)
    return ops.sum(x)


def test_grad_through_a_loop_longer_than_the_recursion_limit():
    # Both passes of a loop's gradient run as jumps and tail calls, so 100,000 iterations
    # (ten times the limit of 10,000 nested calls) differentiate like 10.
    x0, n = np.array([0.2, 0.7, 1.3]), 100_000
    cosines, x = [], x0.copy()
    for _ in range(n):
        cosines.append(np.cos(x))
        x = np.sin(x)
    want = np.prod(cosines[::-1], axis=0)
    got = anfora.grad(sines, argnums=0)(t(x0), n)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10)


@anfora.jit
def _int_square_sum(x):
    return ops.sum(x * x) + ops.sum(x[1:] * 2)


@anfora.jit
def _mixed(x, w):
    return ops.sum((x * x) * w)


def test_integer_inputs_get_a_zero_gradient_of_their_dtype_through_integer_paths():
    """The gradient through integer operations (a sum or an index of an int product) is a
    zero of the input's dtype, not an error; float inputs beside it get theirs."""
    for dtype in (np.int32, np.int64):
        g = np.asarray(anfora.grad(_int_square_sum)(t(np.array([1, 2, 3], dtype))))
        assert g.dtype == dtype
        np.testing.assert_array_equal(g, [0, 0, 0])
    gx, gw = anfora.grad(_mixed, argnums=(0, 1))(t(np.array([1, 2], np.int32)),
                                                 t(np.array([0.5, 2.0])))
    np.testing.assert_array_equal(np.asarray(gx), [0, 0])
    np.testing.assert_allclose(np.asarray(gw), [1.0, 4.0])


def _sin_x(x):
    return ops.sin(x) * x


def test_gradients_of_gradient_functions_from_python():
    """`grad(grad(f))` as JAX users write it: the inner gradient function is compiled into a
    function that calls the same transform, then differentiated. Checked against the
    derivatives of sin(x)·x and, for a mixed partial, against finite differences."""
    x = 1.5
    d2 = -np.sin(x) * x + 2 * np.cos(x)
    d3 = -np.cos(x) * x - 3 * np.sin(x)
    np.testing.assert_allclose(float(anfora.grad(anfora.grad(_sin_x))(t(x))), d2, rtol=1e-13)
    third = anfora.grad(anfora.grad(anfora.grad(_sin_x)))
    np.testing.assert_allclose(float(third(t(x))), d3, rtol=1e-13)
    # value_and_grad of a gradient: (f', f'').
    value, grad = anfora.value_and_grad(anfora.grad(_sin_x))(t(x))
    np.testing.assert_allclose([float(value), float(grad)], [np.cos(x) * x + np.sin(x), d2], rtol=1e-13)
    # A sensitivity passed through: d/dx (f'(x)·s) = f''(x)·s.
    with_sens = anfora.grad(_sin_x, sens_param=True)
    np.testing.assert_allclose(float(anfora.grad(with_sens)(t(x), t(0.5))), 0.5 * d2, rtol=1e-13)
    # Mixed partials of x²·y·sin(y), argnums on both transforms.
    def h(x, y):
        return ops.sum(x * x * y * ops.sin(y))

    mixed = anfora.grad(anfora.grad(h, argnums=1), argnums=0)
    a, b = np.array([0.3, -1.2]), np.array([0.7, 2.0])
    want = numeric_grad(lambda a, b: float(np.sum(a * a * (np.sin(b) + b * np.cos(b)))),
                        [a, b], 0)
    np.testing.assert_allclose(mixed(t(a), t(b)).asnumpy(), want, rtol=1e-7)
    # The compiled gradient function runs under jit too.
    np.testing.assert_allclose(float(anfora.jit(anfora.grad(_sin_x))(t(x))), np.cos(x) * x + np.sin(x),
                               rtol=1e-13)


def test_gradients_of_gradient_functions_refuse_what_they_cannot_compile():
    with pytest.raises(TypeError, match=r"`f.grad` differentiates with respect to whichever arguments"):
        anfora.grad(anfora.jit(_sin_x).grad)(t(1.0))

    class Scaled:
        def __init__(self):
            self.w = anfora.Parameter(t(2.0), name="w")

        @anfora.jit
        def loss(self, x):
            return self.w * x * x

    with pytest.raises(TypeError, match="a bound method's `.grad` takes the Parameters of its object"):
        anfora.grad(Scaled().loss.grad)(t(1.0))

    def defaults(x, k=2.0):
        return x * k

    with pytest.raises(TypeError, match="parameters other than plain positional ones"):
        anfora.grad(anfora.grad(defaults))(t(1.0))


def test_gradient_functions_whose_parameters_shadow_nothing():
    """The generated function's parameters cannot hide the names its body reads, whatever the
    original's parameters are called."""

    def f(transform, target, sens):
        return transform * target * target + sens

    x = [t(2.0), t(3.0), t(1.0)]
    got = anfora.grad(anfora.grad(f, argnums=1), argnums=0)(*x)
    np.testing.assert_allclose(float(got), 2 * 3.0)


def _loss_and_prediction(w, x):
    pred = ops.tanh(x @ w)
    return ops.sum(pred * pred), {"pred": pred, "norm": ops.sum(w * w)}


def test_has_aux_returns_the_aux_beside_the_gradients_of_the_value():
    """JAX's `has_aux`: `grad` gives `(grads, aux)`, `value_and_grad` `((value, aux), grads)`;
    the aux takes no part in the gradient (checked against finite differences of the value
    alone), and a result that is not a pair is a TypeError."""
    rng = np.random.default_rng(3)
    w, x = rng.normal(size=(3, 2)), rng.normal(size=(4, 3))
    g, aux = anfora.grad(_loss_and_prediction, has_aux=True)(t(w), t(x))
    want = numeric_grad(lambda w, x: float(np.sum(np.tanh(x @ w) ** 2)), [w, x], 0)
    np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(aux["pred"].asnumpy(), np.tanh(x @ w), rtol=1e-14)
    (value, aux2), (gw, gx) = anfora.value_and_grad(_loss_and_prediction, argnums=(0, 1),
                                                    has_aux=True)(t(w), t(x))
    np.testing.assert_allclose(float(value), np.sum(np.tanh(x @ w) ** 2), rtol=1e-14)
    np.testing.assert_allclose(float(aux2["norm"]), np.sum(w * w), rtol=1e-14)
    np.testing.assert_allclose(gw.asnumpy(), g.asnumpy(), rtol=1e-14)
    assert gx.shape == (4, 3)
    with pytest.raises(anfora.CompileError, match=r"has_aux=True: the function must return a pair"):
        anfora.grad(loss, has_aux=True)(t(w[:, 0]), t(x), t(0.5))


def _scaled_square(x):
    return ops.sum(x * x * 2.5)


def test_gradients_of_gradient_functions_keep_the_integer_rule():
    """A gradient function rebuilt in compiled code (`jit` or `grad` of it) keeps
    `integers="cast"`: `x * x` gets the sensitivity 2.5 cast to 2, so x gets 4x, where the
    default rule gives zeros."""
    x = t(np.array([1, 2, 3], np.int32))
    inner = anfora.grad(_scaled_square, integers="cast")
    assert inner._spec[6:] == ("cast", False)
    for g in (inner(x), anfora.jit(inner)(x)):
        g = np.asarray(g)
        assert g.dtype == np.int32
        np.testing.assert_array_equal(g, [4, 8, 12])
    np.testing.assert_array_equal(np.asarray(anfora.grad(_scaled_square)(x)), [0, 0, 0])

"""anfora.nn: Cells compile their construct; a TrainOneStepCell step (loss, gradient, SGD
update) is one compiled call and matches the same step computed by hand in numpy."""

import numpy as np
import pytest

import anfora
from anfora import nn


def t(a):
    return anfora.tensor(np.asarray(a))


def test_dense_and_sequential_forward_match_numpy():
    net = nn.SequentialCell(nn.Dense(4, 5, seed=1), nn.ReLU(), nn.Dense(5, 3, seed=2), nn.Tanh())
    names = [n for n, _ in net.parameters_and_names()]
    assert names == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(net.trainable_params()) == 4
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    w1, b1, w2, b2 = (p.numpy() for p in net.trainable_params())
    expected = np.tanh(np.maximum(x @ w1 + b1, 0) @ w2 + b2)
    np.testing.assert_allclose(np.asarray(net(t(x))), expected, rtol=1e-5, atol=1e-6)
    flat = nn.Flatten()(t(np.zeros((2, 3, 4), np.float32)))
    assert flat.shape == (2, 12)


def test_one_training_step_matches_numpy_sgd():
    rng = np.random.default_rng(3)
    dense = nn.Dense(3, 2, seed=4)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = rng.standard_normal((8, 2)).astype(np.float32)
    w, b = dense.weight.numpy().astype(np.float64), dense.bias.numpy().astype(np.float64)
    step = nn.TrainOneStepCell(nn.WithLossCell(dense, nn.MSELoss()), nn.SGD(dense.trainable_params(), 0.1))
    loss = float(step(t(x), t(y)))
    d = x @ w + b - y
    assert loss == pytest.approx(np.mean(d * d), rel=1e-5)
    gd = 2 * d / d.size
    np.testing.assert_allclose(dense.weight.numpy(), w - 0.1 * (x.T @ gd), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dense.bias.numpy(), b - 0.1 * gd.sum(0), rtol=1e-5, atol=1e-6)
    # The whole step is one program: products, their gradients and the updates.
    program = step.compiled().lower(t(x), t(y)).program()
    assert "Gemm(" in program and "SGD(" in program


def test_classifier_training_reduces_the_cross_entropy():
    rng = np.random.default_rng(5)
    centers = rng.standard_normal((3, 4)) * 3
    labels = rng.integers(0, 3, 96)
    x = (centers[labels] + rng.standard_normal((96, 4))).astype(np.float32)
    onehot = np.eye(3, dtype=np.float32)[labels]
    net = nn.SequentialCell(nn.Dense(4, 16, seed=6), nn.ReLU(), nn.Dense(16, 3, seed=7))
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(reduction="mean")
    logits = net(t(x)).numpy().astype(np.float64)
    z = logits - logits.max(1, keepdims=True)
    expected = np.mean(np.log(np.exp(z).sum(1)) - (z * onehot).sum(1))
    assert float(loss_fn(net(t(x)), t(onehot))) == pytest.approx(expected, rel=1e-5)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), nn.SGD(net.trainable_params(), 0.5))
    losses = [float(step(t(x), t(onehot))) for _ in range(30)]
    assert losses[-1] < 0.5 * losses[0]
    accuracy = np.mean(net(t(x)).numpy().argmax(1) == labels)
    assert accuracy > 0.9
    assert step.compiled().cache_size == 1


def test_parameter_tuple_holds_only_parameters():
    with pytest.raises(TypeError, match="ParameterTuple holds Parameters"):
        nn.ParameterTuple([1.0])


def _numpy_steps(opt, kw, X, Y, W, B, steps):
    """The same Dense + MSE training steps as the optimizers' documented updates, in numpy."""
    params = [W.copy(), B.copy()]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for step in range(1, steps + 1):
        d = 2 * (X @ params[0] + params[1] - Y) / Y.size
        grads = [X.T @ d, d.sum(0)]
        for i in range(2):
            g = grads[i] + kw.get("weight_decay", 0.0) * params[i]
            if opt == "momentum":
                m[i] = kw["momentum"] * m[i] + g
                mom = g + kw["momentum"] * m[i] if kw.get("use_nesterov") else m[i]
                params[i] = params[i] - kw["learning_rate"] * mom
            else:
                m[i] = 0.9 * m[i] + 0.1 * g
                v[i] = 0.999 * v[i] + 0.001 * g * g
                mh, vh = m[i] / (1 - 0.9**step), v[i] / (1 - 0.999**step)
                params[i] = params[i] - kw["learning_rate"] * mh / (np.sqrt(vh) + 1e-8)
    return params


@pytest.mark.parametrize(
    "opt, kw",
    [
        ("momentum", dict(learning_rate=0.1, momentum=0.9)),
        ("momentum", dict(learning_rate=0.1, momentum=0.9, use_nesterov=True, weight_decay=0.01)),
        ("adam", dict(learning_rate=0.01)),
        ("adam", dict(learning_rate=0.01, weight_decay=0.1)),
    ],
)
def test_momentum_and_adam_steps_match_numpy(opt, kw):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(8, 3)), rng.normal(size=(8, 2))
    net = nn.Dense(3, 2, dtype="float64")
    W, B = net.weight.numpy().copy(), net.bias.numpy().copy()
    optimizer = (nn.Momentum if opt == "momentum" else nn.Adam)(net.trainable_params(), **kw)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
    for _ in range(3):
        step(t(X), t(Y))
    W3, B3 = _numpy_steps(opt, kw, X, Y, W, B, 3)
    np.testing.assert_allclose(net.weight.numpy(), W3, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(net.bias.numpy(), B3, rtol=1e-12, atol=1e-15)
    # The optimizer's state is made of (untrained) Parameters too.
    names = [n for n, _ in optimizer.parameters_and_names()]
    if opt == "adam":
        assert names[-1] == "step" and float(optimizer.step.value) == 3.0
        assert "moment1.0" in names and "moment2.1" in names
    else:
        assert "moments.1" in names


class Counter(nn.Cell):
    def __init__(self):
        self.count = anfora.Parameter(np.zeros((), np.float32), name="count")
        self.w = anfora.Parameter(np.ones(2, np.float32), name="w")
        self.rate = 0.5

    def construct(self, x):
        self.count += 1.0
        self.w = self.w * self.rate + x
        self.w *= 2.0
        self.w -= 1.0
        return self.w + 0.0


def test_assigning_parameter_attributes_writes_them_in_order():
    c = Counter()
    x = t(np.array([1.0, 2.0], np.float32))
    # w = ((w * 0.5 + x) * 2) - 1, count += 1, in statement order
    np.testing.assert_array_equal(np.asarray(c(x)), [2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(c(x)), [3.0, 7.0])
    assert float(c.count.value) == 2.0
    np.testing.assert_array_equal(c.w.numpy(), [3.0, 7.0])
    assert isinstance(c.w, anfora.Parameter)  # still the same Parameter object


def test_assigning_other_attributes_is_a_compile_error():
    class Bad(nn.Cell):
        def __init__(self):
            self.rate = 0.5
            self.w = anfora.Parameter(np.ones(2, np.float32), name="w")

        def construct(self, x):
            self.rate = 0.1
            self.w = anfora.ops.ones((3,))
            return x

    with pytest.raises(anfora.CompileError) as e:
        Bad()(t(np.ones(2, np.float32)))
    text = " ".join(str(e.value).replace("│", " ").split())
    assert "writes a Parameter, but argument 1 is <Float64, 0.5>" in text
    assert "self.rate = 0.1" in text
    assert "could not broadcast a value of shape (3,) into Parameter 'w' of shape (2,)" in text

    class Tupled(nn.Cell):
        def __init__(self):
            self.w = anfora.Parameter(np.ones(2, np.float32), name="w")

        def construct(self, x):
            a, self.w = x, x
            return a

    with pytest.raises(anfora.CompileError, match="assignment to an attribute inside a tuple"):
        Tupled()(t(np.ones(2, np.float32)))


def test_softmax_cross_entropy_forms_and_reductions():
    rng = np.random.default_rng(11)
    logits = rng.normal(size=(5, 4)) * 10  # float64: exact comparisons
    labels = rng.integers(0, 4, 5)
    onehot = np.eye(4)[labels]
    z = logits - logits.max(1, keepdims=True)
    per_example = np.log(np.exp(z).sum(1)) - z[np.arange(5), labels]
    dense = nn.SoftmaxCrossEntropyWithLogits()
    np.testing.assert_allclose(np.asarray(dense(t(logits), t(onehot))), per_example, rtol=1e-12)
    sparse = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="sum")
    assert float(sparse(t(logits), t(labels))) == pytest.approx(per_example.sum(), rel=1e-12)
    mean = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    assert float(mean(t(logits), t(labels.astype(np.int32)))) == pytest.approx(per_example.mean(), rel=1e-12)
    # d mean / d logits = (softmax - onehot) / N
    g = anfora.grad(mean.compiled())(t(logits), t(labels))
    softmax = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    np.testing.assert_allclose(np.asarray(g), (softmax - onehot) / 5, rtol=1e-10, atol=1e-15)
    with pytest.raises(ValueError, match="reduction must be"):
        nn.SoftmaxCrossEntropyWithLogits(reduction="avg")

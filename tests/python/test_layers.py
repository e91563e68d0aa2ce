"""anfora.nn layers against numpy: Conv2d, LayerNorm, BatchNorm2d (training, moving
statistics, evaluation), GELU, Dropout and training mode; gradients through a convolution
against central finite differences in float64."""

import math

import numpy as np
import pytest

import anfora
from anfora import nn, ops


def t(a):
    return anfora.tensor(np.asarray(a))


def conv_ref(x, w, pad, stride=1):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = w.shape[2:]
    oh = (x.shape[2] - kh) // stride + 1
    ow = (x.shape[3] - kw) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


def test_conv2d_layer_matches_numpy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 7, 6))
    conv = nn.Conv2d(3, 4, 3, pad_mode="same", has_bias=True, dtype="float64")
    conv.bias.set_data(np.array([0.5, -1.0, 0.0, 2.0]))
    want = conv_ref(x, conv.weight.numpy(), 1) + conv.bias.numpy().reshape(1, -1, 1, 1)
    np.testing.assert_allclose(np.asarray(conv(t(x))), want, rtol=1e-12, atol=1e-12)
    valid = nn.Conv2d(3, 2, (2, 3), stride=2, pad_mode="valid", dtype="float64", seed=3)
    np.testing.assert_allclose(np.asarray(valid(t(x))), conv_ref(x, valid.weight.numpy(), 0, 2), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="divisible by group"):
        nn.Conv2d(3, 4, 3, group=2)


def test_gradients_through_a_conv_layer_match_finite_differences():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 2, 5, 5))
    conv = nn.Conv2d(2, 3, 3, pad_mode="pad", padding=1, dtype="float64", has_bias=True)

    class Loss(nn.Cell):
        def __init__(self):
            self.conv = conv

        def construct(self, x):
            y = self.conv(x)
            return anfora.ops.sum(y * y)

    loss = Loss()
    (gw, gb) = anfora.grad(loss.construct, None, (conv.weight, conv.bias))(t(x))
    w0 = conv.weight.numpy().copy()

    def f(w):
        y = conv_ref(x, w, 1) + conv.bias.numpy().reshape(1, -1, 1, 1)
        return np.sum(y * y)

    eps = 1e-6
    for idx in [(0, 0, 0, 0), (1, 1, 2, 1), (2, 0, 1, 2)]:
        wp, wm = w0.copy(), w0.copy()
        wp[idx] += eps
        wm[idx] -= eps
        fd = (f(wp) - f(wm)) / (2 * eps)
        assert abs(np.asarray(gw)[idx] - fd) <= 1e-5 * max(1.0, abs(fd)), (idx, np.asarray(gw)[idx], fd)
    y = conv_ref(x, w0, 1) + conv.bias.numpy().reshape(1, -1, 1, 1)
    np.testing.assert_allclose(np.asarray(gb), 2 * y.sum(axis=(0, 2, 3)), rtol=1e-10)


def test_layer_norm_and_gelu_match_numpy():
    x = np.random.default_rng(2).normal(size=(3, 4, 5)).astype(np.float32)
    ln = nn.LayerNorm((4, 5))
    ln.gamma.set_data(np.full((4, 5), 2.0, np.float32))
    m = x.mean(axis=(1, 2), keepdims=True)
    v = x.var(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(np.asarray(ln(t(x))), 2 * (x - m) / np.sqrt(v + 1e-5), rtol=1e-5, atol=1e-6)
    g = np.asarray(nn.GELU()(t(x)))
    np.testing.assert_allclose(g, 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))), rtol=1e-5, atol=1e-6)


def test_batch_norm_trains_on_batch_statistics_and_evaluates_on_moving_ones():
    x = np.random.default_rng(3).normal(2.0, 3.0, size=(4, 2, 3, 3)).astype(np.float32)
    bn = nn.BatchNorm2d(2, momentum=0.9)
    m = x.mean(axis=(0, 2, 3), keepdims=True)
    v = x.var(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(np.asarray(bn(t(x))), (x - m) / np.sqrt(v + 1e-5), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.1 * m.ravel(), rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.9 + 0.1 * x.var(axis=(0, 2, 3), ddof=1), rtol=1e-5)
    assert [n for n, p in bn.parameters_and_names() if p.requires_grad] == ["gamma", "beta"]
    bn.set_train(False)
    mm = bn.moving_mean.numpy().reshape(1, -1, 1, 1)
    mv = bn.moving_variance.numpy().reshape(1, -1, 1, 1)
    np.testing.assert_allclose(np.asarray(bn(t(x))), (x - mm) / np.sqrt(mv + 1e-5), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(bn.moving_mean.numpy().reshape(1, -1, 1, 1), mm)  # not updated


def test_dropout_in_training_and_evaluation():
    anfora_net = nn.SequentialCell(nn.Dropout(p=0.25), nn.ReLU())
    x = np.ones((200, 50), np.float32)
    y = np.asarray(anfora_net(t(x)))
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    assert 0.7 < kept.mean() < 0.8
    anfora_net.set_train(False)
    assert not anfora_net.cells[0].training
    np.testing.assert_array_equal(np.asarray(anfora_net(t(x))), x)
    anfora_net.set_train(True)
    assert (np.asarray(anfora_net(t(x))) == 0).any()
    with pytest.raises(ValueError, match="Dropout probability"):
        nn.Dropout(p=1.0)


def test_gelu_exact_form_matches_erf():
    x = np.linspace(-6, 6, 49)
    expected = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(np.asarray(nn.GELU(approximate=False)(t(x))), expected, rtol=1e-13, atol=1e-15)
    tanh_form = np.asarray(nn.GELU(approximate=True)(t(x)))
    assert 0 < np.abs(tanh_form - expected).max() < 1e-3  # a different function, close to it


class _Scale(nn.Cell):
    def __init__(self, n):
        self.w = anfora.Parameter(np.ones(n, np.float32), name="w")

    def construct(self, x):
        return x * self.w


class _SumLoss(nn.Cell):
    def construct(self, y, label):
        return ops.sum(y)


def test_training_step_through_dropout_uses_the_forward_mask():
    # loss = sum(dropout(x * w)) with x = 1 is sum_ij m_ij w_j / (1 - p) for the mask m, and the
    # gradient of w_j is sum_i m_ij / (1 - p); so sum_j grad_j w_j equals the loss exactly when
    # the backward pass used the forward's mask (a redrawn mask would miss by ~sqrt(n)).
    net = nn.SequentialCell(_Scale(64), nn.Dropout(p=0.5))
    step = nn.TrainOneStepCell(nn.WithLossCell(net, _SumLoss()), nn.SGD(net.trainable_params(), 0.01))
    x = np.ones((32, 64), np.float32)
    w = net.trainable_params()[0]
    losses = []
    for _ in range(3):
        before = w.numpy().astype(np.float64)
        loss = float(step(t(x), t(np.zeros(1, np.float32))))
        grad = (before - w.numpy()) / 0.01
        assert np.dot(grad, before) == pytest.approx(loss, rel=1e-4)
        assert 0.3 * 2 * x.size * before.min() < loss
        losses.append(loss)
    assert len(set(losses)) == 3  # a new mask every step
    net.set_train(False)
    np.testing.assert_allclose(np.asarray(net(t(x))), x * w.numpy(), rtol=0)


def test_padding_layers_match_numpy_and_compile():
    x = np.arange(2 * 3 * 3 * 4, dtype=np.float32).reshape(2, 3, 3, 4)
    cases = [
        (nn.ReflectionPad2d((1, 3, 2, 0)), "reflect", ((2, 0), (1, 3))),
        (nn.ReflectionPad2d(2), "reflect", ((2, 2), (2, 2))),
        (nn.ReplicationPad2d((0, 5, 4, 1)), "edge", ((4, 1), (0, 5))),
        (nn.ZeroPad2d([1, 0, 0, 2]), "constant", ((0, 2), (1, 0))),
    ]
    for layer, mode, hw in cases:
        want = np.pad(x, ((0, 0), (0, 0)) + hw, mode)
        got = layer(t(x))
        assert got.dtype == anfora.float32
        np.testing.assert_array_equal(np.asarray(got), want)
        # (C, H, W) input too, and the op the layer calls, eagerly.
        np.testing.assert_array_equal(np.asarray(layer(t(x[0]))), np.pad(x[0], ((0, 0),) + hw, mode))
    assert nn.ZeroPad2d(1).padding == (1, 1, 1, 1)
    with pytest.raises(TypeError, match="padding must be an int or 4 ints"):
        nn.ReflectionPad2d((1, 2))
    # PyTorch's limit: a compile error in the layer (shapes are known), a ValueError eagerly.
    msg = r"padding \(3, 3\) of the height must be less than its size 3"
    with pytest.raises(anfora.CompileError, match=msg):
        nn.ReflectionPad2d(3)(t(np.zeros((1, 1, 3, 5), np.float32)))
    with pytest.raises(ValueError, match=msg):
        ops.reflection_pad2d(t(np.zeros((1, 1, 3, 5), np.float32)), 3)


def test_gradients_through_padding_layers_match_finite_differences():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(1, 2, 3, 4))
    w = rng.normal(size=(3, 2, 1, 1))

    for layer, mode, hw in [
        (nn.ReflectionPad2d((2, 1, 1, 2)), "reflect", ((1, 2), (2, 1))),
        (nn.ReplicationPad2d(3), "edge", ((3, 3), (3, 3))),
        (nn.ZeroPad2d((0, 1, 2, 0)), "constant", ((2, 0), (0, 1))),
    ]:
        conv = nn.Conv2d(2, 3, 1, pad_mode="valid", dtype="float64")
        conv.weight.set_data(w)

        class Net(nn.Cell):
            def __init__(self):
                self.pad = layer
                self.conv = conv

            def construct(self, x):
                y = self.conv(self.pad(x))
                return ops.sum(ops.sin(y))

        def f(xv):
            p = np.pad(xv, ((0, 0), (0, 0)) + hw, mode)
            return np.sum(np.sin(np.einsum("nchw,oc->nohw", p, w[:, :, 0, 0])))

        net = Net()
        gx = np.asarray(anfora.grad(net.construct)(t(x)))
        eps = 1e-6
        fd = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            xp, xm = x.copy(), x.copy()
            xp[idx] += eps
            xm[idx] -= eps
            fd[idx] = (f(xp) - f(xm)) / (2 * eps)
        np.testing.assert_allclose(gx, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("shape, axes", [((6, 3), (0,)), ((4, 3, 5), (0, 2))])
def test_batch_norm_1d_over_every_axis_but_the_channels(shape, axes):
    x = np.random.default_rng(5).normal(1.0, 2.0, size=shape).astype(np.float64)
    bn = nn.BatchNorm1d(3, momentum=0.8, dtype="float64")
    m = x.mean(axis=axes, keepdims=True)
    v = x.var(axis=axes, keepdims=True)
    np.testing.assert_allclose(np.asarray(bn(t(x))), (x - m) / np.sqrt(v + 1e-5), rtol=1e-12)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.2 * m.ravel(), rtol=1e-12)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.8 + 0.2 * x.var(axis=axes, ddof=1), rtol=1e-12)
    bn.set_train(False)
    bshape = (1, -1) + (1,) * (len(shape) - 2)
    mm, mv = bn.moving_mean.numpy().reshape(bshape), bn.moving_variance.numpy().reshape(bshape)
    np.testing.assert_allclose(np.asarray(bn(t(x))), (x - mm) / np.sqrt(mv + 1e-5), rtol=1e-12)

"""MindSpore-style scripts on `anfora.compat.mindspore` (issue 29, first part): written from
MindSpore's public documentation in the style of its tutorials, run with only the import
changed, each value checked against numpy or finite differences."""

import os
import sys

import numpy as np
import pytest

import anfora.compat.mindspore as ms
from anfora.compat.mindspore import Parameter, ParameterTuple, Tensor, context, nn, ops
from anfora.compat.mindspore import dtype as mstype
from anfora.compat.mindspore.ops import composite as C
from anfora.compat.mindspore.ops import operations as P


@pytest.fixture(autouse=True)
def graph_mode():
    context.set_context(mode=context.GRAPH_MODE, device_target="CPU")
    yield
    context.set_context(mode=context.GRAPH_MODE, device_target="CPU")


def test_tensors_dtypes_and_context():
    x = Tensor(np.array([[1, 2], [3, 4]]), mstype.float32)
    assert isinstance(x, Tensor) and x.dtype == ms.float32 and x.shape == (2, 2)
    np.testing.assert_array_equal(x.asnumpy(), [[1.0, 2.0], [3.0, 4.0]])
    assert Tensor([1.5, 2.5]).dtype == mstype.float32  # Python floats: float32
    assert Tensor([1, 2]).dtype == mstype.int64  # Python ints: int64
    assert Tensor(x, mstype.int32).dtype == mstype.int32
    assert context.get_context("mode") == context.GRAPH_MODE
    assert context.get_context("device_target") == "CPU"
    with pytest.raises(ValueError, match="device_target must be 'CPU' or 'GPU'"):
        context.set_context(device_target="Ascend")
    with pytest.raises(ValueError, match="enable_graph_kernel not supported"):
        context.set_context(enable_graph_kernel=True)


class PrimitiveNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.matmul = P.MatMul(transpose_b=True)
        self.add = P.Add()
        self.reduce_sum = P.ReduceSum(keep_dims=True)
        self.reduce_max = P.ReduceMax()
        self.addn = P.AddN()
        self.greater = P.Greater()
        self.cast = P.Cast()
        self.square = P.Square()

    def construct(self, x, y):
        z = self.add(self.matmul(x, y), 1.0)
        s = self.reduce_sum(z, 1)
        m = self.reduce_max(z)
        n = self.addn((z, z, self.square(z)))
        g = self.cast(self.greater(z, 3.0), mstype.float32)
        return s, m, n, g


def test_primitive_classes_inside_construct():
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    y = np.arange(12, dtype=np.float32).reshape(4, 3) / 8
    s, m, n, g = PrimitiveNet()(Tensor(x), Tensor(y))
    z = x @ y.T + 1.0
    np.testing.assert_allclose(s.asnumpy(), z.sum(axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(float(m.asnumpy()), z.max(), rtol=1e-6)
    np.testing.assert_allclose(n.asnumpy(), 2 * z + z * z, rtol=1e-6)
    np.testing.assert_array_equal(g.asnumpy(), (z > 3.0).astype(np.float32))


class Counter(nn.Cell):
    """Side effects in order: Assign, AssignAdd and a read between them (MindSpore's
    auto-monad documentation)."""

    def __init__(self):
        super().__init__()
        self.count = Parameter(Tensor(np.zeros(2, np.float32)), name="count")
        self.assign = P.Assign()
        self.assign_add = P.AssignAdd()

    def construct(self, x):
        self.assign(self.count, x)
        before = self.count * 1.0
        self.assign_add(self.count, x)
        return before, self.count * 1.0


def test_parameter_writes_happen_in_program_order():
    net = Counter()
    before, after = net(Tensor(np.array([1.0, 2.0], np.float32)))
    np.testing.assert_array_equal(before.asnumpy(), [1.0, 2.0])
    np.testing.assert_array_equal(after.asnumpy(), [2.0, 4.0])
    np.testing.assert_array_equal(net.count.asnumpy(), [2.0, 4.0])


class Quadratic(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([0.5, -1.0, 2.0], np.float32)), name="w")

    def construct(self, x, y):
        return ops.sum(self.w * x * x + y * x)


class GradNet(nn.Cell):
    """Gradients from inside `construct`, as MindSpore's GradOperation tutorial writes them."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.params = ParameterTuple(net.trainable_params())
        self.grad_all = C.GradOperation(get_all=True)
        self.grad_weights = C.GradOperation(get_by_list=True)

    def construct(self, x, y):
        return self.grad_all(self.net)(x, y), self.grad_weights(self.net, self.params)(x, y)


def test_grad_operation_on_cells_matches_finite_differences():
    x = np.array([1.0, 2.0, -1.0], np.float32)
    y = np.array([0.5, 0.25, 2.0], np.float32)
    net = Quadratic()
    (dx, dy), (dw,) = GradNet(net)(Tensor(x), Tensor(y))
    w = net.w.asnumpy()
    np.testing.assert_allclose(dx.asnumpy(), 2 * w * x + y, rtol=1e-6)
    np.testing.assert_allclose(dy.asnumpy(), x, rtol=1e-6)
    np.testing.assert_allclose(dw.asnumpy(), x * x, rtol=1e-6)

    def f(a, b):
        return ops.sum(ops.sin(a) * b)

    g = ops.grad(f, grad_position=(0, 1))(Tensor(x), Tensor(y))
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    eps = 1e-6
    fd = [(np.sum(np.sin(xd + eps * e) * yd) - np.sum(np.sin(xd - eps * e) * yd)) / (2 * eps)
          for e in np.eye(3)]
    np.testing.assert_allclose(g[0].asnumpy(), fd, rtol=1e-4)
    np.testing.assert_allclose(g[1].asnumpy(), np.sin(x), rtol=1e-6)


def test_a_linear_regression_trains_with_momentum():
    ms.set_seed(1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    true_w = np.array([[2.0, -3.0, 0.5]], np.float32)
    y = x @ true_w.T + 0.25
    net = nn.Dense(3, 1)
    assert net.weight.shape == (1, 3)  # MindSpore's (out_channels, in_channels)
    loss = nn.WithLossCell(net, nn.MSELoss())
    step = nn.TrainOneStepCell(loss, nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9))
    losses = [float(step(Tensor(x), Tensor(y)).asnumpy()) for _ in range(200)]
    assert losses[-1] < 1e-4 < losses[0]
    np.testing.assert_allclose(net.weight.asnumpy(), true_w, atol=1e-2)
    np.testing.assert_allclose(net.bias.asnumpy(), [0.25], atol=1e-2)


def test_dense_layouts_initializers_and_activations():
    w = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    net = nn.Dense(3, 2, weight_init=Tensor(w), bias_init="ones", activation="relu")
    x = np.array([[1.0, -2.0, 3.0]], np.float32)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), np.maximum(x @ w.T + 1.0, 0), rtol=1e-6)
    with pytest.raises(KeyError, match="but got swish"):
        nn.Dense(3, 2, activation="swish")


def test_export_and_load_round_trip(tmp_path):
    ms.set_seed(2)
    net = nn.SequentialCell(nn.Dense(4, 8, activation="relu"), nn.Dense(8, 2))
    x = Tensor(np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32))
    expected = net(x).asnumpy()
    ms.export(net, x, file_name=str(tmp_path / "net"), file_format="MINDIR")
    graph = ms.load(str(tmp_path / "net.mindir"))
    np.testing.assert_allclose(nn.GraphCell(graph)(x).asnumpy(), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="file_format must be 'MINDIR' or 'ONNX'"):
        ms.export(net, x, file_name=str(tmp_path / "net"), file_format="AIR")


def test_install_makes_import_mindspore_resolve_here():
    saved = {k: v for k, v in sys.modules.items() if k == "mindspore" or k.startswith("mindspore.")}
    try:
        ms.install()
        import mindspore
        from mindspore import Tensor as T
        from mindspore.common import dtype as mst
        from mindspore.ops import operations as PP

        assert mindspore is ms and T is Tensor and mst.float32 == ms.float32 and PP.Add is P.Add
    finally:
        for k in [k for k in sys.modules if k == "mindspore" or k.startswith("mindspore.")]:
            del sys.modules[k]
        sys.modules.update(saved)


def test_the_mindspore_style_digits_example_trains_as_the_anfora_one():
    pytest.importorskip("sklearn")
    from conftest import load_example

    example = load_example("mindspore_digits")
    assert example.main(["--epochs", "8", "--min-accuracy", "0.95"]) == 0


class ArrayNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.expand = P.ExpandDims()
        self.squeeze = P.Squeeze()
        self.gather = P.Gather()
        self.argmax = P.Argmax()
        self.select = P.Select()
        self.stack = P.Stack(axis=1)
        self.one_hot = P.OneHot()

    def construct(self, x, idx, labels):
        e = self.squeeze(self.expand(x, 0))
        g = self.gather(x, idx, 0)
        a = self.argmax(x)
        s = self.select(x > 0.5, x, -x)
        st = self.stack((x, x * 2.0))
        h = self.one_hot(labels, 4, Tensor(1.0, mstype.float32), Tensor(0.0, mstype.float32))
        return e, g, a, s, st, h


def test_array_primitive_classes():
    x = np.array([[0.25, 0.75, 0.5], [1.0, 0.0, 0.6]], np.float32)
    idx = np.array([1, 0, 1], np.int32)
    labels = np.array([3, 0], np.int32)
    e, g, a, s, st, h = ArrayNet()(Tensor(x), Tensor(idx, mstype.int32), Tensor(labels, mstype.int32))
    np.testing.assert_array_equal(e.asnumpy(), x)
    np.testing.assert_array_equal(g.asnumpy(), x[idx])
    assert a.dtype == mstype.int32
    np.testing.assert_array_equal(a.asnumpy(), x.argmax(axis=-1))
    np.testing.assert_array_equal(s.asnumpy(), np.where(x > 0.5, x, -x))
    np.testing.assert_array_equal(st.asnumpy(), np.stack((x, x * 2), axis=1))
    np.testing.assert_array_equal(h.asnumpy(), np.eye(4, dtype=np.float32)[labels])


class Cube(nn.Cell):
    def construct(self, x):
        return x * x * x


class Grad(nn.Cell):
    """A network's gradient as a Cell, as MindSpore's higher-order derivative tutorial writes
    it; applied to itself, the second derivative."""

    def __init__(self, network):
        super().__init__()
        self.grad = C.GradOperation()
        self.network = network

    def construct(self, x):
        return self.grad(self.network)(x)


def test_grads_of_grads():
    x = np.array([0.5, -2.0, 3.0], np.float32)
    np.testing.assert_allclose(Grad(Cube())(Tensor(x)).asnumpy(), 3 * x * x, rtol=1e-6)
    np.testing.assert_allclose(Grad(Grad(Cube()))(Tensor(x)).asnumpy(), 6 * x, rtol=1e-6)


class Collatz(nn.Cell):
    """Control flow on tensors: a while loop with a data-dependent condition, and a branch."""

    def construct(self, n):
        steps = n * 0
        while n > 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            steps = steps + 1
        return steps


def test_control_flow_nets_run_and_round_trip_through_export(tmp_path):
    net = Collatz()
    n = Tensor(np.array(27, np.int64))
    assert int(net(n).asnumpy()) == 111
    ms.export(net, n, file_name=str(tmp_path / "collatz"), file_format="MINDIR")
    graph = nn.GraphCell(ms.load(str(tmp_path / "collatz.mindir")))
    assert int(np.asarray(graph(Tensor(np.array(27, np.int64))))) == 111
    assert int(np.asarray(graph(Tensor(np.array(6, np.int64))))) == 8


def test_cell_introspection_as_in_mindspore():
    ms.set_seed(4)
    net = nn.SequentialCell(nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2))
    net.set_grad()
    names = [n for n, _ in net.parameters_and_names()]
    assert len(names) == 4 and len(net.parameters_dict()) == 4
    assert len(list(net.get_parameters())) == 4 and len(net.untrainable_params()) == 0
    cells = list(net.cells_and_names())
    assert cells[0] == ("", net) and len(cells) >= 3


# MindSpore 2.x's functional training step: value_and_grad with has_aux made at module level,
# called in an `ms.jit` function that applies the optimizer.
_net2 = None


def _build_functional_step():
    global _net2
    ms.set_seed(5)
    _net2 = nn.Dense(4, 3)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.SGD(_net2.trainable_params(), learning_rate=0.5)

    def forward_fn(data, label):
        logits = _net2(data)
        return loss_fn(logits, label), logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    @ms.jit
    def train_step(data, label):
        (loss, logits), grads = grad_fn(data, label)
        optimizer(grads)
        return loss, logits

    return train_step, forward_fn


def test_mindspore_2_functional_training_steps():
    train_step, forward_fn = _build_functional_step()
    rng = np.random.default_rng(6)
    x = rng.standard_normal((30, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 0).astype(np.int32)
    losses = []
    for _ in range(60):
        loss, logits = train_step(Tensor(x), Tensor(y, mstype.int32))
        losses.append(float(loss.asnumpy()))
        assert logits.shape == (30, 3)
    assert losses[-1] < 0.5 * losses[0]
    # The gradient the step used is the loss's (finite differences on one weight).
    w = _net2.weight
    base = w.asnumpy().copy()
    eps = 1e-3
    def loss_at(v):
        w.set_data(Tensor(v)) if hasattr(w, "set_data") else ops.assign(w, Tensor(v))
        return float(forward_fn(Tensor(x), Tensor(y, mstype.int32))[0].asnumpy())
    bumped = base.copy(); bumped[0, 0] += eps
    lowered = base.copy(); lowered[0, 0] -= eps
    fd = (loss_at(bumped) - loss_at(lowered)) / (2 * eps)
    ops.assign(w, Tensor(base))
    # With `has_aux`: `(weight gradients, (aux,))`.
    g, aux = ms.grad(forward_fn, None, (w,), has_aux=True)(Tensor(x), Tensor(y, mstype.int32))
    np.testing.assert_allclose(g[0].asnumpy()[0, 0], fd, rtol=2e-2, atol=1e-4)
    assert len(aux) == 1 and aux[0].shape == (30, 3)
    with pytest.raises(ValueError, match="can not be None at the same time"):
        ms.grad(forward_fn, None, None)


class LeNetish(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, pad_mode="valid", has_bias=True, weight_init="normal",
                              bias_init="zeros")
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 3 * 3, 2, weight_init="normal")

    def construct(self, x):
        return self.fc(self.flatten(self.pool(self.relu(self.conv(x)))))


def test_convolutions_and_optimizers_take_mindspores_arguments():
    ms.set_seed(7)
    net = LeNetish()
    assert net.conv.weight.shape == (4, 1, 3, 3) and np.all(net.conv.bias.asnumpy() == 0)
    assert float(np.abs(net.conv.weight.asnumpy()).max()) < 0.1  # normal(0, 0.01)
    rng = np.random.default_rng(8)
    x = Tensor(rng.standard_normal((16, 1, 8, 8)).astype(np.float32))
    y = Tensor((rng.random(16) > 0.5).astype(np.int32), mstype.int32)
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    opt = nn.Adam(net.trainable_params(), learning_rate=0.01, use_locking=False, loss_scale=1.0)
    step = nn.TrainOneStepCell(loss, opt)
    losses = [float(step(x, y).asnumpy()) for _ in range(30)]
    assert losses[-1] < losses[0]
    with pytest.raises(ValueError, match="loss_scale"):
        nn.Momentum(net.trainable_params(), 0.1, 0.9, loss_scale=128.0)
    with pytest.raises(ValueError, match="data_format"):
        nn.Conv2d(1, 2, 3, data_format="NHWC")


class LoopNet(nn.Cell):
    """A `for` over a range and a data-dependent `if` inside `construct` (MindSpore's
    control-flow documentation)."""

    def construct(self, x, n):
        out = x * 0.0
        for i in range(n):
            if ops.sum(out) < 10.0:
                out = out + x * i
            else:
                out = out - 1.0
        return out


def test_loops_and_branches_on_tensors():
    x = np.array([1.0, 2.0], np.float32)
    got = LoopNet()(Tensor(x), 6).asnumpy()
    out = x * 0.0
    for i in range(6):
        out = out + x * i if out.sum() < 10.0 else out - 1.0
    np.testing.assert_allclose(got, out, rtol=1e-6)


def factorial(n):
    if n <= 1:
        return n * 0 + 1
    return n * factorial(n - 1)


class Recursive(nn.Cell):
    def construct(self, n):
        return factorial(n)


def test_recursion_in_graph_mode():
    assert int(Recursive()(Tensor(np.array(6, np.int64))).asnumpy()) == 720


class Sens(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.grad = C.GradOperation(sens_param=True)

    def construct(self, x, sens):
        return self.grad(self.net)(x, sens)


class Elementwise(nn.Cell):
    def construct(self, x):
        return x * x * 3.0


def test_grad_operation_with_a_sensitivity():
    x = np.array([1.0, -2.0, 0.5], np.float32)
    sens = np.array([1.0, 0.5, 2.0], np.float32)
    got = Sens(Elementwise())(Tensor(x), Tensor(sens)).asnumpy()
    np.testing.assert_allclose(got, 6.0 * x * sens, rtol=1e-6)


class TwoInputs(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([2.0, 3.0], np.float32)), name="w")

    def construct(self, x, y):
        return ops.sum(self.w * x * y)


class AllAndList(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.params = ParameterTuple(net.trainable_params())
        self.grad = C.GradOperation(get_all=True, get_by_list=True)

    def construct(self, x, y):
        return self.grad(self.net, self.params)(x, y)


def test_gradients_of_all_inputs_and_the_parameters_together():
    x = np.array([1.0, 2.0], np.float32)
    y = np.array([0.5, -1.0], np.float32)
    (dx, dy), (dw,) = AllAndList(TwoInputs())(Tensor(x), Tensor(y))
    w = np.array([2.0, 3.0], np.float32)
    np.testing.assert_allclose(dx.asnumpy(), w * y)
    np.testing.assert_allclose(dy.asnumpy(), w * x)
    np.testing.assert_allclose(dw.asnumpy(), x * y)


class Embedding(nn.Cell):
    """Sparse updates of a Parameter's rows, ordered with Depend (auto-monad)."""

    def __init__(self):
        super().__init__()
        self.table = Parameter(Tensor(np.zeros((4, 2), np.float32)), name="table")
        self.scatter_add = P.ScatterAdd()
        self.depend = P.Depend()

    def construct(self, indices, updates):
        written = self.scatter_add(self.table, indices, updates)
        return self.depend(self.table * 1.0, written)


def test_scatter_add_into_a_parameter():
    idx = np.array([1, 3, 1], np.int32)
    upd = np.array([[1.0, 2.0], [3.0, 4.0], [10.0, 20.0]], np.float32)
    got = Embedding()(Tensor(idx, mstype.int32), Tensor(upd)).asnumpy()
    expected = np.zeros((4, 2), np.float32)
    np.add.at(expected, idx, upd)
    np.testing.assert_array_equal(got, expected)


def test_batch_norm_in_training_and_evaluation():
    ms.set_seed(9)
    x = np.random.default_rng(10).standard_normal((4, 3, 2, 2)).astype(np.float32) * 2 + 1
    # A Cell starts in evaluation mode: the moving statistics (zeros and ones) at first.
    fresh = nn.BatchNorm2d(3)
    np.testing.assert_allclose(fresh(Tensor(x)).asnumpy(), x / np.sqrt(1 + 1e-5), rtol=1e-6)
    bn = nn.BatchNorm2d(3)
    bn.set_train()
    y = bn(Tensor(x)).asnumpy()
    mean = x.mean(axis=(0, 2, 3), keepdims=True)
    var = x.var(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
    bn.set_train(False)
    z = bn(Tensor(x)).asnumpy()
    assert not np.allclose(z, y)  # the moving statistics, not the batch's


def test_checkpoints_round_trip(tmp_path):
    ms.set_seed(11)
    net = nn.Dense(3, 2)
    path = str(tmp_path / "net.ckpt")
    ms.save_checkpoint(net, path)
    other = nn.Dense(3, 2, weight_init="zeros", bias_init="zeros")
    params = ms.load_checkpoint(path)
    ms.load_param_into_net(other, params)
    np.testing.assert_array_equal(other.weight.asnumpy(), net.weight.asnumpy())
    np.testing.assert_array_equal(other.bias.asnumpy(), net.bias.asnumpy())


class Functional(nn.Cell):
    """MindSpore 2.x's functional operations inside construct."""

    def construct(self, x):
        y = ops.reshape(x, (3, 2))
        z = ops.matmul(ops.transpose(y, (1, 0)), y)
        return ops.mean(ops.exp(-z), 0), ops.argmax(z, 1)


def test_functional_operations_inside_construct():
    x = np.arange(6, dtype=np.float32) / 6
    m, a = Functional()(Tensor(x))
    y = x.reshape(3, 2)
    z = y.T @ y
    np.testing.assert_allclose(m.asnumpy(), np.exp(-z).mean(axis=0), rtol=1e-6)
    np.testing.assert_array_equal(a.asnumpy(), z.argmax(axis=1))


class Printer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.print = P.Print()

    def construct(self, x):
        self.print("x:", x)
        return x + 1.0


def test_print_inside_construct_in_mindspores_layout(capfd):
    Printer()(Tensor(np.array([1.5, 2.5], np.float32)))
    assert capfd.readouterr().out == (
        "x:\nTensor(shape=[2], dtype=Float32, value=[ 1.50000000e+00  2.50000000e+00])\n")
    # The example of MindSpore's ops.Print documentation, from Python and compiled.
    x = Tensor(np.ones([2, 1]).astype(np.int32))
    y = Tensor(np.ones([2, 2]).astype(np.int32))
    # Graph mode's layout (MindSpore 2.7.2), also from Python here.
    expected = ("Print Tensor x and Tensor y:\n"
                "Tensor(shape=[2, 1], dtype=Int32, value=\n[[1]\n [1]])\n"
                "Tensor(shape=[2, 2], dtype=Int32, value=\n[[1 1]\n [1 1]])\n")
    ops.print_("Print Tensor x and Tensor y:", x, y)
    assert capfd.readouterr().out == expected

    class PrintDemo(nn.Cell):
        def __init__(self):
            super().__init__()
            self.print = P.Print()

        def construct(self, x, y):
            self.print("Print Tensor x and Tensor y:", x, y)
            return x

    PrintDemo()(x, y)
    assert capfd.readouterr().out == expected
    assert ms.ops.format_tensor(Tensor(np.float32(0.1)), "mindspore") == \
        "Tensor(shape=[], dtype=Float32, value= 0.1)"
    with pytest.raises(ValueError, match="style must be 'numpy', 'mindspore' or "):
        ms.ops.format_tensor(x, "torch")


def test_tensor_operators_and_methods_outside_graphs():
    a = Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    b = Tensor(np.array([[0.5, -1.0], [2.0, 0.0]], np.float32))
    an, bn = a.asnumpy(), b.asnumpy()
    np.testing.assert_allclose((a + b).asnumpy(), an + bn)
    np.testing.assert_allclose((a @ b).asnumpy(), an @ bn)
    np.testing.assert_array_equal((a > b).asnumpy(), an > bn)
    np.testing.assert_allclose(a.sum().asnumpy(), an.sum())
    np.testing.assert_allclose(a.mean(axis=0).asnumpy(), an.mean(axis=0))
    assert a.shape == (2, 2) and a.dtype == mstype.float32 and a.ndim == 2


class ShapeNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.shape = P.Shape()
        self.reshape = P.Reshape()

    def construct(self, x):
        n, c, h, w = self.shape(x)
        return self.reshape(x, (n, c * h * w))


def test_shapes_are_tuples_inside_construct():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2)
    np.testing.assert_array_equal(ShapeNet()(Tensor(x)).asnumpy(), x.reshape(2, 12))


def test_dropout_in_training_and_evaluation():
    ms.set_seed(12)
    x = Tensor(np.ones((1000,), np.float32))
    # Evaluation mode until `set_train()`, as MindSpore's Cells start.
    np.testing.assert_array_equal(nn.Dropout(keep_prob=0.75)(x).asnumpy(), np.ones(1000, np.float32))
    drop = nn.Dropout(keep_prob=0.75)
    drop.set_train()
    y = drop(x).asnumpy()
    kept = y != 0
    assert 0.65 < kept.mean() < 0.85
    np.testing.assert_allclose(y[kept], 1.0 / 0.75, rtol=1e-6)
    drop.set_train(False)
    np.testing.assert_array_equal(drop(x).asnumpy(), np.ones(1000, np.float32))


@ms.jit
def collatz_steps(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_jit_functions_with_python_control_flow():
    assert collatz_steps(27) == 111
    assert collatz_steps(1) == 0


def test_grad_operation_of_a_plain_function_from_python():
    def f(x, y):
        return ops.sum(ops.exp(x) * y)

    x = np.array([0.0, 1.0], np.float32)
    y = np.array([2.0, 3.0], np.float32)
    dx, dy = C.GradOperation(get_all=True)(f)(Tensor(x), Tensor(y))
    np.testing.assert_allclose(dx.asnumpy(), np.exp(x) * y, rtol=1e-6)
    np.testing.assert_allclose(dy.asnumpy(), np.exp(x), rtol=1e-6)
    value, (gx, gy) = ms.value_and_grad(f, grad_position=(0, 1))(Tensor(x), Tensor(y))
    np.testing.assert_allclose(float(value.asnumpy()), np.sum(np.exp(x) * y), rtol=1e-6)
    np.testing.assert_allclose(gy.asnumpy(), np.exp(x), rtol=1e-6)


class Softmaxes(nn.Cell):
    def __init__(self):
        super().__init__()
        self.softmax = P.Softmax()
        self.log_softmax = P.LogSoftmax(axis=0)

    def construct(self, x):
        return self.softmax(x), self.log_softmax(x)


def test_softmax_primitives():
    x = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 5.0]], np.float32)
    s, ls = Softmaxes()(Tensor(x))
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(s.asnumpy(), e / e.sum(axis=-1, keepdims=True), rtol=1e-5)
    l0 = x - x.max(axis=0) - np.log(np.exp(x - x.max(axis=0)).sum(axis=0))
    np.testing.assert_allclose(ls.asnumpy(), l0, rtol=1e-5, atol=1e-6)


def test_save_graphs_writes_the_ir(tmp_path):
    context.set_context(save_graphs=True, save_graphs_path=str(tmp_path))
    try:
        Elementwise()(Tensor(np.ones(2, np.float32)))
    finally:
        context.set_context(save_graphs=False)
    assert any(p.suffix == ".ir" for p in tmp_path.rglob("*"))


def test_a_recursive_net_round_trips_through_export(tmp_path):
    net = Recursive()
    n = Tensor(np.array(5, np.int64))
    ms.export(net, n, file_name=str(tmp_path / "fact"), file_format="MINDIR")
    graph = nn.GraphCell(ms.load(str(tmp_path / "fact.mindir")))
    assert int(np.asarray(graph(Tensor(np.array(7, np.int64))))) == 5040


class PowerLoop(nn.Cell):
    """x ** k by a while loop: its gradient goes back through every iteration."""

    def construct(self, x, k):
        out = x * 0.0 + 1.0
        i = 0
        while i < k:
            out = out * x
            i += 1
        return ops.sum(out)


def test_gradients_through_loops():
    x = np.array([1.5, -0.5], np.float32)
    g = C.GradOperation()(PowerLoop())(Tensor(x), 4).asnumpy()
    np.testing.assert_allclose(g, 4 * x ** 3, rtol=1e-6)


class BranchWrites(nn.Cell):
    """Writes in both branches and a read after them (auto-monad orders them)."""

    def __init__(self):
        super().__init__()
        self.state = Parameter(Tensor(np.array([1.0], np.float32)), name="state")
        self.assign = P.Assign()

    def construct(self, x):
        if ops.sum(x) > 0:
            self.assign(self.state, self.state * 2.0)
        else:
            self.assign(self.state, self.state - 5.0)
        return self.state + x


def test_writes_in_branches_are_seen_after_them():
    net = BranchWrites()
    np.testing.assert_array_equal(net(Tensor(np.array([1.0], np.float32))).asnumpy(), [3.0])
    np.testing.assert_array_equal(net(Tensor(np.array([-1.0], np.float32))).asnumpy(), [-4.0])
    np.testing.assert_array_equal(net.state.asnumpy(), [-3.0])


class FirstAbove(nn.Cell):
    def construct(self, x, limit):
        i = 0
        found = -1
        while i < 10:
            if x[i] > limit:
                found = i
                break
            i += 1
        return found


def test_while_with_break():
    x = Tensor(np.array([0.1, 0.2, 0.9, 0.4, 1.5, 0, 0, 0, 0, 0], np.float32))
    assert FirstAbove()(x, 0.5) == 2
    assert FirstAbove()(x, 1.0) == 4
    assert FirstAbove()(x, 5.0) == -1


def test_a_regression_with_plain_sgd_and_weight_decay():
    ms.set_seed(13)
    rng = np.random.default_rng(14)
    x = rng.standard_normal((50, 2)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0]], np.float32)).astype(np.float32)
    net = nn.Dense(2, 1, has_bias=False)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    for _ in range(150):
        step(Tensor(x), Tensor(y))
    np.testing.assert_allclose(net.weight.asnumpy(), [[1.0, -2.0]], atol=1e-3)
    decayed = nn.Dense(2, 1, has_bias=False)
    step = nn.TrainOneStepCell(nn.WithLossCell(decayed, nn.MSELoss()),
                               nn.SGD(decayed.trainable_params(), 0.1, weight_decay=0.5))
    for _ in range(150):
        step(Tensor(x), Tensor(y))
    # Weight decay pulls the solution toward zero.
    assert np.abs(decayed.weight.asnumpy()).sum() < np.abs(net.weight.asnumpy()).sum()


def test_a_classifier_of_sequential_cells():
    ms.set_seed(15)
    net = nn.SequentialCell([nn.Flatten(), nn.Dense(16, 8, activation="relu"), nn.Dense(8, 3)])
    x = np.random.default_rng(16).standard_normal((5, 4, 4)).astype(np.float32)
    out = net(Tensor(x)).asnumpy()
    w1, b1 = net[1].weight.asnumpy(), net[1].bias.asnumpy()
    w2, b2 = net[2].weight.asnumpy(), net[2].bias.asnumpy()
    h = np.maximum(x.reshape(5, 16) @ w1.T + b1, 0)
    np.testing.assert_allclose(out, h @ w2.T + b2, rtol=1e-5, atol=1e-6)


class Mixed(nn.Cell):
    def __init__(self):
        super().__init__()
        self.concat = P.Concat(axis=1)
        self.cast = P.Cast()
        self.maximum = P.Maximum()
        self.minimum = P.Minimum()
        self.sub = P.Sub()
        self.div = P.RealDiv()

    def construct(self, x, n):
        f = self.cast(n, mstype.float32)
        both = self.concat((x, f))
        return self.div(self.sub(self.maximum(both, 1.0), self.minimum(both, 0.0)), 2.0)


def test_concat_cast_and_elementwise_primitives():
    x = np.array([[0.5, 2.0], [-1.0, 3.0]], np.float32)
    n = np.array([[1], [-2]], np.int32)
    got = Mixed()(Tensor(x), Tensor(n, mstype.int32)).asnumpy()
    both = np.concatenate([x, n.astype(np.float32)], axis=1)
    np.testing.assert_allclose(got, (np.maximum(both, 1.0) - np.minimum(both, 0.0)) / 2.0)


def test_value_and_grad_of_the_weights_only():
    ms.set_seed(17)
    net = nn.Dense(3, 1)
    loss_fn = nn.MSELoss()
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.5)

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    @ms.jit
    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss

    rng = np.random.default_rng(18)
    x = rng.standard_normal((40, 3)).astype(np.float32)
    y = (x.sum(axis=1, keepdims=True) * 0.5).astype(np.float32)
    losses = [float(step(Tensor(x), Tensor(y)).asnumpy()) for _ in range(100)]
    assert losses[-1] < 1e-3 * losses[0]


class LeNet5(nn.Cell):
    """MindSpore's LeNet-5 tutorial network, on 1x32x32 inputs."""

    def __init__(self, num_class=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.fc1 = nn.Dense(16 * 5 * 5, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, num_class)
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def test_lenet5_from_the_tutorial_learns_a_fixed_batch():
    ms.set_seed(19)
    net = LeNet5()
    rng = np.random.default_rng(20)
    x = Tensor(rng.standard_normal((8, 1, 32, 32)).astype(np.float32))
    y = Tensor(np.arange(8, dtype=np.int32) % 10, mstype.int32)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(net.trainable_params(), 0.05, 0.9))
    losses = [float(step(x, y).asnumpy()) for _ in range(60)]
    assert losses[-1] < 0.1 * losses[0], losses
    assert net(x).shape == (8, 10)


def test_model_trains_evaluates_and_predicts(capsys):
    ms.set_seed(21)
    rng = np.random.default_rng(22)
    x = rng.standard_normal((120, 2)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
    batches = [(x[i:i + 20], y[i:i + 20]) for i in range(0, 120, 20)]
    net = nn.Dense(2, 2)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = ms.Model(net, loss_fn=loss, optimizer=nn.Momentum(net.trainable_params(), 0.1, 0.9),
                     metrics={"accuracy", "loss"})
    before = model.eval(batches)
    model.train(10, batches, callbacks=[ms.train.LossMonitor(per_print_times=30)])
    after = model.eval(batches)
    assert after["accuracy"] > 0.9 and after["loss"] < before["loss"]
    # MindSpore's LossMonitor: every 30 steps, the step counted within its epoch (6 a epoch).
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("epoch:")]
    assert [line.split(", loss is")[0] for line in printed] == ["epoch: 5 step: 6", "epoch: 10 step: 6"]
    pred = model.predict(Tensor(x[:3])).asnumpy()
    np.testing.assert_allclose(pred, x[:3] @ net.weight.asnumpy().T + net.bias.asnumpy(), rtol=1e-5)
    # MindSpore's names are case-sensitive; those anfora lacks are refused by name.
    with pytest.raises(KeyError, match="unsupported metric Accuracy"):
        ms.Model(net, metrics={"Accuracy"})
    with pytest.raises(KeyError, match="'F1' is not supported by anfora"):
        ms.Model(net, metrics={"F1"})


class Accumulate(nn.Cell):
    """A Parameter updated inside a loop (auto-monad): each iteration reads the last write."""

    def __init__(self):
        super().__init__()
        self.total = Parameter(Tensor(np.zeros(1, np.float32)), name="total")
        self.assign_add = P.AssignAdd()

    def construct(self, x, n):
        for i in range(n):
            self.assign_add(self.total, x * i)
        return self.total * 1.0


def test_parameter_updates_inside_loops():
    net = Accumulate()
    out = net(Tensor(np.array([2.0], np.float32)), 4)
    np.testing.assert_array_equal(out.asnumpy(), [12.0])
    out = net(Tensor(np.array([1.0], np.float32)), 3)
    np.testing.assert_array_equal(out.asnumpy(), [15.0])


class StepCounter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.step = Parameter(Tensor(np.array(0, np.int32)), name="step", requires_grad=False)
        self.w = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="w")

    def construct(self, x):
        self.step += 1
        return ops.sum(self.w * x) * ops.cast(self.step, mstype.float32)


def test_augmented_assignment_of_a_parameter_attribute():
    net = StepCounter()
    x = Tensor(np.array([1.0, 1.0], np.float32))
    assert float(net(x).asnumpy()) == 3.0
    assert float(net(x).asnumpy()) == 6.0
    assert int(net.step.asnumpy()) == 2
    g = ms.grad(net, None, (net.w,))(x)
    np.testing.assert_allclose(g[0].asnumpy(), [3.0, 3.0])


# mindspore.dataset: the pipelines of MindSpore's data-loading tutorial, values against numpy.

from anfora.compat.mindspore import dataset as ds  # noqa: E402
from anfora.compat.mindspore.dataset import transforms, vision  # noqa: E402


def test_numpy_slices_dataset_maps_batches_and_iterates_as_tensors():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10)
    data = ds.NumpySlicesDataset((x, y), column_names=["data", "label"], shuffle=False)
    assert data.get_col_names() == ["data", "label"] and data.get_dataset_size() == 10
    data = data.map(transforms.TypeCast(mstype.int32), input_columns="label")
    data = data.map(lambda v: v * 2, input_columns=["data"]).batch(4)
    assert data.get_dataset_size() == 3 and data.get_batch_size() == 4
    batches = list(data.create_tuple_iterator())
    assert [len(b) for b in batches] == [2, 2, 2]
    assert all(isinstance(v, Tensor) for b in batches for v in b)
    np.testing.assert_array_equal(np.concatenate([b[0].asnumpy() for b in batches]), x * 2)
    labels = [b[1].asnumpy() for b in batches]
    assert [lab.dtype for lab in labels] == [np.int32] * 3
    np.testing.assert_array_equal(np.concatenate(labels), y)
    assert [b[1].shape for b in batches] == [(4,), (4,), (2,)]
    dropped = ds.NumpySlicesDataset({"a": x}, shuffle=False).batch(4, drop_remainder=True)
    assert dropped.get_dataset_size() == 2
    rows = list(dropped.create_dict_iterator(output_numpy=True))
    assert list(rows[0]) == ["a"] and rows[1]["a"].shape == (4, 2)


def test_shuffles_are_permutations_seeded_by_set_seed_and_new_each_epoch():
    def epoch_orders(seed):
        ms.set_seed(seed)
        data = ds.NumpySlicesDataset(np.arange(50), shuffle=True)
        return [[int(v[0]) for v in data.create_tuple_iterator(output_numpy=True)]
                for _ in range(2)]

    first, second = epoch_orders(3)
    assert sorted(first) == sorted(second) == list(range(50)) and first != second
    assert epoch_orders(3) == [first, second]  # the seed reproduces them
    buffered = ds.NumpySlicesDataset(np.arange(50), shuffle=False).shuffle(buffer_size=8)
    order = [int(v[0]) for v in buffered.create_tuple_iterator(output_numpy=True)]
    assert sorted(order) == list(range(50)) and order != list(range(50))
    # With a buffer of 8, the row emitted i-th was read at most 7 rows after it.
    assert all(row - i <= 7 for i, row in enumerate(order))
    with pytest.raises(ValueError, match="buffer_size must be at least 2"):
        buffered.shuffle(1)


def test_shards_split_the_rows_as_the_distributed_sampler():
    y = np.arange(10)
    shards = [[int(r["y"]) for r in ds.NumpySlicesDataset({"y": y}, num_shards=3, shard_id=k,
                                                          shuffle=False)
               .create_dict_iterator(output_numpy=True)] for k in range(3)]
    # ceil(10 / 3) = 4 rows each, interleaved, wrapping around to the start.
    assert shards == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    with pytest.raises(ValueError, match="shard_id should be less than num_shards"):
        ds.NumpySlicesDataset(y, num_shards=3, shard_id=3)


def test_generator_dataset_repeat_take_skip_project_and_rename():
    class Source:
        def __getitem__(self, i):
            return np.float32(i) / 2, i

        def __len__(self):
            return 6

    data = ds.GeneratorDataset(Source(), column_names=["x", "i"], shuffle=False)
    assert data.get_dataset_size() == 6
    got = [int(i) for _, i in data.repeat(2).skip(3).take(5).create_tuple_iterator(output_numpy=True)]
    assert got == [3, 4, 5, 0, 1]
    # A node of a pipeline has one consumer (MindSpore refuses a second): a new source.
    data = ds.GeneratorDataset(Source(), column_names=["x", "i"], shuffle=False)
    renamed = data.rename(["x"], ["half"]).project(["i", "half"])
    assert renamed.get_col_names() == ["i", "half"]
    first = next(renamed.create_tuple_iterator(output_numpy=True))
    assert int(first[0]) == 0 and float(first[1]) == 0.0
    streamed = ds.GeneratorDataset(lambda: iter([(1, 2), (3, 4)]), ["a", "b"])
    assert streamed.get_dataset_size() == 2
    assert [int(a) for a, _ in streamed.create_tuple_iterator(output_numpy=True)] == [1, 3]
    with pytest.raises(ValueError, match="need a source with __getitem__ and __len__"):
        ds.GeneratorDataset(iter([(1,)]), ["a"], shuffle=True)
    with pytest.raises(ValueError, match="GeneratorDataset needs column_names"):
        ds.GeneratorDataset(Source())


def test_vision_and_transforms_give_numpys_values():
    img = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    out = vision.HWC2CHW()(vision.Normalize([1, 2, 3], [2, 2, 4])(vision.Rescale(0.5, 1.0)(img)))
    expect = ((img * 0.5 + 1.0 - np.array([1, 2, 3])) / np.array([2, 2, 4])).transpose(2, 0, 1)
    np.testing.assert_allclose(out, expect, rtol=1e-6)
    assert out.dtype == np.float32 and out.shape == (3, 2, 4)
    np.testing.assert_array_equal(transforms.OneHot(4)(np.array([1, 3])),
                                  [[0, 1, 0, 0], [0, 0, 0, 1]])
    with pytest.raises(RuntimeError, match="should not bigger than num classes: 4, but got: 4"):
        transforms.OneHot(4)(np.array([4]))
    both = transforms.Compose([vision.Rescale(2.0, 0.0), transforms.TypeCast(mstype.int32)])
    np.testing.assert_array_equal(both(np.array([1.5, 2.0])), [3, 4])


def test_model_trains_from_a_dataset_pipeline():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x.sum(axis=1) > 0).astype(np.int32)
    net = nn.Dense(4, 2)
    model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                     nn.Adam(net.trainable_params(), learning_rate=0.05), metrics={"accuracy"})
    train = ds.NumpySlicesDataset((x, y), column_names=["x", "y"]).batch(16, drop_remainder=True)
    model.train(20, train)
    acc = model.eval(ds.NumpySlicesDataset((x, y), column_names=["x", "y"], shuffle=False).batch(64))
    assert acc["accuracy"] > 0.9


# mindspore.common.initializer and Tensor(init=...): each initializer's distribution against
# its definition (bounds exactly, moments statistically on 40,000 draws).

from anfora.compat.mindspore.common import initializer as init  # noqa: E402


def test_initializers_follow_their_definitions():
    ms.set_seed(0)
    n = 40_000
    cases = [
        (init.Normal(sigma=0.5, mean=1.0), (n,), 1.0, 0.5, None),
        (init.Uniform(scale=0.3), (n,), 0.0, 0.3 / np.sqrt(3), 0.3),
        # The bounds are values (MindSpore's): ±2 barely truncates N(0, 0.2²).
        (init.TruncatedNormal(sigma=0.2), (n,), 0.0, 0.2, None),
        (init.TruncatedNormal(sigma=1.0, a=-0.3, b=0.3), (n,), 0.0, None, 0.3),
        # (out, in, kh, kw): fan_in = 8·9 = 72, fan_out = 100·9 = 900.
        (init.XavierUniform(gain=2), (100, 8, 3, 3), 0.0, None, 2 * np.sqrt(6 / (72 + 900))),
        (init.XavierNormal(), (400, 100), 0.0, np.sqrt(2 / 500), None),
        (init.HeUniform(), (200, 50), 0.0, None, np.sqrt(6 / 50)),
        (init.HeNormal(mode="fan_out", nonlinearity="relu"), (300, 40), 0.0, np.sqrt(2 / 300), None),
    ]
    for initializer, shape, mean, std, bound in cases:
        v = init.initializer(initializer, shape, mstype.float32).asnumpy().astype(np.float64)
        assert v.shape == shape and v.dtype == np.float64
        # Five standard errors of the mean (a uniform's spread is below its bound).
        assert abs(v.mean() - mean) < 5 * (std or bound) / np.sqrt(v.size), initializer
        if std is not None:
            assert abs(v.std() / std - 1) < 0.03, (initializer, v.std(), std)
        if bound is not None:
            assert np.abs(v - mean).max() <= bound * (1 + 1e-6), initializer
            assert np.abs(v - mean).max() > 0.95 * bound, initializer
    np.testing.assert_array_equal(init.initializer("ones", (2, 2)).asnumpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(init.initializer(init.Constant(3), [3], mstype.int32).asnumpy(), [3, 3, 3])
    np.testing.assert_array_equal(init.initializer("identity", [2, 3]).asnumpy(), np.eye(2, 3))
    assert init.initializer("zeros", [2]).dtype == mstype.float32


def test_set_seed_reproduces_initial_values_and_mindspores_names_select_initializers():
    ms.set_seed(5)
    a = init.initializer("xavier_uniform", [4, 4]).asnumpy()
    ms.set_seed(5)
    b = init.initializer("XavierUniform", [4, 4]).asnumpy()
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="the class corresponding to 'glorot' was not found"):
        init.initializer("glorot", [2])
    with pytest.raises(ValueError, match=r"an initial value of shape \(3,\) for shape \(2,\)"):
        init.initializer(np.ones(3), [2])


def test_tensor_and_parameter_take_initializers():
    ms.set_seed(1)
    t = Tensor(shape=(2, 3), dtype=mstype.float32, init=init.One()).init_data()
    np.testing.assert_array_equal(t.asnumpy(), np.ones((2, 3)))
    assert t.dtype == mstype.float32
    p = Parameter(init.initializer(init.Normal(0.02), [8, 4], mstype.float32), name="w")
    assert p.shape == (8, 4) and p.dtype == mstype.float32
    dense = nn.Dense(10, 5, weight_init=init.HeNormal(), bias_init="zeros")
    assert dense.weight.shape == (5, 10)
    np.testing.assert_array_equal(dense.bias.asnumpy(), np.zeros(5))
    with pytest.raises(ValueError, match="init, dtype and shape must have values at the same time"):
        Tensor(init=init.One())


# Callbacks: MindSpore's protocol (RunContext, cb_params, the 2.x and 1.x hook names).

from anfora.compat.mindspore.train import callback as cbs  # noqa: E402


def _tiny_model():
    ms.set_seed(3)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((40, 2)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)
    net = nn.Dense(2, 2)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = ms.Model(net, loss_fn=loss, optimizer=nn.Momentum(net.trainable_params(), 0.1, 0.9))
    data = ds.NumpySlicesDataset((x, y), column_names=["x", "y"], shuffle=False).batch(10)
    return model, net, data


def test_callbacks_see_the_runs_parameters_in_mindspores_order():
    model, net, data = _tiny_model()
    seen = []

    class Recorder(cbs.Callback):
        def on_train_begin(self, run_context):
            p = run_context.original_args()
            seen.append(("begin", p.epoch_num, p.batch_num))

        def epoch_begin(self, run_context):  # a 1.x name, called by on_train_epoch_begin
            seen.append(("epoch", run_context.original_args().cur_epoch_num))

        def step_end(self, run_context):
            p = run_context.original_args()
            seen.append(("step", p.cur_epoch_num, p.cur_step_num, round(float(p.net_outputs.asnumpy()), 6)))

        def on_train_end(self, run_context):
            seen.append(("end", run_context.original_args().cur_step_num))

    model.train(2, data, callbacks=Recorder())
    assert seen[0] == ("begin", 2, 4) and seen[1] == ("epoch", 1) and seen[-1] == ("end", 8)
    steps = [s for s in seen if s[0] == "step"]
    assert [s[1:3] for s in steps] == [(1, 1), (1, 2), (1, 3), (1, 4), (2, 5), (2, 6), (2, 7), (2, 8)]
    assert all(np.isfinite(s[3]) and s[3] > 0 for s in steps)
    with pytest.raises(TypeError, match="must be Callback functions"):
        model.train(1, data, callbacks=[object()])


def test_request_stop_ends_training_after_the_step():
    model, net, data = _tiny_model()
    count = []
    stopper = cbs.LambdaCallback(on_train_step_end=lambda rc: (count.append(1), rc.request_stop() if len(count) == 3 else None))
    model.train(5, data, callbacks=[stopper])
    assert len(count) == 3


def test_loss_monitor_refuses_a_nan_loss_and_time_monitor_prints_each_epoch(capsys):
    run = cbs.RunContext(cbs._Params(cur_epoch_num=1, cur_step_num=2, batch_num=4, net_outputs=Tensor(np.float32("nan"))))
    with pytest.raises(ValueError, match="epoch: 1 step: 2. Invalid loss, terminating training."):
        cbs.LossMonitor().on_train_step_end(run)
    model, net, data = _tiny_model()
    model.train(2, data, callbacks=[cbs.TimeMonitor()])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("epoch time:")]
    assert len(lines) == 2 and all("per step time:" in line for line in lines)


def test_model_checkpoint_saves_keeps_the_newest_and_loads_back(tmp_path):
    model, net, data = _tiny_model()
    config = cbs.CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=2)
    ckpt = cbs.ModelCheckpoint(prefix="net", directory=str(tmp_path), config=config)
    model.train(2, data, callbacks=[ckpt])
    # Steps 2, 4, 6, 8 saved (epoch 1 steps 2 and 4, epoch 2 steps 2 and 4); the newest two kept.
    assert sorted(os.listdir(tmp_path)) == ["net-2_2.ckpt", "net-2_4.ckpt"]
    assert ckpt.latest_ckpt_file_name == str(tmp_path / "net-2_4.ckpt")
    trained = net.weight.asnumpy().copy()
    net.weight.set_data(np.zeros_like(trained))
    ms.load_param_into_net(model._step, ms.load_checkpoint(ckpt.latest_ckpt_file_name))
    np.testing.assert_array_equal(net.weight.asnumpy(), trained)


def test_parameters_are_named_after_where_they_are_held():
    """MindSpore's auto_prefix: a Cell attribute prefixes its Parameters' names."""

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Dense(2, 3)
            self.seq = nn.SequentialCell(nn.Dense(3, 3), nn.ReLU())
            self.w = Parameter(Tensor(np.ones(2), mstype.float32))  # no name: the attribute's
            self.k = Parameter(Tensor(np.ones(1), mstype.float32), name="kept")

        def construct(self, x):
            return self.seq(self.fc1(x)).sum() + (self.w * self.k).sum()

    net = Net()
    names = [p.name for p in net.get_parameters()]
    # MindSpore's order: a Cell's own Parameters, then its Cells'.
    assert names == ["w", "kept", "fc1.weight", "fc1.bias", "seq.0.weight", "seq.0.bias"]

    class Outer(nn.Cell):
        def __init__(self, inner, auto_prefix=True):
            super().__init__(auto_prefix=auto_prefix)
            self.backbone = inner

        def construct(self, x):
            return self.backbone(x)

    Outer(net, auto_prefix=False)
    assert net.fc1.weight.name == "fc1.weight"
    outer = Outer(net)
    assert [p.name for p in outer.get_parameters()] == [
        "backbone.w", "backbone.k", "backbone.fc1.weight", "backbone.fc1.bias",
        "backbone.seq.0.weight", "backbone.seq.0.bias"]
    # The names change nothing else: the same Parameters train.
    x = Tensor(np.ones((4, 2), np.float32))
    assert outer(x).shape == ()
    step = nn.TrainOneStepCell(outer, nn.SGD(outer.trainable_params(), 0.1))  # auto_prefix=False
    assert step.network.backbone.fc1.weight.name == "backbone.fc1.weight"


# Integer gradients: MindSpore computes them as for floats and casts (truncating) each value's
# sensitivity to its dtype. The expected values are MindSpore 2.7.2's (run on this machine
# kind, graph mode, CPU), each also derivable by hand as commented.

def _sq(x):
    return x * x


def _scale(x):
    return x * 2.5


def _mixed(x, y):
    return x * x * y


def _total(x):
    return ops.sum(x * x)


def _cube(x):
    return x * x * x


def _picked(x):
    return x[1] * 3


def _through_float(x):
    return ops.exp(ops.cast(x, ms.float32))


def _product(x, w):
    return ops.matmul(ops.cast(x, ms.float32), w)


def _broadcast(x, y):
    return x + y


class _IntNet(nn.Cell):
    def construct(self, x, y):
        return x * x * y


def test_integer_gradients_follow_mindspores_rule():
    xi = Tensor(np.array([3, -2, 5], np.int32))
    xf = Tensor(np.array([1.5, 2.0, -1.0], np.float32))

    def check(got, dtypes, values):
        got = got if isinstance(got, tuple) else (got,)
        assert [g.dtype for g in got] == dtypes
        for g, v in zip(got, values):
            np.testing.assert_array_equal(g.asnumpy(), v)

    check(ms.grad(_sq)(xi), [mstype.int32], [[6, -4, 10]])  # 2x in int32
    check(ms.grad(_scale)(xi), [mstype.int32], [[2, 2, 2]])  # 2.5 truncated
    # (x*x)*y: y truncated to int32 ([1, 2, -1]) as x*x's sensitivity, then 2x times it.
    check(ms.grad(_mixed, grad_position=(0, 1))(xi, xf), [mstype.int32, mstype.float32],
          [[6, -8, -10], [9.0, 4.0, 25.0]])
    check(ms.grad(_total)(xi), [mstype.int32], [[6, -4, 10]])
    check(ms.grad(_cube)(Tensor(np.array([2, 3], np.int64))), [mstype.int64], [[12, 27]])
    check(ms.grad(_picked)(xi), [mstype.int32], [[0, 3, 0]])
    check(ms.grad(_through_float)(xi), [mstype.int32], [[20, 0, 148]])  # exp(x) truncated
    w = Tensor(np.array([[1.5, 2.0], [3.0, -1.0]], np.float32))
    check(ms.grad(_product, grad_position=(0, 1))(Tensor(np.array([[1, 2], [3, 4]], np.int32)), w),
          [mstype.int32, mstype.float32], [[[3, 2], [3, 2]], [[4.0, 4.0], [6.0, 6.0]]])
    check(ms.grad(_broadcast, grad_position=(0, 1))(Tensor(np.array([[1], [2]], np.int32)),
                                                    Tensor(np.array([[0.5, 1.5, 2.5]], np.float32))),
          [mstype.int32, mstype.float32], [[[3], [3]], [[2.0, 2.0, 2.0]]])
    check(ms.grad(_sq)(Tensor(np.array([2, 3], np.uint8))), [mstype.uint8], [[4, 6]])
    # GradOperation on a Cell, with and without a sensitivity (2 everywhere).
    check(C.GradOperation(get_all=True)(_IntNet())(xi, xf), [mstype.int32, mstype.float32],
          [[6, -8, -10], [9.0, 4.0, 25.0]])
    # All integers: x*x*y with y = [2, 1, -1], and a sensitivity [2, 3, 1] (2xy·sens).
    yi = Tensor(np.array([2, 1, -1], np.int32))
    check(C.GradOperation(get_all=True)(_IntNet())(xi, yi), [mstype.int32, mstype.int32],
          [[12, -4, -10], [9, 4, 25]])
    sens = Tensor(np.array([2, 3, 1], np.int32))
    check(C.GradOperation(sens_param=True)(_IntNet())(xi, yi, sens), [mstype.int32], [[24, -12, -10]])


def test_anforas_own_grad_keeps_integers_out():
    import anfora

    xi = Tensor(np.array([3, -2, 5], np.int32))
    np.testing.assert_array_equal(anfora.grad(_sq)(xi).asnumpy(), [0, 0, 0])
    np.testing.assert_array_equal(anfora.grad(_sq, integers="cast")(xi).asnumpy(), [6, -4, 10])
    with pytest.raises(ValueError, match="integers must be 'zero' or 'cast'"):
        anfora.grad(_sq, integers="mindspore")


class _Functions(nn.Cell):
    """MindSpore 2.x's functional operations whose signatures or results differ from
    numpy's, inside construct."""

    def construct(self, x):
        values, indices = ops.max(x, 1)
        low, where_low = ops.min(x, 0)
        padded = ops.pad(x, (1, 0, 0, 2))
        flat = ops.flatten(ops.reshape(x, (2, 3, 1)))
        hot = ops.one_hot(ops.argmax(x, dim=1), 3, Tensor(2.0, ms.float32), Tensor(-1.0, ms.float32))
        return (values, indices, low, where_low, ops.argmin(x, 1), padded, flat, ops.norm(x),
                ops.sum(x, dim=0, keepdim=True), ops.mean(x, 1, keep_dims=True), hot,
                ops.clamp(x, 2.0, 5.0), ops.cat((x, x), 1), ops.std(x, 1))


def test_functional_operations_take_mindspores_signatures():
    # The values MindSpore 2.7.2 gives for these calls (in PyNative and graph mode).
    x = np.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]], np.float32)
    got = _Functions()(Tensor(x))
    (values, indices, low, where_low, argmin, padded, flat, norm, total, mean, hot, clamped, cat,
     std) = [g.asnumpy() for g in got]
    np.testing.assert_array_equal(values, [5.0, 6.0])
    np.testing.assert_array_equal(indices, [1, 2])
    assert got[1].dtype == mstype.int64 and got[4].dtype == mstype.int32
    np.testing.assert_array_equal(low, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(where_low, [0, 1, 0])
    np.testing.assert_array_equal(argmin, [0, 1])
    np.testing.assert_array_equal(padded, [[0, 1, 5, 3], [0, 4, 2, 6], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert flat.shape == (2, 3)
    np.testing.assert_allclose(norm, 9.539392471313477, rtol=1e-6)
    np.testing.assert_array_equal(total, [[5.0, 7.0, 9.0]])
    np.testing.assert_allclose(mean, [[3.0], [4.0]])
    np.testing.assert_array_equal(hot, [[-1.0, 2.0, -1.0], [-1.0, -1.0, 2.0]])
    np.testing.assert_array_equal(clamped, np.clip(x, 2.0, 5.0))
    assert cat.shape == (2, 6)
    np.testing.assert_allclose(std, x.std(axis=1), rtol=1e-6)


def _windows(x, kernel, stride):
    """numpy: the (kernel × kernel) windows of the last two axes moving by `stride`."""
    n, c, h, w = x.shape
    oh, ow = (h - kernel) // stride + 1, (w - kernel) // stride + 1
    out = np.empty((n, c, oh, ow, kernel, kernel), x.dtype)
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = x[:, :, i * stride:i * stride + kernel, j * stride:j * stride + kernel]
    return out.reshape(n, c, oh, ow, -1)


def test_pooling_takes_mindspores_defaults_and_pad_modes():
    # MindSpore's defaults: kernel_size=1, stride=1 (not the kernel size); "same" pads to
    # ceil(size / stride) outputs with the odd row and column after (-inf for max, excluded
    # from the mean for average); "pad" pads both sides (zeros counted in the mean).
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 6)).astype(np.float32)
    t = Tensor(x)
    np.testing.assert_array_equal(nn.MaxPool2d(2)(t).asnumpy(), _windows(x, 2, 1).max(-1))
    np.testing.assert_array_equal(nn.MaxPool2d()(t).asnumpy(), x)
    # 3×3 windows, stride 2, "same": 7 → 4 rows (2 padded: 1 above, 1 below), 6 → 3 columns
    # (1 padded after).
    high = np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 1)), constant_values=-np.inf)
    same = nn.MaxPool2d(3, 2, pad_mode="same")(t).asnumpy()
    np.testing.assert_array_equal(same, _windows(high, 3, 2).max(-1))
    zeros = np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 1)))
    counts = np.pad(np.ones_like(x), ((0, 0), (0, 0), (1, 1), (0, 1)))
    mean = _windows(zeros, 3, 2).sum(-1) / _windows(counts, 3, 2).sum(-1)
    np.testing.assert_allclose(nn.AvgPool2d(3, 2, pad_mode="same")(t).asnumpy(), mean, rtol=1e-5,
                               atol=1e-6)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    np.testing.assert_allclose(nn.AvgPool2d(3, 1, pad_mode="pad", padding=1)(t).asnumpy(),
                               _windows(padded, 3, 1).mean(-1), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="the 'pad_mode' must be str and must be in .*'FULL'"):
        nn.MaxPool2d(2, pad_mode="full")
    with pytest.raises(ValueError, match="padding must be 0 unless pad_mode is 'pad'"):
        nn.AvgPool2d(2, padding=1)
    with pytest.raises(ValueError, match="dilation, return_indices and ceil_mode are not"):
        nn.MaxPool2d(2, ceil_mode=True)


def test_activations_by_mindspores_names():
    # Each against its definition with MindSpore's defaults (leakyrelu 0.2, elu 1, softmax on
    # the last axis); MindSpore 2.7.2 gives the same values.
    x = np.linspace(-5, 5, 24, dtype=np.float32).reshape(2, 12)
    xd = x.astype(np.float64)
    softplus = np.log1p(np.exp(xd))
    e = np.exp(xd - xd.max(-1, keepdims=True))
    expected = {
        "relu6": np.clip(xd, 0, 6), "silu": xd / (1 + np.exp(-xd)),
        "softmax": e / e.sum(-1, keepdims=True), "logsoftmax": np.log(e / e.sum(-1, keepdims=True)),
        "hswish": xd * np.clip(xd + 3, 0, 6) / 6, "hsigmoid": np.clip(xd + 3, 0, 6) / 6,
        "leakyrelu": np.where(xd >= 0, xd, 0.2 * xd), "elu": np.where(xd > 0, xd, np.expm1(xd)),
        "softsign": xd / (1 + np.abs(xd)), "logsigmoid": -np.log1p(np.exp(-xd)),
        "mish": xd * np.tanh(softplus), "tanhshrink": xd - np.tanh(xd),
    }
    for name, want in expected.items():
        got = nn.get_activation(name)(Tensor(x)).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
        dense = nn.Dense(12, 3, weight_init="ones", bias_init="zeros", activation=name)
        assert dense(Tensor(x)).shape == (2, 3)
    assert nn.get_activation(None) is None
    with pytest.raises(KeyError, match="activation 'gelu' is not supported by anfora"):
        nn.get_activation("gelu")

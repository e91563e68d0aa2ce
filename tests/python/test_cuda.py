"""The CUDA backend from Python: tensors on `cuda:N`, compiled functions and training steps on
the device, against the CPU. Skipped (one line) on machines without a CUDA device; run on a GPU
machine by gpu-bin/run.sh (scripts/gpu-check.sh builds the wheel it installs)."""

import numpy as np
import pytest

import anfora
import anfora.ops as ops

CUDA = [name for name, _ in anfora.devices() if name.startswith("cuda")]
pytestmark = pytest.mark.skipif(not CUDA, reason="no CUDA device on this machine")


def test_tensors_move_to_the_device_and_back():
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    t = anfora.tensor(x, device="cuda:0")
    assert t.device == "cuda:0" and t.shape == (3, 4) and t.dtype == anfora.float32
    np.testing.assert_array_equal(np.asarray(t), x)  # a copy to the host
    back = t.to("cpu")
    assert back.device == "cpu"
    np.testing.assert_array_equal(back.numpy(), x)
    u = t + 1.0  # eager operations run where their operands are
    assert u.device == "cuda:0"
    np.testing.assert_allclose(np.asarray(u), x + 1.0, rtol=1e-6)


def test_a_compiled_function_runs_on_the_device():
    @anfora.jit
    def f(x, w):
        return ops.sum(ops.tanh(x @ w * 1.5 + 0.3) * ops.sigmoid(x @ w), axis=1)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    w = rng.standard_normal((32, 16)).astype(np.float32)
    cpu = np.asarray(f(anfora.tensor(x), anfora.tensor(w)))
    anfora.set_context(device="cuda:0")
    try:
        got = f(anfora.tensor(x, device="cuda:0"), anfora.tensor(w, device="cuda:0"))
        assert got.device == "cuda:0"
        np.testing.assert_allclose(np.asarray(got), cpu, rtol=1e-5, atol=1e-5)
    finally:
        anfora.set_context(device="cpu")


def test_a_training_step_on_the_device_matches_the_cpu():
    def make():
        anfora.set_seed(0)
        w = anfora.Parameter(ops.uniform((20, 3), -0.5, 0.5), name="w")
        b = anfora.Parameter(ops.zeros((3,)), name="b")

        def loss(x, y):
            z = x @ w + b
            z = z - ops.stop_gradient(ops.max(z, axis=1, keepdims=True))
            lse = ops.log(ops.sum(ops.exp(z), axis=1, keepdims=True))
            return -ops.mean(ops.sum((z - lse) * y, axis=1))

        @anfora.jit
        def step(x, y):
            l, g = anfora.value_and_grad(loss, argnums=None, weights=(w, b))(x, y)
            ops.sgd(w, g[0], 0.1)
            ops.sgd(b, g[1], 0.1)
            return l

        return step, w

    rng = np.random.default_rng(1)
    x = rng.standard_normal((50, 20)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 50)]
    step, w_cpu = make()
    cpu = [float(np.asarray(step(anfora.tensor(x), anfora.tensor(y)))) for _ in range(5)]
    anfora.set_context(device="cuda:0")
    try:
        step, w_gpu = make()
        xs, ys = anfora.tensor(x, device="cuda:0"), anfora.tensor(y, device="cuda:0")
        gpu = [float(np.asarray(step(xs, ys))) for _ in range(5)]
    finally:
        anfora.set_context(device="cpu")
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4)
    assert gpu[-1] < gpu[0]
    assert w_gpu.device == "cuda:0"  # the Parameter moved to the program's device
    np.testing.assert_allclose(np.asarray(w_gpu), np.asarray(w_cpu), rtol=1e-4, atol=1e-6)


def test_the_digits_example_trains_on_the_device_as_on_the_cpu():
    pytest.importorskip("sklearn")
    from conftest import load_example

    digits = load_example("train_digits")
    try:
        for model in ["mlp", "lenet"]:
            args = ["--model", model, "--epochs", "3", "--min-accuracy", "0.9"]
            assert digits.main(args + ["--device", "cuda:0"]) == 0
    finally:
        anfora.set_context(device="cpu")

"""Devices: the CPU backend is always there, and asking for a device without a backend is a
clear error that changes nothing. On a machine with CUDA devices the `cuda` cases that need
their absence are skipped; tests/python/test_cuda.py covers those devices."""

import numpy as np
import pytest

import anfora
import anfora.ops as ops

CUDA = any(name.startswith("cuda") for name, _ in anfora.devices())


def test_the_cpu_is_the_default_device_and_describes_itself():
    devices = anfora.devices()
    assert devices[0][0] == "cpu"
    assert devices[0][1].startswith("cpu: ") and " threads, SIMD " in devices[0][1]
    assert anfora.get_device() == "cpu"
    anfora.set_context(device="CPU")
    assert anfora.get_device() == "cpu"


@pytest.mark.parametrize(
    "name, message",
    [
        ("cuda", "no backend is registered for device 'cuda:0' (available: cpu)"),
        ("cuda:3", "no backend is registered for device 'cuda:3' (available: cpu)"),
        ("tpu", "unknown device 'tpu': expected 'cpu', 'cuda' or 'cuda:N' (N a device index)"),
        ("cuda:x", "unknown device 'cuda:x': expected 'cpu', 'cuda' or 'cuda:N' (N a device index)"),
        ("cpu:1", "unknown device 'cpu:1': expected 'cpu', 'cuda' or 'cuda:N' (N a device index)"),
    ],
)
def test_a_device_without_a_backend_is_refused(name, message):
    if name.startswith("cuda") and CUDA:
        pytest.skip("this machine has CUDA devices")
    with pytest.raises(ValueError) as e:
        anfora.set_context(device=name)
    assert str(e.value) == message
    assert anfora.get_device() == "cpu"

    @anfora.jit
    def f(x):
        return ops.tanh(x) * 2.0

    x = np.array([0.0, 1.0], dtype=np.float64)
    np.testing.assert_allclose(f(anfora.tensor(x)).numpy(), np.tanh(x) * 2.0, rtol=1e-15)


def test_tensors_say_where_they_are_and_move_between_devices():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = anfora.tensor(x, device="cpu")
    assert t.device == "cpu"
    u = t.to("cpu")
    assert u.device == "cpu"
    np.testing.assert_array_equal(np.asarray(u), x)
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        t.to("tpu")
    with pytest.raises(ValueError, match="unknown device 'gpu:x'"):
        anfora.tensor(x, device="gpu:x")
    if not CUDA:
        with pytest.raises(ValueError) as e:
            t.to("cuda:0")
        assert str(e.value) == "no backend is registered for device 'cuda:0' (available: cpu)"
    p = anfora.Parameter(x, name="w")
    assert p.device == "cpu"
    assert p.to("cpu").device == "cpu"


def test_matmul_precision_is_float32_or_tf32():
    anfora.set_context(matmul_precision="tf32")
    anfora.set_context(matmul_precision="float32")
    with pytest.raises(ValueError) as e:
        anfora.set_context(matmul_precision="bf16")
    assert str(e.value) == "matmul_precision must be 'float32' or 'tf32', not 'bf16'"
    # The CPU computes float32 products in float32 whatever the setting.
    a = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)

    @anfora.jit
    def f(x):
        return x @ x

    anfora.set_context(matmul_precision="tf32")
    try:
        np.testing.assert_allclose(np.asarray(f(anfora.tensor(a))), a @ a, rtol=1e-5, atol=1e-5)
    finally:
        anfora.set_context(matmul_precision="float32")


def test_placement_blocks_compile_and_compute_as_without_them():
    @anfora.jit
    def placed(x):
        y = x * 2.0
        with anfora.placement("cpu"):
            z = ops.tanh(y) + 1.0
        with anfora.placement("cpu", "0:0"):
            w = ops.sum(z * z)
        return w + ops.sum(y)

    def plain(x):
        y = x * 2.0
        z = np.tanh(y) + 1.0
        return np.sum(z * z) + np.sum(y)

    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    np.testing.assert_allclose(float(placed(anfora.tensor(x))), plain(x), rtol=1e-6)
    g = anfora.grad(placed)(anfora.tensor(x))
    expected = 2.0 * (2.0 * (np.tanh(2 * x) + 1.0) * (1.0 - np.tanh(2 * x) ** 2)) + 2.0
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-5)


def test_a_placement_outside_compiled_code_sets_the_device_of_the_block():
    assert anfora.get_device() == "cpu"
    with anfora.placement("cpu", "0:0") as p:
        assert anfora.get_device() == "cpu"
        assert repr(p) == "placement('cpu:0')"
    assert anfora.get_device() == "cpu"
    with pytest.raises(ValueError, match="one device of this machine"):
        anfora.placement("cuda", "1:0")


def test_a_placement_on_an_unknown_device_is_refused_where_it_is_written():
    @anfora.jit
    def f(x):
        with anfora.placement("tpu"):
            y = x + 1
        return y

    with pytest.raises(anfora.CompileError) as e:
        f(anfora.tensor(np.ones(2, np.float32)))
    assert "E0107" in str(e.value) and "unknown device 'tpu'" in str(e.value)

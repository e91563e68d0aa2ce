"""Devices: the CPU backend is always there, and asking for a device without a backend is a
clear error that changes nothing."""

import numpy as np
import pytest

import anfora
import anfora.ops as ops


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
    with pytest.raises(ValueError) as e:
        anfora.set_context(device=name)
    assert str(e.value) == message
    assert anfora.get_device() == "cpu"

    @anfora.jit
    def f(x):
        return ops.tanh(x) * 2.0

    x = np.array([0.0, 1.0], dtype=np.float64)
    np.testing.assert_allclose(f(anfora.tensor(x)).numpy(), np.tanh(x) * 2.0, rtol=1e-15)

"""Training on the device: a TrainOneStepCell exported from Python runs in
examples/c/train_on_device.c (the C runtime, no compiler inside) with the same losses as the
Python front (to 1e-5 relative); the model it saves loads in Python with the Parameters the
Python run trained.

The C program links against the libanfora_runtime.so that `cargo test` builds
(target/debug/deps, as crates/anfora-cli/tests/c_api.rs does), or $ANFORA_RUNTIME_LIB."""

import os
import pathlib
import runpy
import shutil
import subprocess

import numpy as np
import pytest

import anfora
from anfora import nn

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = runpy.run_path(str(ROOT / "examples" / "train_digits.py"))


def runtime_library():
    named = os.environ.get("ANFORA_RUNTIME_LIB")
    candidates = [pathlib.Path(named)] if named else [
        ROOT / "target" / "debug" / "deps" / "libanfora_runtime.so",
        ROOT / "target" / "debug" / "libanfora_runtime.so",
        ROOT / "target" / "release" / "libanfora_runtime.so",
    ]
    found = [c for c in candidates if c.exists()]
    assert found, f"no libanfora_runtime.so at {candidates}: run cargo test (or cargo build -p anfora-runtime) first"
    return found[0]


def build(tmp_path):
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc}); scripts/setup.sh installs gcc")
    lib = runtime_library()
    exe = tmp_path / "train_on_device"
    subprocess.run([cc, "-std=c11", "-O1", "-o", str(exe), str(ROOT / "examples" / "c" / "train_on_device.c"),
                    f"-I{ROOT / 'crates' / 'anfora-runtime' / 'include'}", f"-L{lib.parent}", "-lanfora_runtime",
                    f"-Wl,-rpath,{lib.parent}", "-lm"], check=True)
    return exe


def step_of(seed):
    net = EXAMPLE["lenet"](seed)
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    return net, nn.TrainOneStepCell(loss, nn.Adam(net.trainable_params(), learning_rate=3e-3))


def test_the_c_runtime_trains_as_python_does(tmp_path):
    exe = build(tmp_path)
    rng = np.random.default_rng(3)
    x = rng.random((32, 1, 8, 8), dtype=np.float32)
    y = rng.integers(0, 10, 32).astype(np.int64)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    net, step = step_of(0)
    anfora.export(step, anfora.tensor(x), anfora.tensor(y), file_name=tmp_path / "step.anfora")
    steps = 6
    out = subprocess.run([str(exe), str(tmp_path / "step.anfora"), str(tmp_path / "x.npy"), str(tmp_path / "y.npy"),
                          str(steps), str(tmp_path / "trained.anfora")], check=True, capture_output=True, text=True).stdout
    c_losses = [float(line.split()[-1]) for line in out.splitlines() if line.startswith("step ")]
    py_losses = [float(step(anfora.tensor(x), anfora.tensor(y))) for _ in range(steps)]
    assert len(c_losses) == steps
    np.testing.assert_allclose(c_losses, py_losses, rtol=1e-5)
    assert c_losses[-1] < c_losses[0]
    trained = dict(anfora.load(tmp_path / "trained.anfora").parameters_dict())
    for name, p in anfora.parameters_of(step):
        np.testing.assert_allclose(np.asarray(trained[name].value), np.asarray(p.value), rtol=1e-5, atol=1e-7)
    # The saved model goes on training from where the C run stopped, as the Python step does.
    resumed = anfora.load(tmp_path / "trained.anfora")
    np.testing.assert_allclose(float(resumed(anfora.tensor(x), anfora.tensor(y))),
                               float(step(anfora.tensor(x), anfora.tensor(y))), rtol=1e-5)

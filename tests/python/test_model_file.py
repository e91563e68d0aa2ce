"""Model files from Python: `anfora.export` writes one, `anfora.load` runs it with results
bit-identical to the compiled original (recursion and loops included), its Parameters read,
set and saved, an exported training step trains the loaded model; ONNX exports run in
onnxruntime."""

import pathlib
import runpy

import numpy as np
import pytest

import anfora
from anfora import nn, ops

EXAMPLE = runpy.run_path(str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"))


def images(n, seed=0):
    return np.random.default_rng(seed).random((n, 1, 8, 8), dtype=np.float32)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("batch", [1, 360])
def test_lenet_loads_bit_identical(tmp_path, batch):
    net = EXAMPLE["lenet"](0)
    x = anfora.tensor(images(batch))
    size = anfora.export(net, anfora.TensorSpec((batch, 1, 8, 8)), file_name=tmp_path / "lenet.anfora")
    assert size == (tmp_path / "lenet.anfora").stat().st_size
    model = anfora.load(tmp_path / "lenet.anfora")
    assert model.inputs == [("x", "float32", [batch, 1, 8, 8])]
    assert model.outputs == [("output0", "float32", [batch, 10])]
    assert same_bits(model(x), net(x))
    names = [n for n, _ in model.parameters_dict()]
    assert len(set(names)) == len(names) == 6
    assert names[0] == "cells.0.weight"


def test_parameters_are_read_and_set(tmp_path):
    net = EXAMPLE["mlp"](0)
    x = anfora.tensor(images(4).reshape(4, 64))
    anfora.export(net, x, file_name=tmp_path / "mlp.anfora")
    model = anfora.load(tmp_path / "mlp.anfora")
    params = dict(model.parameters_dict())
    ours = dict(anfora.parameters_of(net))
    assert sorted(params) == sorted(ours)
    for name, p in params.items():
        assert same_bits(p.value, ours[name].value)
    bias = next(n for n in params if n.endswith("bias") and params[n].shape == (10,))
    params[bias].set_data(np.full((10,), 1.0, np.float32))
    shifted = np.asarray(model(x))
    ours[bias].set_data(np.full((10,), 1.0, np.float32))
    assert same_bits(shifted, net(x))
    model.save(tmp_path / "mlp2.anfora")
    again = anfora.load(tmp_path / "mlp2.anfora")
    assert same_bits(again(x), shifted)


def test_a_training_step_trains_the_loaded_model(tmp_path):
    def step_of(seed):
        net = EXAMPLE["lenet"](seed)
        loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
        return net, nn.TrainOneStepCell(loss, nn.Adam(net.trainable_params(), learning_rate=3e-3))

    x, y = anfora.tensor(images(32)), anfora.tensor(np.arange(32) % 10)
    net, step = step_of(0)
    anfora.export(step, x, y, file_name=tmp_path / "step.anfora")
    loaded = anfora.load(tmp_path / "step.anfora")
    assert loaded.writes_parameters
    want = [float(step(x, y)) for _ in range(4)]
    got = [float(loaded(x, y)) for _ in range(4)]
    assert got == want and want[-1] < want[0]
    loaded.save(tmp_path / "trained.anfora")
    trained = dict(anfora.load(tmp_path / "trained.anfora").parameters_dict())
    for name, p in anfora.parameters_of(step):
        assert same_bits(trained[name].value, p.value), name


@anfora.jit
def fibonacci(n):
    if n < 1:
        return ops.zeros_like(n)
    if n < 2:
        return ops.ones_like(n)
    return fibonacci(n - 1) + fibonacci(n - 2)


@anfora.jit
def grow(x):
    i = 0
    while ops.sum(x) < 100.0:
        x = x * 2.0 + 1.0
        i += 1
    return x, i


def test_recursion_and_loops_survive_the_file(tmp_path):
    anfora.export(fibonacci, anfora.tensor([10.0]), file_name=tmp_path / "fib.anfora")
    fib = anfora.load(tmp_path / "fib.anfora")
    for n in [0.0, 1.0, 10.0, 15.0]:
        assert same_bits(fib(anfora.tensor([n])), fibonacci(anfora.tensor([n])))
    anfora.export(grow, anfora.tensor([1.0, 2.0]), file_name=tmp_path / "grow.anfora")
    loaded = anfora.load(tmp_path / "grow.anfora")
    x = anfora.tensor([0.5, 0.25])
    (a, i), (b, j) = loaded(x), grow(x)
    assert same_bits(a, b) and i == j == 6 and isinstance(i, int)


@anfora.jit
def checked(x):
    assert ops.sum(x) < 10.0, "too big: sum: over 10"
    return x * 2.0


def test_an_exception_in_a_loaded_model_is_python_s(tmp_path):
    anfora.export(checked, anfora.tensor([1.0, 2.0]), file_name=tmp_path / "checked.anfora")
    model = anfora.load(tmp_path / "checked.anfora")
    assert same_bits(model(anfora.tensor([1.0, 2.0])), anfora.tensor([2.0, 4.0]))
    with pytest.raises(AssertionError) as raised:
        model(anfora.tensor([6.0, 7.0]))
    assert str(raised.value) == "too big: sum: over 10"
    (note,) = raised.value.__notes__
    assert "test_model_file.py" in note and "in checked" in note, note
    assert "\nAssertionError: too big: sum: over 10\n" in note, note
    line = next(i for i, l in enumerate(open(__file__), 1) if l.startswith("    assert ops.sum(x) < 10.0"))
    assert note.rstrip().endswith(f"test_model_file.py:{line}:5"), note


def test_bad_files_and_inputs_are_refused(tmp_path):
    (tmp_path / "junk.anfora").write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ValueError, match="not an anfora model file"):
        anfora.load(tmp_path / "junk.anfora")
    with pytest.raises(OSError, match="cannot read"):
        anfora.load(tmp_path / "missing.anfora")
    anfora.export(fibonacci, anfora.tensor([10.0]), file_name=tmp_path / "fib.anfora")
    data = (tmp_path / "fib.anfora").read_bytes()
    (tmp_path / "cut.anfora").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="malformed model file at byte"):
        anfora.load(tmp_path / "cut.anfora")
    fib = anfora.load(tmp_path / "fib.anfora")
    with pytest.raises(TypeError, match=r"input 'n' must be float32\[1\], not float32\[2\]"):
        fib(anfora.tensor([1.0, 2.0]))
    with pytest.raises(anfora.CompileError, match="E0601"):
        anfora.export(lambda s: s, "text", file_name=tmp_path / "s.anfora")


def test_onnx_exports_run_in_onnxruntime(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    net = EXAMPLE["lenet"](0)
    x = images(8)
    anfora.export(net, anfora.tensor(x), file_name=tmp_path / "lenet.onnx", file_format="onnx")
    session = ort.InferenceSession(str(tmp_path / "lenet.onnx"), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {session.get_inputs()[0].name: x})
    want = np.asarray(net(anfora.tensor(x)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="the export format must be 'anfora' or 'onnx', not 'tflite'"):
        anfora.export(net, anfora.tensor(x), file_name=tmp_path / "n.tflite", file_format="tflite")
    with pytest.raises(anfora.CompileError, match="calls itself"):
        anfora.export(fibonacci, anfora.tensor([3.0]), file_name=tmp_path / "f.onnx", file_format="onnx")

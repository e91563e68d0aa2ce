"""Quantization (issue 28) from Python: int8 and uint8 tensors against numpy, the quantize and
dequantize operations eagerly and compiled, and `anfora.convert` on trained digits models:
accuracy within the issue's bounds, size, and the errors of bad options and calibration data."""

import pathlib
import runpy

import numpy as np
import pytest

import anfora
from anfora import ops

EXAMPLE = runpy.run_path(
    str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"))


def test_int8_tensors_compute_as_numpy():
    a = np.array([1, -128, 127, 5], np.int8)
    u = np.array([1, 200, 255, 0], np.uint8)
    ta, tu = anfora.tensor(a), anfora.tensor(u)
    assert ta.dtype == anfora.int8 and tu.dtype == anfora.uint8
    cases = [
        (lambda x, y: x + x, a, ta), (lambda x, y: -x, a, ta), (lambda x, y: x * 3, a, ta),
        (lambda x, y: x // 3, a, ta), (lambda x, y: x / x, a, ta), (lambda x, y: x < 3, a, ta),
        (lambda x, y: x * 2, u, tu), (lambda x, y: x + 1.5, u, tu), (lambda x, y: x >> 1, u, tu),
    ]
    for f, arr, t in cases:
        want, got = f(arr, None), np.asarray(f(t, None))
        assert got.dtype == want.dtype and np.array_equal(got, want), (want, got)
    assert np.asarray(ops.sqrt(tu)).dtype == np.float16
    assert np.asarray(ops.sum(ta)).dtype == np.int64 and int(ops.sum(ta)) == int(a.sum())
    assert np.array_equal(np.asarray(ops.max(ta)), a.max())
    assert np.array_equal(np.asarray(ta.astype(anfora.float32)), a.astype(np.float32))
    with pytest.raises(TypeError, match="int16"):
        ta + tu
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for int8"):
        ta + 300


def test_int8_tensors_in_compiled_code():
    @anfora.jit
    def f(x, y):
        return (x + y) * 2, x.astype(anfora.float32) / 4

    a = np.array([[100, -100], [7, 0]], np.int8)
    s, q = f(anfora.tensor(a), anfora.tensor(a))
    assert np.array_equal(np.asarray(s), (a + a) * 2)
    assert np.asarray(s).dtype == np.int8
    assert np.allclose(np.asarray(q), a.astype(np.float32) / 4)


def reference_quantize(x, scale, zero):
    q = np.clip(np.round(x / np.float32(scale)) + zero, 0, 255)
    return np.where(np.isnan(q), 0, q).astype(np.uint8)  # NaN quantizes to 0


def test_quantize_and_dequantize_eagerly_and_compiled():
    x = np.array([-1.0, -0.0, 0.125, 0.5, 1.7, 300.0, np.nan], np.float32)
    want = reference_quantize(x, 0.25, 10)
    got = np.asarray(ops.quantize(anfora.tensor(x), 0.25, 10))
    assert got.dtype == np.uint8 and np.array_equal(got, want)

    @anfora.jit
    def round_trip(v):
        return ops.dequantize(ops.quantize(v, 0.25, 10), 0.25, 10)

    back = np.asarray(round_trip(anfora.tensor(x[:5])))
    assert np.array_equal(back, (want[:5].astype(np.float32) - 10) * np.float32(0.25))
    with pytest.raises(ValueError, match="a uint8 zero point, not 300"):
        ops.quantize(anfora.tensor(x), 0.25, 300)
    with pytest.raises(TypeError, match="dequantize takes uint8, not float32"):
        ops.dequantize(anfora.tensor(x), 0.25, 0)


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    """The MLP and LeNet trained briefly, exported, with their data."""
    out = tmp_path_factory.mktemp("digits")
    (x_train, y_train), (x_test, y_test) = EXAMPLE["load_digits"](0)
    models = {}
    for name, epochs in [("mlp", 6), ("lenet", 6)]:
        net = EXAMPLE[name](0)
        xt, xs = (x_train[:, None], x_test[:, None]) if name == "lenet" else (x_train, x_test)
        EXAMPLE["train"](name, net, ((xt, y_train), (xs, y_test)), epochs, 32, 0)
        path = out / f"{name}.anfora"
        anfora.export(net, anfora.TensorSpec(xs.shape), file_name=path)
        models[name] = (path, xt, xs)
    return out, models, y_test


def accuracy(path, x, y):
    return float(np.mean(np.asarray(anfora.load(path)(x)).argmax(1) == y))


@pytest.mark.parametrize("name", ["mlp", "lenet"])
def test_quantized_digits_models_keep_their_accuracy(digits, name):
    out, models, y = digits
    path, x_train, x_test = models[name]
    base = accuracy(path, x_test, y)
    int8, w8 = out / f"{name}_int8.anfora", out / f"{name}_w8.anfora"
    report = anfora.convert(path, int8, quantize="int8", calibration=x_train[:718])
    assert "DequantizeLinear" not in report and "kept in float32" not in report, report
    anfora.convert(path, w8, quantize="weight-int8")
    w4 = out / f"{name}_w4.anfora"
    anfora.convert(path, w4, quantize="weight-int4")
    # The bounds: full int8 at most 0.5 points below float32, weight-only 0.1.
    assert accuracy(int8, x_test, y) >= base - 0.005
    assert accuracy(w8, x_test, y) >= base - 0.001
    assert int8.stat().st_size < 0.33 * path.stat().st_size
    # 4-bit weights (no accuracy goal in the issue): within 3 points here.
    assert accuracy(w4, x_test, y) >= base - 0.03
    assert w4.stat().st_size < int8.stat().st_size * 1.5
    for method in ["percentile", "kl"]:
        anfora.quantize(path, out / f"{name}_{method}.anfora", x_train[:718], method=method)
        assert accuracy(out / f"{name}_{method}.anfora", x_test, y) >= base - 0.02


def test_bad_options_and_calibration_data_are_clear_errors(digits):
    out, models, _ = digits
    path, x_train, _ = models["mlp"]
    target = out / "bad.anfora"
    with pytest.raises(ValueError, match="needs calibration data"):
        anfora.convert(path, target, quantize="int8")
    with pytest.raises(ValueError, match="unknown quantization 'int3'"):
        anfora.convert(path, target, quantize="int3")
    with pytest.raises(ValueError, match="unknown calibration method 'median'"):
        anfora.quantize(path, target, x_train, method="median")
    bad = x_train.copy()
    bad[3, 2, 1] = np.nan
    with pytest.raises(ValueError, match="holds NaN at position"):
        anfora.quantize(path, target, bad)
    with pytest.raises(ValueError, match="input 'x' is float32\\[359, 8, 8\\]"):
        anfora.quantize(path, target, x_train.astype(np.float64))
    with pytest.raises(ValueError, match="fewer than the model's batch of 359"):
        anfora.quantize(path, target, x_train[:10])
    with pytest.raises(ValueError, match="2 arrays for a model of 1 tensor inputs"):
        anfora.quantize(path, target, [x_train, x_train])


def test_fake_quant_rounds_as_the_int8_model_and_passes_gradients_straight_through():
    x = np.array([-2.0, -0.3, 0.0, 0.26, 1.0, 3.9, 5.0], np.float32)
    lo, hi = -1.0, 4.0
    scale = np.float32((hi - lo) / 255.0)
    zero = int(np.round(-lo / scale))
    want = (reference_quantize(x, scale, zero).astype(np.float32) - zero) * scale
    got = np.asarray(ops.fake_quant(anfora.tensor(x), lo, hi))
    assert np.array_equal(got, want)
    # Straight through inside the range, zero where clipped.
    g = np.asarray(anfora.grad(lambda v: ops.sum(ops.fake_quant(v, lo, hi) * 3.0))(anfora.tensor(x)))
    assert np.array_equal(g, np.where((x >= -zero * scale) & (x <= (255 - zero) * scale), 3.0, 0.0))


def test_a_quant_aware_model_converts_without_calibration_data(tmp_path):
    (x_train, y_train), (x_test, y_test) = EXAMPLE["load_digits"](0)
    net = EXAMPLE["mlp"](0, qat=True)
    EXAMPLE["train"]("mlp", net, ((x_train, y_train), (x_test, y_test)), 4, 32, 0)
    fq = [c for _, c in net.cells_and_names() if isinstance(c, anfora.nn.FakeQuant)]
    assert len(fq) == 2 and float(np.asarray(fq[1].max_val)) > 0.5  # the ranges were tracked
    net.set_train(False)
    path, int8 = tmp_path / "qat.anfora", tmp_path / "qat_int8.anfora"
    anfora.export(net, anfora.TensorSpec(x_test.shape), file_name=path)
    report = anfora.convert(path, int8, quantize="int8")
    assert report.count("taken as its input's quantization") == 2, report
    assert accuracy(int8, x_test, y_test) >= accuracy(path, x_test, y_test) - 0.005
    assert accuracy(int8, x_test, y_test) >= 0.93


def test_batch_norm_folds_into_the_convolution(tmp_path):
    from anfora import nn

    net = nn.SequentialCell(
        nn.Conv2d(1, 4, 3, pad_mode="same", seed=1), nn.BatchNorm2d(4), nn.ReLU(),
        nn.Flatten(), nn.Dense(4 * 8 * 8, 10, seed=2))
    rng = np.random.default_rng(0)
    params = dict(net.parameters_and_names())
    params["1.moving_mean"].set_data(rng.normal(size=4).astype(np.float32))
    params["1.moving_variance"].set_data(rng.uniform(0.5, 2.0, 4).astype(np.float32))
    params["1.gamma"].set_data(rng.uniform(0.5, 1.5, 4).astype(np.float32))
    params["1.beta"].set_data(rng.normal(size=4).astype(np.float32))
    net.set_train(False)
    x = rng.random((16, 1, 8, 8), dtype=np.float32)
    path, folded = tmp_path / "bn.anfora", tmp_path / "bn_folded.anfora"
    anfora.export(net, anfora.TensorSpec(x.shape), file_name=path)
    report = anfora.convert(path, folded)
    assert "operations on constants and Parameters computed once" in report, report
    assert "per-channel operations after Conv2D folded into its weights and bias" in report, report
    want = np.asarray(anfora.load(path)(x))
    assert np.allclose(np.asarray(anfora.load(folded)(x)), want, rtol=1e-5, atol=1e-5)
    int8 = tmp_path / "bn_int8.anfora"
    anfora.quantize(path, int8, rng.random((64, 1, 8, 8), dtype=np.float32))
    got = np.asarray(anfora.load(int8)(x))
    assert np.abs(got - want).max() < 0.08 * np.abs(want).max()

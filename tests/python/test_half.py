"""float16 and bfloat16: storage types that compute in float32, against numpy's float16 (which
also computes its float16 loops in float32 and rounds once)."""

import numpy as np
import pytest

import anfora
import anfora.ops as ops

RNG = np.random.default_rng(7)


def f16(*shape, scale=4.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float16)


def same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


def test_numpy_float16_round_trips_without_copies():
    a = f16(3, 4)
    t = anfora.tensor(a)
    assert t.dtype == anfora.float16 and t.dtype == "float16"
    view = t.numpy()
    same(view, a)
    assert not view.flags.writeable
    assert np.shares_memory(view, np.asarray(t))
    # Non-contiguous input.
    same(anfora.tensor(a.T).numpy(), a.T)
    same(anfora.tensor([0.1, 2], dtype=anfora.float16).numpy(), np.array([0.1, 2], np.float16))


@pytest.mark.parametrize(
    "name, fn",
    [
        ("add", lambda x, y: x + y),
        ("sub", lambda x, y: x - y),
        ("mul", lambda x, y: x * y),
        ("div", lambda x, y: x / y),
        ("maximum", lambda x, y: np.maximum(x, y) if isinstance(x, np.ndarray) else ops.maximum(x, y)),
        ("scalar", lambda x, y: x * 2.5 + 1),
        ("lt", lambda x, y: x < y),
    ],
)
def test_arithmetic_is_numpy_s_float16_bit_for_bit(name, fn):
    a, b = f16(5, 6), f16(6)
    with np.errstate(all="ignore"):
        want = fn(a, b)
    same(fn(anfora.tensor(a), anfora.tensor(b)).numpy(), want)


def test_math_and_reductions_are_within_one_float16_step():
    a = f16(4, 8, scale=1.0)
    for ours, theirs in [
        (ops.exp, np.exp),
        (ops.tanh, np.tanh),
        (ops.sigmoid, lambda x: (1 / (1 + np.exp(-x.astype(np.float32)))).astype(np.float16)),
        (lambda x: ops.sum(x, 1), lambda x: x.sum(1)),
        (lambda x: ops.mean(x), lambda x: x.mean()),
        (lambda x: x @ x.T, lambda x: x @ x.T),
    ]:
        got, want = ours(anfora.tensor(a)).numpy(), theirs(a)
        assert got.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2**-10, atol=2**-14)


def test_promotion():
    a = anfora.tensor(f16(3))
    assert (a + anfora.tensor(np.ones(3, np.float32))).dtype == anfora.float32
    assert (a + anfora.tensor(np.ones(3, np.int32))).dtype == anfora.float64
    assert (a + anfora.tensor(np.ones(3, np.float64))).dtype == anfora.float64
    assert (a + True).dtype == anfora.float16
    assert (a + a.astype(anfora.bfloat16)).dtype == anfora.float32
    assert ops.argmax(a).dtype == anfora.int64


def test_compiled_code_and_gradients_in_float16():
    @anfora.jit
    def loss(w, x):
        return ops.sum(ops.tanh(x @ w) * 2.0)

    w, x = f16(4, 2, scale=0.5), f16(3, 4, scale=0.5)
    value = loss(anfora.tensor(w), anfora.tensor(x))
    assert value.dtype == anfora.float16
    assert value.numpy() == ops.sum(ops.tanh(anfora.tensor(x) @ anfora.tensor(w)) * 2.0).numpy()
    g = anfora.grad(loss)(anfora.tensor(w), anfora.tensor(x))
    assert g.dtype == anfora.float16
    w64, x64 = w.astype(np.float64), x.astype(np.float64)
    exact = x64.T @ (2 * (1 - np.tanh(x64 @ w64) ** 2))
    np.testing.assert_allclose(g.numpy().astype(np.float64), exact, rtol=1e-2, atol=1e-3)
    assert "Tensor[Float16]" in loss.lower(anfora.tensor(w), anfora.tensor(x)).ir()


def test_bfloat16_prints_computes_and_has_no_numpy_dtype():
    b = anfora.tensor(np.array([0.1, 3.0, 1000.0], np.float32)).astype(anfora.bfloat16)
    assert repr(b) == "Tensor([1.e-01, 3.e+00, 1.e+03], dtype=bfloat16)"
    assert (b + b).dtype == anfora.bfloat16
    np.testing.assert_array_equal(b.astype(anfora.float32).numpy(), [0.10009765625, 3.0, 1000.0])
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        with pytest.raises(TypeError, match="numpy has no bfloat16"):
            b.numpy()


def test_checkpoints_store_16_bit_tensors(tmp_path):
    a = f16(2, 3)
    values = {"h": anfora.tensor(a), "b": anfora.tensor(a).astype(anfora.bfloat16)}
    path = tmp_path / "half.safetensors"
    anfora.save_checkpoint(values, path)
    back = anfora.load_checkpoint(path)
    same(back["h"].numpy(), a)
    assert back["b"].dtype == anfora.bfloat16
    same(back["b"].astype(anfora.float32).numpy(), values["b"].astype(anfora.float32).numpy())
    assert path.stat().st_size < 200 + 2 * 2 * a.size

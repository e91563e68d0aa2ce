"""anfora.Tensor and eager anfora.ops, checked against numpy."""

import numpy as np
import pytest

import anfora
from anfora import ops


def t(a):
    return anfora.tensor(np.asarray(a))


def test_conversion_round_trip_keeps_dtype_shape_and_values():
    rng = np.random.default_rng(0)
    for dtype in ["float32", "float64", "int32", "int64", "bool"]:
        a = (rng.standard_normal((2, 3, 4)) * 10).astype(dtype)
        x = anfora.tensor(a)
        assert x.shape == (2, 3, 4)
        assert x.dtype.name == dtype
        assert x.ndim == 3 and x.size == 24
        np.testing.assert_array_equal(np.asarray(x), a)
        np.testing.assert_array_equal(x.numpy(), a)
        assert x.numpy().dtype == np.dtype(dtype)


def test_non_contiguous_arrays_convert_by_value():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(anfora.tensor(a.T).numpy(), a.T)
    np.testing.assert_array_equal(anfora.tensor(a[:, ::2]).numpy(), a[:, ::2])


def test_numpy_views_share_the_buffer_read_only_and_outlive_the_tensor():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    x = anfora.tensor(a)
    a[0, 0] = 100.0  # the tensor took a copy: it does not see later writes to `a`
    v = x.numpy()
    assert not v.flags.writeable and v[0, 0] == 0.0
    assert np.shares_memory(v, np.asarray(x))  # both view the tensor's buffer
    with pytest.raises(ValueError, match="read-only"):
        v[0, 0] = 1.0
    c = np.array(x)  # copy=True: a writable copy
    assert c.flags.writeable and not np.shares_memory(c, v)
    c[0, 0] = 7.0
    assert x.numpy()[0, 0] == 0.0
    f = np.asarray(x, dtype=np.float32)
    assert f.dtype == np.float32 and f.flags.writeable
    del x
    anfora.tensor(np.zeros((256, 256)))  # buffers are recycled: the view must keep its own
    np.testing.assert_array_equal(v, np.arange(12.0).reshape(3, 4))
    # A Parameter's view is a snapshot of its value when taken.
    p = anfora.Parameter(np.ones(3, np.float32))
    before = p.numpy()
    p.set_data(np.zeros(3, np.float32))
    np.testing.assert_array_equal(before, 1.0)
    np.testing.assert_array_equal(p.numpy(), 0.0)
    for e in (np.zeros((0, 3), np.int32), np.float32(2.5), np.array([True, False])):
        np.testing.assert_array_equal(anfora.tensor(e).numpy(), e)
        assert anfora.tensor(e).numpy().dtype == e.dtype


def test_numpy_scalars_keep_their_dtype_np_float64_included():
    # np.float64 subclasses Python's float, but it is a numpy scalar: a float64 tensor, and a
    # strong (not NEP 50 weak) operand, as every other numpy scalar
    assert anfora.tensor(np.float64(2.5)).dtype == anfora.float64
    assert anfora.tensor(2.5).dtype == anfora.float32
    x = anfora.tensor(np.ones(2, np.float32))
    assert (x * np.float64(2.0)).dtype == anfora.float64 and (x * 2.0).dtype == anfora.float32
    assert ops.add(x, np.float32(1.0)).dtype == anfora.float32
    assert ops.mul(np.float64(0.5), x).dtype == anfora.float64


def test_lists_become_float32_like_ops_tensor_and_dtype_is_honoured():
    x = anfora.tensor([[1.5, 2.0], [3.0, 4.0]])
    assert x.dtype == anfora.float32
    assert anfora.tensor([1, 2]).dtype == anfora.int64
    assert anfora.tensor([1, 2], anfora.float64).dtype == anfora.float64


def test_unsupported_numpy_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="this array is uint16"):
        anfora.tensor(np.zeros(3, np.uint16))
    with pytest.raises(TypeError, match="this array is complex128"):
        anfora.tensor(np.zeros(3, np.complex128))


def test_repr_is_numpy_like():
    x = anfora.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert repr(x) == "Tensor([[0., 1., 2.],\n        [3., 4., 5.]], dtype=float32)"
    assert str(x) == "[[0. 1. 2.]\n [3. 4. 5.]]"
    assert repr(anfora.float32) == "anfora.float32"
    assert repr(anfora.bool_) == "anfora.bool_"


@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a + b,
        lambda a, b: a - b,
        lambda a, b: a * b,
        lambda a, b: a / b,
        lambda a, b: a // b,
        lambda a, b: a % b,
        lambda a, b: a**b,
        lambda a, b: a < b,
        lambda a, b: a >= b,
        lambda a, b: a == b,
        lambda a, b: a != b,
    ],
)
def test_operators_match_numpy_with_broadcasting(op):
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 2, (3, 4)).astype(np.float32)
    b = rng.uniform(0.5, 2, (4,)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(op(t(a), t(b))), op(a, b), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(op(t(a), 2.0)), op(a, np.float32(2.0)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(op(3.0, t(b))), op(np.float32(3.0), b), rtol=1e-6)


def test_matmul_unary_and_indexing():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(t(a) @ t(b)), a @ b, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(-t(a)), -a)
    np.testing.assert_array_equal(np.asarray(abs(t(a))), abs(a))
    np.testing.assert_array_equal(np.asarray(t(a)[1]), a[1])
    np.testing.assert_array_equal(np.asarray(t(a)[:, 1:3]), a[:, 1:3])
    np.testing.assert_array_equal(np.asarray(t(a)[::-1, None, 2]), a[::-1, None, 2])
    np.testing.assert_array_equal(np.asarray(t(a).T), a.T)
    np.testing.assert_array_equal(np.asarray(t(a).reshape((2, 6))), a.reshape(2, 6))
    with pytest.raises(IndexError):
        t(a)[3]


def test_scalar_conversions():
    x = t(np.float32(2.5))
    assert float(x) == 2.5 and x.item() == 2.5 and int(t(np.int64(7))) == 7
    assert bool(t(np.array(True)))
    assert len(t(np.zeros((5, 2)))) == 5
    with pytest.raises(ValueError, match="ambiguous"):
        bool(t(np.zeros(3)))


def test_eager_ops_match_numpy_and_bind_keywords():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4))
    np.testing.assert_allclose(np.asarray(ops.exp(t(a))), np.exp(a), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ops.sum(t(a), axis=1)), a.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(
        np.asarray(ops.mean(t(a), axis=0, keepdims=True)), a.mean(axis=0, keepdims=True), rtol=1e-12
    )
    np.testing.assert_array_equal(
        np.asarray(ops.where(t(a) > 0, t(a), 0.0)), np.where(a > 0, a, 0.0)
    )
    assert ops.zeros((2, 3)).shape == (2, 3)


def test_eager_op_errors_are_python_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'"):
        ops.sum(t(np.zeros(3)), axes=0)
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        ops.matmul(t(np.zeros((2, 3))), t(np.zeros((4, 5))))
    with pytest.raises(TypeError, match="cannot pass a 'object' object"):
        ops.exp(object())


def test_parameters_hold_values_by_reference():
    p = anfora.Parameter(np.ones((2, 2), np.float32), name="w")
    assert p.name == "w" and p.shape == (2, 2) and p.dtype == anfora.float32
    ops.assign(p, t(np.full((2, 2), 3.0, np.float32)))
    np.testing.assert_array_equal(np.asarray(p), np.full((2, 2), 3.0))
    p.set_data(np.zeros((2, 2), np.float32))
    np.testing.assert_array_equal(p.value.numpy(), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="shape"):
        p.set_data(np.zeros((3,), np.float32))


def test_import_anfora_does_not_import_numpy():
    # numpy is loaded on first use (conversions, nn initializers), not by `import anfora`,
    # which stays about five times faster for it.
    import subprocess
    import sys

    code = "import sys, anfora; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_eager_methods_operators_and_parameters_follow_compiled_semantics():
    x = anfora.tensor(np.arange(6, dtype=np.int64).reshape(2, 3))
    assert x.sum().item() == 15 and x.sum(axis=0).tolist() == [3, 5, 7]
    assert x.reshape(3, 2).shape == (3, 2) and x.reshape((6,)).shape == (6,)
    assert x.astype("float32").dtype == anfora.float32
    assert (x & 3).tolist() == [[0, 1, 2], [3, 0, 1]] and (x << 1).tolist() == [[0, 2, 4], [6, 8, 10]]
    assert 4 in x and 9 not in x
    with pytest.raises(AttributeError, match="'anfora.Tensor' object has no attribute 'nope'"):
        x.nope
    assert anfora.float32 == "float32" and anfora.bool_ == "bool_" and anfora.int32 != "int64"
    assert str(anfora.float64) == "float64" and repr(anfora.float64) == "anfora.float64"
    assert len({anfora.float32, anfora.float32, anfora.int64}) == 2
    p = anfora.Parameter(np.array([1.0, 2.0], np.float32), name="p")
    assert (p + 1).tolist() == [2.0, 3.0] and (2 * p).tolist() == [2.0, 4.0] and (-p).tolist() == [-1.0, -2.0]
    assert str(p) == "[1. 2.]" and p.sum().item() == 3.0
    p.assign_add(anfora.tensor(np.array([1.0, 1.0], np.float32)))
    p.assign_sub(0.5)
    np.testing.assert_array_equal(p.numpy(), [1.5, 2.5])
    p.assign(7)
    np.testing.assert_array_equal(p.numpy(), [7.0, 7.0])
    assert p.numpy().dtype == np.float32
    with pytest.raises(ValueError):
        p.assign(anfora.tensor(np.ones(3, np.float32)))


def test_pad_modes_and_aliases_match_numpy_eagerly_and_compiled():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    for mode in ("constant", "edge", "reflect", "symmetric"):
        for width in (1, (2, 7), ((1, 0), (9, 3))):
            want = np.pad(a, width, mode)
            np.testing.assert_array_equal(np.asarray(ops.pad(t(a), width, mode)), want)
            np.testing.assert_array_equal(np.asarray(ops.pad(t(a), width, mode=mode)), want)
    np.testing.assert_array_equal(
        np.asarray(ops.pad(t(a), 2, constant_values=-5)), np.pad(a, 2, constant_values=-5)
    )

    @anfora.jit
    def framed(x, mode):
        return ops.pad(x, ((2, 3), (5, 1)), mode)

    for mode in ("edge", "reflect", "symmetric"):
        np.testing.assert_array_equal(np.asarray(framed(t(a), mode)), np.pad(a, ((2, 3), (5, 1)), mode))
    x = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(np.asarray(ops.permute(t(x), (2, 0, 1))), x.transpose(2, 0, 1))
    np.testing.assert_array_equal(np.asarray(t(x).permute(1, 2, 0)), x.transpose(1, 2, 0))
    np.testing.assert_array_equal(np.asarray(t(x).permute((0, 2, 1))), x.transpose(0, 2, 1))
    assert ops.unsqueeze(t(x), 1).shape == (2, 1, 3, 4)
    idx = np.array([2, 0, 2], dtype=np.int32)
    np.testing.assert_array_equal(np.asarray(ops.index_select(t(x), 1, t(idx))), np.take(x, idx, axis=1))


def test_pad_and_alias_errors_are_numpy_s():
    a = t(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"^mode 'foo' is not supported$"):
        ops.pad(a, 1, "foo")
    with pytest.raises(ValueError, match=r"^unsupported keyword arguments for mode 'edge': \{'constant_values'\}$"):
        ops.pad(a, 1, "edge", constant_values=0)
    with pytest.raises(ValueError, match=r"^can't extend empty axis 0 using modes other than 'constant' or 'empty'$"):
        ops.pad(t(np.zeros((0, 3))), 1, "reflect")
    with pytest.raises(TypeError, match=r"^ops\.index_select\(\) expects an int32 or int64 index, got float64$"):
        ops.index_select(a, 0, t(np.array([0.0])))
    with pytest.raises(ValueError, match=r"^ops\.index_select\(\) expects a 1-D index, got shape \(1, 1\)$"):
        ops.index_select(a, 0, t(np.array([[0]])))
    with pytest.raises(TypeError, match="required positional argument: 'axes'"):
        ops.permute(a)
    with pytest.raises(TypeError, match=r"^permute\(\) needs the axes$"):
        a.permute()

    @anfora.jit
    def chosen(x):
        mode = "edge"
        if ops.sum(x) > 0:
            mode = "reflect"
        return ops.pad(x, 1, mode)

    with pytest.raises(anfora.CompileError, match="E0304"):
        chosen(a)


def test_numpy_operands_on_the_left_defer_to_the_tensor():
    t = anfora.tensor(np.array([1.0, 2.0], np.float32))
    for got, want in [
        (np.float32(2) - t, np.float32(2) - np.array([1.0, 2.0], np.float32)),
        (np.float64(2) * t, np.float64(2) * np.array([1.0, 2.0], np.float32)),
        (np.array([1.0, 1.0], np.float32) + t, np.array([2.0, 3.0], np.float32)),
    ]:
        assert isinstance(got, anfora.Tensor)
        assert got.dtype == str(want.dtype)
        np.testing.assert_array_equal(got.numpy(), want)
    p = anfora.Parameter(np.ones(2, np.float32), name="p")
    assert isinstance(np.int64(3) * p, anfora.Tensor)
    # numpy's own functions still take tensors as arrays.
    assert isinstance(np.exp(t), np.ndarray)

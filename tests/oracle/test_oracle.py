"""Tests of the anfora oracle's semantics (run: .venv/bin/python -m pytest tests/oracle)."""

import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import anfora as af  # noqa: E402
from anfora import ops  # noqa: E402


def dt(t):
    return str(t.dtype)


# -- DType -------------------------------------------------------------------------
def test_dtype_str_repr():
    assert str(af.float32) == "float32" and repr(af.float32) == "anfora.float32"
    assert str(af.int64) == "int64" and repr(af.int64) == "anfora.int64"
    assert str(af.bool_) == "bool" and repr(af.bool_) == "anfora.bool_"


def test_dtype_eq():
    assert af.float32 == af.float32 and af.float32 != af.float64
    assert af.float32 == "float32" and "float32" == af.float32
    assert af.bool_ == "bool" and af.bool_ == "bool_" and af.bool_ != "int64"
    assert not (af.int32 == 3)
    assert ops.ones(2).dtype == af.float32
    assert hash(af.int32) == hash(af.int32)


def test_dtype_names_accepted_everywhere():
    assert dt(ops.zeros(2, "int32")) == "int32"
    assert dt(ops.ones(2, dtype=af.bool_)) == "bool"
    assert dt(ops.arange(3).astype("float64")) == "float64"
    assert dt(ops.cast(ops.arange(3), "bool_")) == "bool"
    with pytest.raises(TypeError):
        ops.zeros(2, "int8")


# -- creation defaults --------------------------------------------------------------
def test_creation_defaults():
    assert dt(ops.zeros(3)) == "float32" and dt(ops.ones((2, 2))) == "float32"
    assert dt(ops.full(2, True)) == "bool"
    assert dt(ops.full(2, 3)) == "int64"
    assert dt(ops.full(2, 3.0)) == "float32"
    assert dt(ops.arange(5)) == "int64"
    assert dt(ops.arange(0, 1, 0.5)) == "float32"
    assert dt(ops.arange(0.0, 3)) == "float32"
    assert dt(ops.tensor([1, 2])) == "int64"
    assert dt(ops.tensor([True, False])) == "bool"
    assert dt(ops.tensor([True, 2])) == "int64"
    assert dt(ops.tensor([1, 2.5])) == "float32"
    assert dt(ops.tensor(3)) == "int64" and ops.tensor(3).shape == ()
    assert dt(ops.tensor([])) == "float32"
    assert dt(ops.tensor([[1, 2]], dtype="float64")) == "float64"
    assert ops.zeros([2, 3]).shape == (2, 3) and ops.ones(4).shape == (4,)


def test_arange_float_is_computed_in_float64_then_cast():
    a = ops.arange(0, 1, 0.1)
    expected = np.arange(0, 1, 0.1).astype(np.float32)
    assert np.array_equal(a._a, expected)
    assert str(a) == "[0.  0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9]"


def test_tensor_of_tensor_and_likes():
    t = ops.tensor([1, 2], dtype=af.int32)
    assert dt(ops.tensor(t)) == "int32" and dt(ops.tensor(t, "float32")) == "float32"
    assert dt(ops.zeros_like(t)) == "int32" and dt(ops.ones_like(t, af.bool_)) == "bool"


# -- NEP 50 --------------------------------------------------------------------------
def test_nep50_promotion():
    i64 = ops.tensor([1, 2])
    i32 = ops.tensor([1, 2], dtype="int32")
    f32 = ops.tensor([1.0, 2.0])
    b = ops.tensor([True, False])
    assert dt(i64 * 2.5) == "float64"
    assert dt(f32 * 2.5) == "float32"
    assert dt(2.5 * f32) == "float32"
    assert dt(i32 + 1) == "int32" and dt(1 - i32) == "int32"
    assert dt(i32 / 2) == "float64"
    assert dt(f32 / 3) == "float32"
    assert dt(f32 + i64) == "float64"
    assert dt(b + 1) == "int64" and dt(b + b) == "bool"
    assert dt(f32 + True) == "float32"


# -- 0-d results and Python-scalar behaviour of ops -------------------------------------
def test_results_are_tensors_never_numpy_scalars():
    x = ops.tensor([1.5, 2.5])
    for r in (x.sum(), x[0], x.max(), ops.tensor(2) + 1, 1 + ops.tensor(2.0), x.mean()):
        assert isinstance(r, af.Tensor) and r.shape == ()
    assert repr(x.sum()) == "Tensor(4., dtype=float32)"
    assert str(x[1]) == "2.5"
    assert isinstance(x.sum().item(), float) and isinstance(ops.arange(3).sum().item(), int)
    rows = list(ops.arange(6).reshape(2, 3))
    assert all(isinstance(r, af.Tensor) for r in rows) and rows[1].shape == (3,)
    assert all(isinstance(v, af.Tensor) and v.shape == () for v in ops.arange(3))


def test_ops_on_python_scalars_return_python_scalars():
    assert ops.add(2, 3) == 5 and type(ops.add(2, 3)) is int
    assert ops.div(1, 4) == 0.25 and ops.floor_div(-7, 2) == -4 and ops.mod(-7, 3) == 2
    assert ops.pow(2, -1) == 0.5 and ops.neg(3) == -3 and ops.abs(-2.5) == 2.5
    assert ops.maximum(3, 7) == 7 and type(ops.maximum(3, 2.5)) is int
    assert ops.minimum(3, 2.5) == 2.5
    assert ops.equal(1, 1.0) is True and ops.less(2, 1) is False
    assert ops.logical_not(0) is True and ops.logical_not(3) is False
    assert isinstance(ops.add(1, ops.tensor([1])), af.Tensor)
    with pytest.raises(ZeroDivisionError):
        ops.floor_div(1, 0)


def test_math_on_scalars():
    assert ops.exp(0) == 1.0 and type(ops.exp(0)) is float
    assert ops.exp(1000) == float("inf")
    assert ops.log(0) == float("-inf")
    assert ops.sqrt(-1) != ops.sqrt(-1)  # nan
    assert ops.sigmoid(0) == 0.5 and ops.sigmoid(-1000) == 0.0
    assert ops.relu(-3) == 0 and type(ops.relu(5)) is int and ops.relu(5) == 5
    assert ops.relu(-2.5) == 0.0 and type(ops.relu(-2.5)) is float


def test_math_on_tensors_keeps_numpy_dtypes():
    assert dt(ops.exp(ops.tensor([1.0]))) == "float32"
    assert dt(ops.exp(ops.tensor([1]))) == "float64"
    assert dt(ops.relu(ops.tensor([-1, 2]))) == "int64"
    assert dt(ops.relu(ops.tensor([-1.0]))) == "float32"
    assert dt(ops.sigmoid(ops.tensor([0.0]))) == "float32"
    e = ops.exp(ops.tensor([True, False]))  # numpy gives float16; anfora computes in float64
    assert dt(e) == "float64" and e._a.tolist() == [np.e, 1.0]


def test_bool_operators_that_numpy_gives_int8_are_int64():
    b = ops.tensor([True, False])
    t = ops.tensor([True, True])
    for r, values in ((b % t, [0, 0]), (b ** b, [1, 1]), (b << b, [2, 0]), (b >> t, [0, 0]), (t // t, [1, 1]),
                      (b ** True, [1, 0]), (True << b, [2, 1])):
        assert dt(r) == "int64" and r._a.tolist() == values
    with pytest.raises(ZeroDivisionError):
        b // b


def test_tensor_only_ops_reject_scalars():
    with pytest.raises(TypeError, match=r"^ops\.sum\(\) expects a Tensor, got int$"):
        ops.sum(3)
    with pytest.raises(TypeError, match=r"ops\.matmul\(\) expects a Tensor, got float"):
        ops.matmul(ops.ones((2, 2)), 1.5)
    with pytest.raises(TypeError, match=r"ops\.reshape\(\) expects a Tensor, got tuple"):
        ops.reshape((1, 2), (2,))


# -- division by zero ----------------------------------------------------------------------
def test_integer_division_by_zero_raises():
    i = ops.tensor([1, 2])
    msg = r"^integer division or modulo by zero$"
    with pytest.raises(ZeroDivisionError, match=msg):
        i // 0
    with pytest.raises(ZeroDivisionError, match=msg):
        i % ops.tensor([1, 0])
    with pytest.raises(ZeroDivisionError, match=msg):
        5 // ops.tensor([0])
    with pytest.raises(ZeroDivisionError, match=msg):
        ops.tensor([True]) % ops.tensor([False])


def test_float_division_by_zero_is_silent():
    f = ops.tensor([1.0, -1.0, 0.0])
    assert str(f / 0) == "[ inf -inf  nan]"
    assert str(f // 0.0) == "[ inf -inf  nan]"
    assert str(ops.tensor([1, 0]) / 0) == "[inf nan]"
    assert str(ops.tensor([3]) // 0.0) == "[inf]"  # int // float -> float64, no error


# -- conversions and protocols --------------------------------------------------------------
def test_bool_float_int_len():
    assert bool(ops.tensor([3])) is True and bool(ops.tensor(0.0)) is False
    with pytest.raises(ValueError, match="more than one element is ambiguous"):
        bool(ops.tensor([1, 2]))
    assert float(ops.tensor(2)) == 2.0 and int(ops.tensor(2.7)) == 2
    assert len(ops.zeros((3, 2))) == 3
    assert 2 in ops.arange(3) and 5 not in ops.arange(3)


def test_indexing_and_attributes():
    m = ops.arange(12).reshape(3, 4)
    assert m.shape == (3, 4) and m.ndim == 2 and m.size == 12
    assert all(type(d) is int for d in m.shape)
    assert m[1, 2].item() == 6 and m[:, 1].shape == (3,)
    assert m[None].shape == (1, 3, 4) and m[..., 0].shape == (3,)
    assert m.T.shape == (4, 3) and m.transpose(1, 0).shape == (4, 3)
    assert m.reshape((4, 3)).shape == m.reshape(4, 3).shape == (4, 3)
    assert m.sum(axis=0, keepdims=True).shape == (1, 4)


def test_comparisons_and_bitwise_return_tensors():
    a = ops.tensor([1, 2, 3])
    assert dt(a == 2) == "bool" and str(a < 2) == "[ True False False]"
    assert str(a & 1) == "[1 0 1]" and str(~ops.tensor([True, False])) == "[False  True]"


def test_repr_and_str_follow_numpy():
    assert repr(ops.tensor([1.0, 2.0])) == "Tensor([1., 2.], dtype=float32)"
    assert str(ops.arange(2000)) == "[   0    1    2 ... 1997 1998 1999]"


# -- the runner ----------------------------------------------------------------------------
def test_runner_on_two_corpus_files():
    files = ["tests/corpus/seed_hof.py", "tests/corpus/error_13_unbound_local.py",
             "tests/corpus/tensor_36_args.py"]
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tests", "oracle"))
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tests", "differential", "run_cpython.py")] + files,
        cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    out = json.loads(proc.stdout)
    assert list(out) == files
    assert out[files[0]] == {"stdout": "hof(2) = 25\n", "result": "25", "error": None}
    rec = out[files[1]]
    assert rec["result"] is None
    assert rec["error"] == ("UnboundLocalError: cannot access local variable 'label' "
                            "where it is not associated with a value")
    assert rec["stdout"] == "checking 5\npositive\nchecking -1\n"
    rec = out[files[2]]
    assert rec["error"] is None
    assert rec["result"] == "Tensor([1., 2., 3.], dtype=float32)"
    assert rec["stdout"].startswith("x: [1. 2. 3.] float32 k: 2\n")


def test_corpus_stays_inside_the_subset():
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tests", "differential", "check_subset.py"),
         os.path.join(ROOT, "tests", "corpus")],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_corpus_output_does_not_depend_on_last_ulp_of_transcendentals():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tests", "oracle"))
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tests", "differential", "check_stability.py"),
         os.path.join(ROOT, "tests", "corpus")],
        env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


# -- activation and special functions ------------------------------------------------------
def test_special_functions_against_math():
    v = [-3.0, -0.5, 0.0, 1e-10, 0.75, 4.0]
    x = ops.tensor(v, dtype="float64")
    cases = [
        (ops.log1p, math.log1p, [a for a in v if a > -1]),
        (ops.expm1, math.expm1, v),
        (ops.erf, math.erf, v),
        (ops.silu, lambda a: a / (1 + math.exp(-a)), v),
        (ops.softplus, lambda a: math.log1p(math.exp(a)), v),
        (ops.gelu, lambda a: 0.5 * a * (1 + math.erf(a / math.sqrt(2))), v),
        (lambda t: ops.gelu(t, approximate=True),
         lambda a: 0.5 * a * (1 + math.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3))), v),
        (ops.rsqrt, lambda a: 1 / math.sqrt(a), [a for a in v if a > 0]),
    ]
    for op, ref, vals in cases:
        got = op(ops.tensor(vals, dtype="float64"))
        assert dt(got) == "float64" and got.shape == (len(vals),)
        np.testing.assert_allclose(got._a, [ref(a) for a in vals], rtol=1e-13, atol=1e-300)
        for a in vals:  # Python numbers give Python floats
            r = op(a)
            assert type(r) is float and math.isclose(r, ref(a), rel_tol=1e-13, abs_tol=1e-300)
    assert x.shape == (6,)


def test_special_functions_dtypes():
    f32 = ops.tensor([0.5, 2.0])
    for op in (ops.log1p, ops.expm1, ops.erf, ops.gelu, ops.silu, ops.softplus, ops.rsqrt):
        assert dt(op(f32)) == "float32"
        assert dt(op(ops.tensor([1, 2]))) == "float64"
        assert dt(op(ops.tensor([1, 2], dtype="int32"))) == "float64"
        assert dt(op(ops.tensor([True, False]))) == "float64"  # not numpy's float16
        assert type(op(1)) is float and type(op(True)) is float
        with pytest.raises(TypeError, match=r"^ops\.\w+\(\) expects a Tensor or a number, got str$"):
            op("a")
    assert dt(ops.gelu(f32, approximate=True)) == "float32"
    # float32 results: float64 rounded once for erf and exact gelu
    e = ops.erf(f32)._a
    assert e.dtype == np.float32
    np.testing.assert_array_equal(e, np.array([math.erf(0.5), math.erf(2.0)], dtype=np.float32))
    np.testing.assert_array_equal(
        ops.gelu(f32)._a,
        np.array([0.5 * a * (1 + math.erf(a / math.sqrt(2))) for a in (0.5, 2.0)],
                 dtype=np.float32))
    assert ops.log1p(ops.tensor([True]))._a[0] == math.log(2)


def test_special_functions_edges():
    big = ops.tensor([-1000.0, 1000.0, float("inf"), float("-inf"), float("nan")], dtype="float64")
    sp = ops.softplus(big)._a
    assert sp[0] == 0.0 and sp[1] == 1000.0 and sp[2] == math.inf and sp[3] == 0.0
    assert math.isnan(sp[4])
    tiny = ops.softplus(ops.tensor([-50.0], dtype="float64"))._a[0]
    assert math.isclose(tiny, math.exp(-50.0), rel_tol=1e-15)  # small values are kept
    assert ops.log1p(-1.0) == -math.inf and math.isnan(ops.log1p(-2.0))
    assert ops.expm1(1e-300) == 1e-300 and ops.expm1(-math.inf) == -1.0
    assert ops.erf(math.inf) == 1.0 and ops.erf(-0.0) == 0.0
    assert ops.rsqrt(0.0) == math.inf and math.isnan(ops.rsqrt(-1.0))
    assert ops.silu(-1000.0) == 0.0 and ops.gelu(-40.0) == 0.0
    s = ops.silu(ops.tensor([1000.0]))
    assert s._a[0] == 1000.0 and dt(s) == "float32"


def test_sign():
    assert str(ops.sign(ops.tensor([-2.5, -0.0, 0.0, 3.0, float("nan")]))) == "[-1.  0.  0.  1. nan]"
    assert not np.signbit(ops.sign(ops.tensor([-0.0]))._a[0])
    i = ops.sign(ops.tensor([-7, 0, 9], dtype="int32"))
    assert dt(i) == "int32" and str(i) == "[-1  0  1]"
    assert dt(ops.sign(ops.tensor([-7]))) == "int64"
    assert ops.sign(-5) == -1 and type(ops.sign(5)) is int and ops.sign(True) == 1
    assert ops.sign(0) == 0 and ops.sign(False) == 0
    assert ops.sign(-2.5) == -1.0 and type(ops.sign(2.5)) is float and math.isnan(ops.sign(math.nan))
    with pytest.raises(TypeError, match=r"ufunc 'sign' did not contain a loop"):
        ops.sign(ops.tensor([True]))
    with pytest.raises(TypeError, match=r"^ops\.sign\(\) expects a Tensor or a number, got str$"):
        ops.sign("x")


def test_clip():
    x = ops.tensor([-2.0, 0.5, 3.0, float("nan")])
    assert str(ops.clip(x, 0.0, 1.0)) == str(np.clip(x._a, 0.0, 1.0))
    assert dt(ops.clip(x, 0, 1)) == "float32"
    assert str(ops.clip(x, min=0)) == "[0.  0.5 3.  nan]" and str(ops.clip(x, max=1)) == "[-2.   0.5  1.   nan]"
    assert ops.clip(x) is x
    i = ops.arange(5)
    assert dt(ops.clip(i, 1, 3)) == "int64" and str(ops.clip(i, 1, 3)) == "[1 1 2 3 3]"
    c = ops.clip(i, 0.5, 2)
    assert dt(c) == "float64" and str(c) == "[0.5 1.  2.  2.  2. ]"
    assert str(ops.clip(i, 3, 1)) == "[1 1 1 1 1]"  # min > max gives max
    lo = ops.tensor([[0], [2]])
    assert str(ops.clip(i, lo, 3)) == str(np.clip(i._a, lo._a, 3))  # broadcasting
    # numpy's clip promotes its operands together (Python numbers weak) and broadcasts them
    # together: bool with -4 and int32 is int32 (not maximum's int64, then minimum's int64).
    b = ops.tensor([True, False])
    assert dt(ops.clip(b, -4, ops.tensor([1], dtype="int32"))) == "int32"
    assert dt(ops.clip(b, -5, ops.tensor([0.5], dtype="float32"))) == "float32"
    with pytest.raises(ValueError, match=r"^operands could not be broadcast together with shapes \(2,\) \(\) \(3,\) $"):
        ops.clip(b, 1, ops.arange(3))
    assert ops.clip(5, 0, 3) == 3 and type(ops.clip(5, 0, 3)) is int
    assert ops.clip(5, None, 3.5) == 3.5 and ops.clip(-1, 0.5) == 0.5
    with pytest.raises(TypeError, match=r"^ops\.clip\(\) expects a Tensor or a number, got str$"):
        ops.clip("a", 0, 1)


# -- softmax family --------------------------------------------------------------------------
def test_softmax_log_softmax_values():
    a = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, 999.0]])
    x = ops.tensor(a.tolist(), dtype="float64")
    for axis in (-1, 0, 1):
        z = a - a.max(axis=axis, keepdims=True)
        e = np.exp(z)
        ref = e / e.sum(axis=axis, keepdims=True)
        np.testing.assert_allclose(ops.softmax(x, axis)._a, ref, rtol=1e-14)
        log_ref = z - np.log(e.sum(axis=axis, keepdims=True))  # no underflow to log(0)
        np.testing.assert_allclose(ops.log_softmax(x, axis=axis)._a, log_ref, rtol=1e-14)
        np.testing.assert_allclose(np.exp(log_ref), ref, rtol=1e-14)
    assert dt(ops.softmax(ops.tensor([1.0, 2.0]))) == "float32"
    s = ops.softmax(ops.tensor([[1.0, float("inf")], [-math.inf, -math.inf], [0.0, -math.inf]]))
    assert str(s) == "[[nan nan]\n [nan nan]\n [ 1.  0.]]"
    empty = ops.softmax(ops.zeros((0, 3)))
    assert empty.shape == (0, 3) and dt(empty) == "float32"


def test_logsumexp_values():
    a = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, 999.0]])
    x = ops.tensor(a.tolist(), dtype="float64")

    def ref(axis, keepdims=False):
        m = a.max(axis=axis, keepdims=True)
        r = np.log(np.exp(a - m).sum(axis=axis, keepdims=True)) + m
        return r if keepdims else np.squeeze(r, axis=axis)

    np.testing.assert_allclose(ops.logsumexp(x)._a, ref(None), rtol=1e-14)
    for axis in (0, 1, -1, (0, 1), [1]):
        ax = tuple(axis) if isinstance(axis, list) else axis
        np.testing.assert_allclose(ops.logsumexp(x, axis)._a, ref(ax), rtol=1e-14)
        np.testing.assert_allclose(ops.logsumexp(x, axis, keepdims=True)._a,
                                   ref(ax, True), rtol=1e-14)
    assert ops.logsumexp(x, keepdims=True).shape == (1, 1)
    inf = float("inf")
    r = ops.logsumexp(ops.tensor([[-inf, -inf], [inf, 0.0], [inf, -inf], [float("nan"), 0.0]]), 1)
    assert str(r) == "[-inf  inf  inf  nan]"
    assert str(ops.logsumexp(ops.zeros((0, 2)), 0)) == "[-inf -inf]"
    assert str(ops.logsumexp(ops.zeros(0))) == "-inf"
    assert ops.logsumexp(ops.zeros((2, 0)), 0).shape == (0,)


def test_softmax_family_errors():
    x = ops.ones((2, 3))
    with pytest.raises(TypeError, match=r"^softmax: expected float32 or float64 tensors, got int64$"):
        ops.softmax(ops.arange(3))
    with pytest.raises(TypeError, match=r"^log_softmax: expected float32 or float64 tensors, got bool$"):
        ops.log_softmax(ops.tensor([True]))
    with pytest.raises(ValueError, match=r"^softmax: axis 2 is out of bounds for array of dimension 2$"):
        ops.softmax(x, 2)
    with pytest.raises(ValueError, match=r"^logsumexp: axis -3 is out of bounds"):
        ops.logsumexp(x, (0, -3))
    with pytest.raises(ValueError, match=r"^duplicate value in 'axis'$"):
        ops.logsumexp(x, (1, -1))
    with pytest.raises(TypeError, match=r"^ops\.softmax\(\) expects a Tensor, got float$"):
        ops.softmax(1.5)
    with pytest.raises(TypeError, match=r"^'float' object cannot be interpreted as an integer$"):
        ops.log_softmax(x, 1.0)
    with pytest.raises(TypeError, match=r"^'NoneType' object cannot be interpreted as an integer$"):
        ops.softmax(ops.arange(3), None)  # the axis is read before the dtype is checked


def test_dropout_deterministic_cases():
    x = ops.tensor([1.0, -2.0])
    assert ops.dropout(x, 0.5, training=False) is x and ops.dropout(x, 0.0) is x
    z = ops.dropout(ops.tensor([1.0, 2.0], dtype="float64"), p=1)
    assert str(z) == "[0. 0.]" and dt(z) == "float64"
    with pytest.raises(ValueError, match=r"^ops\.dropout: p must be in \[0, 1\], got 1\.5$"):
        ops.dropout(x, 1.5)
    with pytest.raises(ValueError, match=r"got -1$"):
        ops.dropout(x, -1)
    with pytest.raises(TypeError, match=r"^ops\.dropout\(\) expects a floating tensor, got int64$"):
        ops.dropout(ops.arange(2), 0.5, False)
    with pytest.raises(TypeError, match=r"^ops\.dropout\(\) expects a Tensor as x, got int$"):
        ops.dropout(1)
    with pytest.raises(NotImplementedError):
        ops.dropout(x, 0.5)


# -- array functions -------------------------------------------------------------------------------
def test_argmax_argmin():
    a = np.array([[3.0, 1.0, 3.0], [np.nan, 0.0, np.nan], [-1.0, -1.0, 5.0]])
    x = ops.tensor(a.tolist())
    for axis in (None, 0, 1, -1):
        for keep in (False, True):
            for op, ref in ((ops.argmax, np.argmax), (ops.argmin, np.argmin)):
                got = op(x, axis, keep)
                assert dt(got) == "int64"
                np.testing.assert_array_equal(got._a, ref(a, axis=axis, keepdims=keep))
                assert got.shape == np.shape(ref(a, axis=axis, keepdims=keep))
    assert ops.argmax(x).shape == () and ops.argmax(x).item() == 3  # the first NaN
    assert ops.argmin(ops.tensor([2, 1, 1])).item() == 1  # the first minimum
    assert ops.argmax(ops.tensor([False, True, True])).item() == 1
    assert ops.argmax(ops.tensor(7)).item() == 0
    assert ops.argmax(ops.zeros((0, 3)), axis=1).shape == (0,)
    with pytest.raises(ValueError, match=r"^attempt to get argmax of an empty sequence$"):
        ops.argmax(ops.zeros(0))
    with pytest.raises(ValueError, match=r"^attempt to get argmin of an empty sequence$"):
        ops.argmin(ops.zeros((3, 0)), axis=1)
    with pytest.raises(ValueError, match=r"^axis 2 is out of bounds for array of dimension 2$"):
        ops.argmax(x, 2)
    with pytest.raises(TypeError, match=r"^'tuple' object cannot be interpreted as an integer$"):
        ops.argmax(x, (0, 1))
    with pytest.raises(TypeError, match=r"^ops\.argmin\(\) expects a Tensor, got list$"):
        ops.argmin([1, 2])


def test_one_hot():
    h = ops.one_hot(ops.tensor([0, 2, 3, -1]), 3)
    assert dt(h) == "float32" and h.shape == (4, 3)
    np.testing.assert_array_equal(h._a, [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    m = ops.one_hot(ops.tensor([[1], [0]], dtype="int32"), depth=2, dtype="int64")
    assert dt(m) == "int64" and m.shape == (2, 1, 2) and m._a.tolist() == [[[0, 1]], [[1, 0]]]
    assert dt(ops.one_hot(ops.tensor([0]), 2, af.bool_)) == "bool"
    assert ops.one_hot(ops.tensor([1, 2]), 0).shape == (2, 0)
    assert ops.one_hot(ops.tensor(1), 3).shape == (3,)
    with pytest.raises(TypeError, match=r"^one_hot: indices must be an integer tensor, got float32$"):
        ops.one_hot(ops.tensor([1.0]), 2)
    with pytest.raises(TypeError, match=r"got bool$"):
        ops.one_hot(ops.tensor([True]), 2)
    with pytest.raises(ValueError, match=r"^one_hot: depth must be non-negative, got -1$"):
        ops.one_hot(ops.tensor([1]), -1)


def test_squeeze_expand_dims_broadcast_to():
    x = ops.zeros((1, 3, 1))
    assert ops.squeeze(x).shape == (3,) and ops.squeeze(x, 0).shape == (3, 1)
    assert ops.squeeze(x, (0, -1)).shape == (3,) and ops.squeeze(x, axis=[2]).shape == (1, 3)
    assert ops.squeeze(ops.ones((1, 1))).shape == ()
    with pytest.raises(ValueError, match=r"^cannot select an axis to squeeze out which has size not equal to one$"):
        ops.squeeze(x, 1)
    with pytest.raises(ValueError, match=r"^repeated axis$"):
        ops.squeeze(x, (0, -3))
    with pytest.raises(ValueError, match=r"^axis 3 is out of bounds for array of dimension 3$"):
        ops.squeeze(x, 3)
    y = ops.arange(6).reshape(2, 3)
    for axis in (0, 1, 2, -1, (0, 3), (-1, 0)):
        e = ops.expand_dims(y, axis)
        assert e.shape == np.expand_dims(y._a, axis).shape and dt(e) == "int64"
    with pytest.raises(ValueError, match=r"^axis 3 is out of bounds for array of dimension 3$"):
        ops.expand_dims(y, 3)
    with pytest.raises(ValueError, match=r"^repeated axis$"):
        ops.expand_dims(y, (1, 1))
    with pytest.raises(TypeError, match=r"^ops\.expand_dims\(\) needs an axis, not None$"):
        ops.expand_dims(y, None)
    b = ops.broadcast_to(ops.tensor([1.5, 2.5]), (3, 2))
    assert dt(b) == "float32" and b._a.tolist() == [[1.5, 2.5]] * 3
    assert ops.broadcast_to(ops.tensor(4), 3)._a.tolist() == [4, 4, 4]
    assert ops.broadcast_to(ops.ones((3, 1)), [2, 3, 4]).shape == (2, 3, 4)
    assert ops.broadcast_to(ops.ones((1, 2)), (0, 2)).shape == (0, 2)
    with pytest.raises(ValueError, match=re.escape(
            "operands could not be broadcast together with remapped shapes "
            "[original->remapped]: (3,)  and requested shape (2,4)")):
        ops.broadcast_to(ops.ones(3), (2, 4))
    with pytest.raises(ValueError, match=r"^input operand has more dimensions than allowed by the axis remapping$"):
        ops.broadcast_to(ops.ones((2, 2)), 2)
    with pytest.raises(ValueError, match=r"^negative dimensions are not allowed$"):
        ops.broadcast_to(ops.ones(2), (-1, 2))


def test_concat_stack():
    a, b = ops.arange(6).reshape(2, 3), ops.tensor([[0.5, 1.5, 2.5]])
    c = ops.concat((a, b))
    assert dt(c) == "float64" and c._a.tolist() == np.concatenate([a._a, b._a]).tolist()
    assert ops.concat([a, a], axis=1).shape == (2, 6) and ops.concat([a, a], -1).shape == (2, 6)
    assert dt(ops.concat([ops.tensor([True]), ops.tensor([2], dtype="int32")])) == "int32"
    assert dt(ops.concat([ops.tensor([1], dtype="int32"), ops.tensor([1.0])])) == "float64"
    assert ops.concat([ops.zeros((0, 3)), a]).shape == (2, 3)
    assert ops.concat([a]).shape == (2, 3)
    f = ops.concat([a, ops.tensor(7), b], axis=None)  # numpy's axis=None: flattened, joined
    assert dt(f) == "float64" and f._a.tolist() == np.concatenate([a._a, np.array(7), b._a], axis=None).tolist()
    s = ops.stack([a, a, a], axis=1)
    assert s.shape == (2, 3, 3) and s._a.tolist() == np.stack([a._a] * 3, axis=1).tolist()
    assert ops.stack((ops.tensor(1), ops.tensor(2.5))).shape == (2,)
    assert ops.stack([a, a], axis=-1).shape == (2, 3, 2)
    assert dt(ops.stack([ops.tensor([1]), ops.tensor([True])])) == "int64"
    with pytest.raises(ValueError, match=r"^need at least one array to concatenate$"):
        ops.concat([])
    with pytest.raises(ValueError, match=r"^need at least one array to stack$"):
        ops.stack(())
    with pytest.raises(ValueError, match=r"^zero-dimensional arrays cannot be concatenated$"):
        ops.concat([ops.tensor(1), ops.tensor(2)])
    with pytest.raises(ValueError, match=r"^all the input arrays must have same number of dimensions, "
                       r"but the array at index 0 has 2 dimension\(s\) and the array at index 1 "
                       r"has 1 dimension\(s\)$"):
        ops.concat([a, ops.arange(3)])
    with pytest.raises(ValueError, match=r"^all the input array dimensions except for the concatenation "
                       r"axis must match exactly, but along dimension 1, the array at index 0 has "
                       r"size 3 and the array at index 1 has size 2$"):
        ops.concat([a, ops.zeros((1, 2))])
    with pytest.raises(ValueError, match=r"^axis 2 is out of bounds for array of dimension 2$"):
        ops.concat([a, a], 2)
    with pytest.raises(ValueError, match=r"^all input arrays must have the same shape$"):
        ops.stack([a, b])
    with pytest.raises(ValueError, match=r"^axis 3 is out of bounds for array of dimension 3$"):
        ops.stack([a, a], 3)
    with pytest.raises(TypeError, match=r"^ops\.concat\(\) expects a tuple or list of tensors, got Tensor$"):
        ops.concat(a)
    with pytest.raises(TypeError, match=r"^ops\.stack\(\) expects a Tensor, got int$"):
        ops.stack([a, 1])


def test_split():
    x = ops.arange(12).reshape(3, 4)
    parts = ops.split(x, 2, axis=1)
    assert type(parts) is tuple and len(parts) == 2
    assert [p._a.tolist() for p in parts] == [p.tolist() for p in np.split(x._a, 2, axis=1)]
    for spec in ((1, 3), [2], (-1,), (3, 1), (0, 10), ()):
        got = ops.split(x, spec, 1)
        ref = np.split(x._a, list(spec), axis=1)
        assert [p._a.tolist() for p in got] == [p.tolist() for p in ref]
        assert [p.shape for p in got] == [p.shape for p in ref]
    assert len(ops.split(x, 3)) == 3 and ops.split(x, 1)[0].shape == (3, 4)
    assert ops.split(ops.zeros((0, 2)), 3)[2].shape == (0, 2)
    with pytest.raises(ValueError, match=r"^array split does not result in an equal division$"):
        ops.split(x, 2)
    with pytest.raises(ValueError, match=r"^array split does not result in an equal division$"):
        ops.split(x, -5, axis=1)
    with pytest.raises(ValueError, match=r"^number sections must be larger than 0\.$"):
        ops.split(x, -2, axis=1)
    with pytest.raises(ZeroDivisionError, match=r"^integer modulo by zero$"):
        ops.split(x, 0)
    with pytest.raises(ValueError, match=r"^array split does not work on 0-d arrays$"):
        ops.split(ops.tensor(1.0), 1)
    with pytest.raises(ValueError, match=r"^axis -3 is out of bounds for array of dimension 2$"):
        ops.split(x, 1, -3)


def test_take():
    x = ops.arange(12).reshape(3, 4) * 1.5
    assert ops.take(x, [0, -1, 5])._a.tolist() == np.take(x._a, [0, -1, 5]).tolist()
    t = ops.take(x, ops.tensor([[2, 0], [1, 1]], dtype="int32"), axis=0)
    assert t.shape == (2, 2, 4) and t._a.tolist() == np.take(x._a, [[2, 0], [1, 1]], axis=0).tolist()
    assert ops.take(x, 1, axis=1)._a.tolist() == [1.5, 7.5, 13.5]
    assert ops.take(x, -1).shape == () and ops.take(x, -1).item() == 16.5
    assert ops.gather(x, [True, False], -1)._a.tolist() == np.take(x._a, [1, 0], -1).tolist()
    assert ops.take(x, [], axis=1).shape == (3, 0) and ops.take(x, []).shape == (0,)
    assert dt(x) == "float64" and dt(ops.take(ops.ones(2), [1])) == "float32" and dt(ops.take(ops.arange(3), [1])) == "int64"
    assert ops.take(ops.zeros((0, 2)), [1], axis=1).shape == (0, 1)
    with pytest.raises(IndexError, match=r"^index 12 is out of bounds for axis 0 with size 12$"):
        ops.take(x, 12)
    with pytest.raises(IndexError, match=r"^index -4 is out of bounds for axis 0 with size 3$"):
        ops.take(x, [0, -4, 7], axis=0)
    with pytest.raises(IndexError, match=r"^index 4 is out of bounds for axis 1 with size 4$"):
        ops.take(x, ops.tensor([[1, 4]]), axis=-1)
    with pytest.raises(IndexError, match=r"^cannot do a non-empty take from an empty axes\.$"):
        ops.take(ops.zeros(0), 0)
    with pytest.raises(IndexError, match=r"^cannot do a non-empty take from an empty axes\.$"):
        ops.take(ops.zeros((2, 0)), [0], axis=1)
    # numpy checks an index only when it reads it
    assert ops.take(ops.zeros((0, 5, 0)), [9], axis=2).shape == (0, 5, 1)
    with pytest.raises(IndexError, match=r"^index 0 is out of bounds for axis 0 with size 0$"):
        ops.take(ops.zeros((0, 5, 0)), [0], axis=0)
    with pytest.raises(TypeError, match=r"^Cannot cast array data from dtype\('float32'\) to "
                       r"dtype\('int64'\) according to the rule 'same_kind'$"):
        ops.take(x, ops.tensor([1.0]))
    with pytest.raises(TypeError, match=r"^ops\.take\(\) expects integer indices, got float$"):
        ops.take(x, 1.0)
    with pytest.raises(ValueError, match=r"^axis 2 is out of bounds for array of dimension 2$"):
        ops.take(x, 0, axis=2)


def test_pad():
    x = ops.arange(6).reshape(2, 3)
    for width in (1, (2,), (1, 2), ((1, 0), (0, 2)), [[0, 1], [2, 0]], ((1,), (2,))):
        got = ops.pad(x, width)
        ref = np.pad(x._a, width)
        assert got._a.tolist() == ref.tolist() and dt(got) == "int64"
    assert ops.pad(x, 1, "constant", 7)._a.tolist() == np.pad(x._a, 1, constant_values=7).tolist()
    assert ops.pad(x, (0, 1), constant_values=2.9)._a.tolist() == np.pad(x._a, (0, 1), constant_values=2).tolist()
    f = ops.pad(ops.tensor([1.0]), 1, constant_values=ops.tensor([0.25]))
    assert dt(f) == "float32" and f._a.tolist() == [0.25, 1.0, 0.25]
    assert ops.pad(ops.tensor([True]), 1, constant_values=2)._a.tolist() == [True, True, True]
    assert str(ops.pad(ops.tensor([1.0]), 1, constant_values=float("nan"))) == "[nan  1. nan]"
    assert ops.pad(ops.tensor(5), 3)._a.tolist() == 5
    assert ops.pad(ops.zeros((0, 2)), 1).shape == (2, 4)
    msg = ("operands could not be broadcast together with remapped shapes "
           "[original->remapped]: %s  and requested shape (2,2)")
    with pytest.raises(ValueError, match=re.escape(msg % "(3,)")):
        ops.pad(x, (1, 2, 3))
    with pytest.raises(ValueError, match=re.escape(msg % "(3,2)")):
        ops.pad(x, ((1, 2), (1, 2), (1, 2)))
    with pytest.raises(ValueError, match=r"^index can't contain negative values$"):
        ops.pad(x, ((1, 0), (0, -1)))
    with pytest.raises(TypeError, match=r"^`pad_width` must be of integral type\.$"):
        ops.pad(ops.tensor(5), ())  # numpy reads an empty pad_width as floats
    with pytest.raises(ValueError, match=r"^pad_width must be an int or a \(nested\) sequence of ints of one shape$"):
        ops.pad(x, ((1, 2), 3))
    with pytest.raises(TypeError, match=r"^ops\.pad\(\) expects pad_width as an int or \(nested\) tuples of ints$"):
        ops.pad(x, 1.5)
    with pytest.raises(TypeError, match=r"^ops\.pad\(\) expects a number as its constant_values, got str$"):
        ops.pad(x, 1, constant_values="a")
    with pytest.raises(TypeError, match=r"^ops\.pad\(\) expects a number as its constant_values, got Tensor$"):
        ops.pad(x, 1, "constant", ops.tensor([1, 2]))
    with pytest.raises(ValueError, match=r"^cannot convert float NaN to integer$"):
        ops.pad(x, 1, constant_values=float("nan"))
    with pytest.raises(OverflowError, match=r"^cannot convert float infinity to integer$"):
        ops.pad(x, 1, constant_values=float("-inf"))
    with pytest.raises(OverflowError, match=r"^Python integer 2147483648 out of bounds for int32$"):
        ops.pad(ops.tensor([1], dtype="int32"), 1, constant_values=2 ** 31)


def test_pad_modes():
    x = ops.arange(6).reshape(2, 3)
    for mode in ("constant", "edge", "reflect", "symmetric"):
        for width in (1, (2,), (1, 2), ((1, 0), (0, 2)), ((7, 5), (9, 4)), 0):
            got = ops.pad(x, width, mode)
            assert got._a.tolist() == np.pad(x._a, width, mode).tolist() and dt(got) == "int64"
            assert ops.pad(x, width, mode=mode)._a.tolist() == got._a.tolist()
        f = ops.tensor([1.5, -2.5, 4.0])
        assert dt(ops.pad(f, 4, mode)) == "float32"
        assert ops.pad(f, (5, 8), mode)._a.tolist() == np.pad(f._a, (5, 8), mode).tolist()
        assert ops.pad(ops.tensor(5), 3, mode)._a.tolist() == 5
        assert ops.pad(ops.zeros((0, 2)), ((0, 0), (1, 2)), mode).shape == (0, 5)
        b = ops.tensor([True, False])
        assert ops.pad(b, 3, mode)._a.tolist() == np.pad(b._a, 3, mode).tolist()
    # A single element reflects onto itself (numpy's legacy: as 'edge').
    assert ops.pad(ops.tensor([[5], [6]]), ((0, 0), (2, 1)), "reflect")._a.tolist() == [[5] * 4, [6] * 4]
    # None is "not given": 0 in the constant mode, accepted by the others.
    assert ops.pad(x, 1, "edge", None)._a.tolist() == np.pad(x._a, 1, "edge").tolist()
    assert ops.pad(x, 1, constant_values=None)._a.tolist() == np.pad(x._a, 1).tolist()
    with pytest.raises(ValueError, match=r"^mode 'foo' is not supported$"):
        ops.pad(x, 1, "foo")
    with pytest.raises(ValueError, match=r"^mode '3' is not supported$"):
        ops.pad(x, 1, 3)
    with pytest.raises(ValueError, match=r"^mode 'wrap' is not supported by ops\.pad \(its modes are "
                       r"'constant', 'edge', 'reflect' and 'symmetric'\)$"):
        ops.pad(x, 1, mode="wrap")
    for mode in ("edge", "reflect", "symmetric"):
        with pytest.raises(ValueError, match=r"^unsupported keyword arguments for mode '%s': "
                           r"\{'constant_values'\}$" % mode):
            ops.pad(x, 1, mode, 0)
        with pytest.raises(ValueError, match=r"^can't extend empty axis 1 using modes other than "
                           r"'constant' or 'empty'$"):
            ops.pad(ops.zeros((2, 0)), ((1, 1), (0, 1)), mode)
    # The widths are checked before the mode, the mode before constant_values.
    with pytest.raises(ValueError, match=r"^index can't contain negative values$"):
        ops.pad(x, -1, "foo")
    with pytest.raises(ValueError, match=r"^mode 'foo' is not supported$"):
        ops.pad(x, 1, "foo", 1)


def test_pad2d():
    x = ops.arange(24).reshape(1, 2, 3, 4)
    for fn, mode in ((ops.reflection_pad2d, "reflect"), (ops.replication_pad2d, "edge"),
                     (ops.zero_pad2d, "constant")):
        for padding, hw in ((1, ((1, 1), (1, 1))), ((2, 0, 1, 2), ((1, 2), (2, 0))),
                            ([0, 3, 2, 0], ((2, 0), (0, 3)))):
            got = fn(x, padding)
            assert got._a.tolist() == np.pad(x._a, ((0, 0), (0, 0)) + hw, mode).tolist()
            assert fn(x[0], padding)._a.tolist() == np.pad(x._a[0], ((0, 0),) + hw, mode).tolist()
    assert ops.replication_pad2d(x, 5).shape == (1, 2, 13, 14)
    assert ops.zero_pad2d(ops.zeros((1, 0, 2)), 1).shape == (1, 2, 4)
    with pytest.raises(ValueError, match=r"^reflection_pad2d: padding \(0, 4\) of the width must be "
                       r"less than its size 4 \(axis 3 of shape \(1, 2, 3, 4\)\)$"):
        ops.reflection_pad2d(x, (0, 4, 0, 0))
    with pytest.raises(ValueError, match=r"^reflection_pad2d: padding \(3, 3\) of the height must be "
                       r"less than its size 3 \(axis 1 of shape \(2, 3, 4\)\)$"):
        ops.reflection_pad2d(x[0], 3)
    with pytest.raises(ValueError, match=r"^replication_pad2d: expected a 4-D input \(N, C, H, W\) or "
                       r"a 3-D one \(C, H, W\), got shape \(3, 4\)$"):
        ops.replication_pad2d(x[0, 0], 1)
    with pytest.raises(ValueError, match=r"^zero_pad2d: padding must be an int or 4 ints \(left, right, "
                       r"top, bottom\), got 2$"):
        ops.zero_pad2d(x, (1, 2))
    with pytest.raises(ValueError, match=r"^zero_pad2d: padding must be non-negative, got \(1, -1, 0, 0\)$"):
        ops.zero_pad2d(x, (1, -1, 0, 0))
    with pytest.raises(TypeError, match=r"^ops\.zero_pad2d\(\) expects padding as an int or a tuple of 4 "
                       r"ints \(left, right, top, bottom\), got float$"):
        ops.zero_pad2d(x, 1.5)
    with pytest.raises(ValueError, match=r"^can't extend empty axis 2 using modes other than 'constant' "
                       r"or 'empty'$"):
        ops.replication_pad2d(ops.zeros((1, 1, 0, 2)), 1)


def test_permute_unsqueeze_index_select():
    x = ops.arange(24).reshape(2, 3, 4)
    assert ops.permute(x, (2, 0, 1))._a.tolist() == x._a.transpose(2, 0, 1).tolist()
    assert x.permute(1, 2, 0)._a.tolist() == x._a.transpose(1, 2, 0).tolist()
    assert x.permute([0, 2, 1]).shape == (2, 4, 3)
    assert ops.unsqueeze(x, -1).shape == (2, 3, 4, 1) and ops.unsqueeze is ops.expand_dims
    idx = ops.tensor([3, 0, -1], dtype="int32")
    assert ops.index_select(x, 2, idx)._a.tolist() == np.take(x._a, [3, 0, -1], axis=2).tolist()
    assert ops.index_select(x, 0, ops.tensor([], dtype="int64")).shape == (0, 3, 4)
    with pytest.raises(TypeError, match=r"^ops\.permute\(\) needs axes, not None$"):
        ops.permute(x, None)
    with pytest.raises(TypeError, match=r"^permute\(\) needs the axes$"):
        x.permute()
    with pytest.raises(TypeError, match=r"^ops\.index_select\(\) expects an int32 or int64 index, got bool$"):
        ops.index_select(x, 0, ops.tensor([True]))
    with pytest.raises(TypeError, match=r"^ops\.index_select\(\) expects index as a 1-D int32 or int64 "
                       r"tensor, got list$"):
        ops.index_select(x, 0, [1])
    with pytest.raises(ValueError, match=r"^ops\.index_select\(\) expects a 1-D index, got shape \(\)$"):
        ops.index_select(x, 0, ops.tensor(1))
    with pytest.raises(IndexError, match=r"^index 3 is out of bounds for axis 1 with size 3$"):
        ops.index_select(x, 1, ops.tensor([3]))

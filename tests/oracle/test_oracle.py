"""Tests of the anfora oracle's semantics (run: .venv/bin/python -m pytest tests/oracle)."""

import json
import os
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
    with pytest.raises(TypeError):
        ops.exp(ops.tensor([True]))  # numpy gives float16: not an anfora dtype


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

"""@anfora.jit on functions: values against CPython/numpy, name resolution, the compile cache,
output, introspection and dumps."""

import os

import numpy as np
import pytest

import anfora
from anfora import ops

SCALE = 3.0
OFFSETS = (1, 2, 3)


def t(a):
    return anfora.tensor(np.asarray(a))


def helper(x, n):
    # A plain (undecorated) function called from compiled code: compiled on demand.
    total = x
    for i in range(n):
        total = total + x * i
    return total


@anfora.jit
def uses_globals(x):
    return ops.sum(helper(x, 3)) * SCALE + OFFSETS[2]


def test_globals_and_user_functions_resolve_through_python():
    x = np.arange(4.0, dtype=np.float32)
    expected = np.sum(x + x * 0 + x * 1 + x * 2) * 3.0 + 3
    assert float(uses_globals(t(x))) == pytest.approx(expected)


def make_affine(w, b):
    @anfora.jit
    def affine(x):
        return x @ w + b

    return affine


def test_closure_cells_are_constants_of_the_compiled_function():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 2)).astype(np.float32)
    b = rng.standard_normal(2).astype(np.float32)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    f = make_affine(t(w), t(b))
    np.testing.assert_allclose(np.asarray(f(t(x))), x @ w + b, rtol=1e-5, atol=1e-6)


@anfora.jit
def control(x, n):
    if n > 2:
        y = x * 2
    else:
        y = x - 1
    while ops.sum(y) < 100.0:
        y = y * 2
    return y, n + 1


def test_control_flow_and_python_scalars():
    x = np.array([1.0, 2.0], np.float32)
    y, m = control(t(x), 3)
    v = x * 2
    while v.sum() < 100:
        v = v * 2
    np.testing.assert_array_equal(np.asarray(y), v)
    assert m == 4 and isinstance(m, int)


@anfora.jit
def scaled(x, k):
    return x * k


def test_cache_recompiles_only_for_new_signatures_and_explains_why():
    x = t(np.ones(3, np.float32))
    scaled(x, 2)
    assert "first call" in scaled.explain()
    scaled(x, 2)
    assert scaled.explain() is None
    scaled(t(np.ones(4, np.float32)), 2)
    assert "argument 1 ('x') changed" in scaled.explain()
    scaled(x, 5)
    why = scaled.explain()
    assert "argument 2 ('k') changed" in why and "mutable" in why
    n = scaled.cache_size
    for k in range(10, 14):
        assert float(ops.sum(scaled(x, anfora.mutable(k)))) == 3 * k
    assert scaled.cache_size == n + 1


@anfora.jit
def shout(x):
    print("value:", x)
    return x + 1


def test_print_goes_to_python_stdout(capsys):
    assert shout(41) == 42
    assert capsys.readouterr().out == "value: 41\n"


@anfora.jit
def keywords(a, b=10, *, c=100):
    return a + b + c


def test_keyword_arguments_and_defaults():
    assert keywords(1) == 111
    assert keywords(1, c=5) == 16
    assert keywords(b=2, a=1) == 103
    with pytest.raises(TypeError, match="missing a required argument: 'a'"):
        keywords(b=1)
    with pytest.raises(TypeError, match="too many positional arguments"):
        keywords(1, 2, 3)


@anfora.jit
def divide(a, b):
    return a // b


def test_runtime_errors_are_python_exceptions_with_the_compiled_traceback():
    with pytest.raises(ZeroDivisionError) as info:
        divide(1, 0)
    notes = "".join(getattr(info.value, "__notes__", []))
    assert "test_jit.py" in notes and "return a // b" in notes


@anfora.jit
def matmul_chain(a, b):
    return ops.tanh(a @ b)


def test_lower_returns_the_ir_and_dot():
    lowered = matmul_chain.lower(t(np.zeros((2, 3), np.float32)), t(np.zeros((3, 4), np.float32)))
    ir = lowered.ir()
    assert "subgraph @matmul_chain" in ir and "MatMul" in ir and "(2, 4)" in ir
    assert "test_jit.py" in ir  # source locations of the user's file
    assert lowered.dot().startswith("digraph")
    assert "MatMul" in lowered.program() or "Gemm" in lowered.program()


@anfora.jit
def typed(x: anfora.TensorSpec((2, 3), anfora.float32)):
    return ops.sum(x)


def test_typed_signature_compiles_at_decoration_and_rejects_other_types():
    assert typed.cache_size == 1
    assert float(typed(t(np.ones((2, 3), np.float32)))) == 6.0
    assert typed.cache_size == 1
    with pytest.raises(TypeError, match=r"argument 'x' must be TensorSpec\(shape=\(2, 3\)"):
        typed(t(np.ones((3, 2), np.float32)))
    with pytest.raises(TypeError, match="float64"):
        typed(t(np.ones((2, 3), np.float64)))
    with pytest.raises(TypeError, match="missing a required argument: 'x'"):
        typed.lower()


@anfora.jit
def dumped(x):
    return ops.exp(x) + 1


def test_save_graphs_writes_stage_dumps(tmp_path):
    anfora.set_context(save_graphs=3, save_graphs_path=str(tmp_path))
    try:
        dumped(t(np.zeros(2, np.float32)))
    finally:
        anfora.set_context(save_graphs=0)
    names = sorted(os.listdir(tmp_path))
    stages = {n.rsplit("_", 1)[-1] for n in names}
    for stage in ["parse.ir", "resolve.ir", "infer.ir", "optimize.ir", "optimize.dot", "lower.ir"]:
        assert stage in stages, names
    text = (tmp_path / [n for n in names if n.endswith("_optimize.ir")][0]).read_text()
    assert "subgraph @dumped" in text
    with pytest.raises(ValueError):
        anfora.set_context(save_graphs=4)


@anfora.jit
def updates(p, x):
    ops.assign_add(p, x)
    return ops.sum(p)


def test_parameters_are_updated_in_place_by_compiled_code():
    p = anfora.Parameter(np.zeros(3, np.float32), name="acc")
    x = t(np.ones(3, np.float32))
    assert float(updates(p, x)) == 3.0
    assert float(updates(p, x)) == 6.0
    np.testing.assert_array_equal(p.numpy(), np.full(3, 2.0))


@anfora.jit
def _iterate_sin(x, n):
    i = 0
    while i < n:
        x = ops.sin(x) * 1.0001
        i += 1
    return x


def test_other_python_threads_run_while_compiled_code_runs():
    import threading

    x = anfora.tensor(np.ones(1 << 18, np.float32))
    expected = np.ones(1 << 18, np.float32)
    for _ in range(30):
        expected = np.sin(expected) * np.float32(1.0001)
    _iterate_sin(x, anfora.mutable(1))  # compiled before the measured call
    count = 0
    stop = threading.Event()

    def spin():
        nonlocal count
        while not stop.is_set():
            count += 1

    th = threading.Thread(target=spin)
    th.start()
    try:
        while count == 0:
            pass
        before = count
        y = _iterate_sin(x, anfora.mutable(30))
        during = count - before
    finally:
        stop.set()
        th.join()
    # Holding the GIL through the call would leave the other thread no bytecode at all.
    assert during > 0
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-5)


def test_one_compiled_function_serves_several_threads():
    import threading

    from anfora import nn

    x = anfora.tensor(np.linspace(-1, 1, 4096).astype(np.float32))
    expected = np.asarray(_iterate_sin(x, anfora.mutable(20))).copy()
    grad = anfora.grad(_sum_of_squares)
    gexpected = np.asarray(grad(x)).copy()
    net = nn.SequentialCell(nn.Dense(4, 3, seed=1), nn.Dropout(0.5))
    data = anfora.tensor(np.ones((2, 4), np.float32))
    net.set_train(False)
    evaluated = np.asarray(net(data)).copy()
    signatures = _iterate_sin.cache_size
    failures = []

    def work():
        try:
            for _ in range(10):
                np.testing.assert_array_equal(np.asarray(_iterate_sin(x, anfora.mutable(20))), expected)
                np.testing.assert_array_equal(np.asarray(grad(x)), gexpected)
                # set_train(False) happened on the main thread: no dropout here either.
                np.testing.assert_array_equal(np.asarray(net(data)), evaluated)
        except BaseException as e:  # noqa: BLE001 - reported below
            failures.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not failures, failures[0]
    assert _iterate_sin.cache_size == signatures  # each thread keeps its own compiled signatures
    net.set_train(True)


def _sum_of_squares(x):
    return ops.sum(x * x)


SQUARE = lambda x: x * x  # noqa: E731 - lambdas compile from their source line too
PAIR = (lambda a: a + 1, lambda b: (b,
                                    b * 2))


TABLE = {
    "exp": lambda x: ops.exp(x),
    "twice": lambda x: (
        x * 2
    ),
}


class _WithLambda:
    f = staticmethod(lambda x: ops.sin(x) * 2)


BAD_LAMBDA = lambda s: s + {1}  # noqa: E731


def test_lambdas_compile_from_their_source():
    assert anfora.jit(SQUARE)(3.0) == 9.0
    assert anfora.jit(PAIR[1])(4) == (4, 8)
    # Inside a multi-line expression: its lines alone are not a statement.
    assert anfora.jit(TABLE["twice"])(4) == 8
    assert float(anfora.jit(TABLE["exp"])(anfora.tensor(0.0))) == 1.0
    np.testing.assert_allclose(np.asarray(anfora.jit(_WithLambda.f)(anfora.tensor(np.array([0.5])))), [2 * np.sin(0.5)])
    assert float(anfora.grad(SQUARE)(anfora.tensor(3.0))) == 6.0
    with pytest.raises(anfora.CompileError) as e:
        anfora.jit(BAD_LAMBDA)(1)
    line = next(i for i, l in enumerate(open(__file__), 1) if l.startswith("BAD_LAMBDA ="))
    assert f"test_jit.py:{line}:28" in str(e.value) and "set displays" in str(e.value)


def test_an_op_itself_compiles_and_differentiates_with_its_own_parameters():
    x = anfora.tensor(np.array([0.5, 1.0, 2.0], np.float32))
    np.testing.assert_array_equal(anfora.jit(ops.exp)(x).numpy(), ops.exp(x).numpy())
    np.testing.assert_array_equal(
        anfora.jit(ops.sum)(x, axis=0, keepdims=True).numpy(), np.array([3.5], np.float32)
    )
    np.testing.assert_allclose(
        anfora.jit(ops.var)(x, ddof=1).numpy(), np.var(x.numpy(), ddof=1), rtol=1e-6
    )
    t = anfora.tensor(np.float64(0.5))
    assert float(anfora.grad(ops.tanh)(t).numpy()) == pytest.approx(1 - np.tanh(0.5) ** 2, 1e-15)
    ir = anfora.jit(ops.tanh).lower(x).ir()
    assert "Tanh(%para1_x)" in ir and "<anfora.ops.tanh>:2:12" in ir
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        anfora.jit(ops.sum)(x, bogus=1)
    with pytest.raises(TypeError, match="cannot compile ops.depend itself"):
        anfora.jit(ops.depend)

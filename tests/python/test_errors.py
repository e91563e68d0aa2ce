"""Compile errors from Python name the user's file, line and column, show the source line
with an underline and a hint, and report every problem at once; a failed compile leaves
other functions working."""

import threading

import numpy as np
import pytest

import anfora
from anfora import ops

LOCK = threading.Lock()


def t(a):
    return anfora.tensor(np.asarray(a))


@anfora.jit
def unsupported(x):
    try:
        y = x + 1
    except ValueError:
        y = x
    with LOCK:
        y = y * 2
    return y


def test_every_unsupported_construct_is_reported_at_its_line():
    with pytest.raises(anfora.CompileError) as info:
        unsupported(1)
    msg = str(info.value)
    here = __file__
    first = unsupported.__wrapped__.__code__.co_firstlineno
    assert f"{here}:{first + 2}:5" in msg  # try
    assert f"{here}:{first + 6}:5" in msg  # with
    assert "│     try:" in msg and "not supported" in msg and "help:" in msg
    assert "could not compile: 2 errors" in msg


@anfora.jit
def bad_global(x):
    return x + LOCK


def test_python_objects_compiled_code_cannot_use_are_refused():
    with pytest.raises(anfora.CompileError, match=r"E0209.*global 'LOCK' is a 'lock' object"):
        bad_global(1)


class Holder:
    def __init__(self):
        self.w = t(np.ones(2))

    @anfora.jit
    def missing(self, x):
        return x + self.nothing

    @anfora.jit
    def escapes(self, x):
        return helper(self, x)


def helper(obj, x):
    return x


def test_attribute_errors_and_self_as_a_value():
    h = Holder()
    with pytest.raises(anfora.CompileError, match=r"E0206.*'Holder' object has no attribute 'nothing'"):
        h.missing(1)
    # `self` is a value like any object (tests/python/test_objects.py).
    assert h.escapes(1) == 1


@anfora.jit
def shape_error(a, b):
    return a @ b


@anfora.jit
def fine(x):
    return x * 2


def test_shape_errors_name_the_line_and_do_not_break_later_compiles():
    before = fine(t(np.ones(2)))
    with pytest.raises(anfora.CompileError, match=r"test_errors.py:\d+:12"):
        shape_error(t(np.ones((2, 3))), t(np.ones((4, 5))))
    with pytest.raises(anfora.CompileError, match="E0206"):
        Holder().missing(1)
    # Functions compiled before and after a failed compile keep working.
    np.testing.assert_array_equal(np.asarray(fine(t(np.ones(2)))), np.asarray(before))
    np.testing.assert_array_equal(np.asarray(fine(t(np.ones(3)))), np.full(3, 2.0))
    np.testing.assert_array_equal(
        np.asarray(shape_error(t(np.ones((2, 3))), t(np.ones((3, 1))))), np.full((2, 1), 3.0)
    )


def test_a_lambda_written_inside_a_call_compiles_from_its_line():
    f = anfora.jit(lambda x: x + 1)
    g = anfora.jit(lambda x: x * 2)  # two lambdas, two functions
    assert f(1) == 2 and g(3) == 6


def test_non_callables_are_rejected():
    with pytest.raises(TypeError, match="needs a function"):
        anfora.jit(3)


@anfora.jit
def uses_numpy(x):
    return np.sum(x)


def test_other_modules_are_refused_at_the_use():
    with pytest.raises(anfora.CompileError) as info:
        uses_numpy(t(np.ones(2)))
    msg = str(info.value)
    assert "E0209" in msg and "global 'np' is the module 'numpy'" in msg
    line = uses_numpy.__wrapped__.__code__.co_firstlineno + 2  # the decorator's line + 2
    assert f"test_errors.py:{line}:12" in msg and "use `anfora.ops` inside compiled functions" in msg


def test_a_free_variable_not_yet_assigned_is_refused():
    def outer():
        @anfora.jit
        def inner(x):
            return x + later

        with pytest.raises(anfora.CompileError, match="free variable 'later' is referenced before assignment"):
            inner(1)
        later = 2
        return later

    assert outer() == 2


def test_grad_argnums_out_of_range_and_typed_arity():
    @anfora.jit
    def f(x):
        return ops.sum(x)

    with pytest.raises(ValueError, match="argnums 3 is out of range for a call with 1 argument"):
        anfora.grad(f, argnums=3)(t(np.ones(2)))

    @anfora.jit
    def typed(x: anfora.TensorSpec((2,), anfora.float64)):
        return ops.sum(x)

    with pytest.raises(TypeError, match="too many positional arguments"):
        typed(t(np.ones(2)), t(np.ones(2)))


_SELF_HOLDING = [1.0]
_SELF_HOLDING.append(_SELF_HOLDING)


def _reads_self_holding(x):
    return x + _SELF_HOLDING[0]


def test_a_list_holding_itself_is_an_error_not_a_crash():
    f = anfora.jit(lambda_free_identity)
    with pytest.raises(ValueError, match="nested more than 100 deep"):
        f(_SELF_HOLDING)
    with pytest.raises(anfora.CompileError, match="cannot use"):
        anfora.jit(_reads_self_holding)(1.0)


def lambda_free_identity(x):
    return x

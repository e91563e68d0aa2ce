"""Eager and compiled execution agree: every program of the differential corpus (tests/corpus)
runs once as plain Python on anfora's eager Tensors and operations, and once compiled by
`anfora.jit`, each in a fresh copy of its module. What they print, the repr of what they
return and the exception they raise must be identical. (tests/differential compares the
compiled side with CPython and the numpy oracle; this closes the triangle for the package.)"""

import ast
import contextlib
import importlib.util
import io
import itertools
import os

import pytest

import anfora

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus")
PROGRAMS = sorted(f for f in os.listdir(CORPUS) if f.endswith(".py"))
_modules = itertools.count()

# Known disagreements (strict xfails: fixing one makes its test fail until it is taken off),
# {program: reason}. None now: eager Tensors update in place as numpy's arrays do.
KNOWN = {}


def _args(source):
    for line in source.splitlines()[:5]:
        if line.strip().startswith("# args:"):
            text = line.strip()[len("# args:"):].strip()
            return tuple(_convert(v) for v in ast.literal_eval("(" + text + ",)")) if text else ()
    return ()


def _convert(v):
    if isinstance(v, list):
        return anfora.ops.tensor(v)
    if isinstance(v, tuple):
        return tuple(_convert(x) for x in v)
    return v


def _run(path, compiled):
    """(stdout, repr of the result or None, 'Type: message' or None) of one run of main, in a
    fresh copy of the program's module, the random generator seeded alike."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    out = io.StringIO()
    result = error = None
    anfora.set_seed(0)
    spec = importlib.util.spec_from_file_location(f"_eager_vs_jit_{next(_modules)}", path)
    module = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(out):
        spec.loader.exec_module(module)
        main = anfora.jit(module.main) if compiled else module.main
        args = _args(source)
        try:
            result = repr(main(*args))
        except anfora.CompileError:
            raise
        except Exception as e:  # noqa: BLE001 - a program's error is part of its behaviour
            error = f"{type(e).__name__}: {e}"
    return out.getvalue(), result, error


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN[n], strict=True, raises=(AssertionError, anfora.CompileError)))
    if n in KNOWN else n
    for n in PROGRAMS
])
def test_eager_and_compiled_runs_agree(name):
    path = os.path.join(CORPUS, name)
    eager = _run(path, compiled=False)
    jit = _run(path, compiled=True)
    assert jit[0] == eager[0], "printed output differs"
    assert jit[1:] == eager[1:]
    # The error programs fail on purpose; every other one must run to its end.
    assert (eager[2] is not None) == ("error" in name), eager[2]

#!/usr/bin/env python3
"""Run corpus programs under CPython + the anfora oracle and print one JSON object.

Usage:  run_cpython.py FILE_OR_DIR [FILE_OR_DIR ...]

For each program: load it as a fresh module (importlib, unique module name, so
``__name__ != "__main__"``), call ``main(*args)`` and record
``{"stdout": ..., "result": repr(return value) | null, "error": "Type: msg" | null}``.
``args`` come from a ``# args: <literals>`` comment within the first 5 lines,
parsed with ``ast.literal_eval("(" + text + ",)")``; list literals become
``anfora.ops.tensor(list)`` (also inside tuple arguments).
"""

import ast
import contextlib
import importlib.util
import io
import itertools
import json
import os
import sys

ORACLE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
if not sys.path or os.path.normpath(os.path.abspath(sys.path[0])) != ORACLE:
    sys.path.insert(0, ORACLE)

import anfora  # noqa: E402  (the oracle, from tests/oracle)

ARGS_PREFIX = "# args:"
_counter = itertools.count()


def parse_args(source):
    """The ``# args:`` line (first 5 lines) -> tuple of arguments, or ()."""
    for line in source.splitlines()[:5]:
        stripped = line.strip()
        if stripped.startswith(ARGS_PREFIX):
            text = stripped[len(ARGS_PREFIX):].strip()
            if not text:
                return ()
            return tuple(_convert(v) for v in ast.literal_eval("(" + text + ",)"))
    return ()


def _convert(value):
    if isinstance(value, list):
        return anfora.ops.tensor(value)
    if isinstance(value, tuple):
        return tuple(_convert(v) for v in value)
    return value


def format_error(exc):
    msg = str(exc)
    name = type(exc).__name__
    return name + ": " + msg if msg else name


def run_file(path):
    record = {"stdout": "", "result": None, "error": None}
    buf = io.StringIO()
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        args = parse_args(source)
        stem = os.path.splitext(os.path.basename(path))[0]
        name = "_anfora_corpus_%d_%s" % (next(_counter), "".join(
            c if c.isalnum() or c == "_" else "_" for c in stem))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        with contextlib.redirect_stdout(buf):
            spec.loader.exec_module(module)
            result = module.main(*args)
        record["result"] = repr(result)
    except Exception as exc:  # noqa: BLE001 - every program error is data
        record["error"] = format_error(exc)
    record["stdout"] = buf.getvalue()
    return record


def collect(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            for entry in sorted(os.listdir(p)):
                if entry.endswith(".py"):
                    files.append(os.path.join(p, entry))
        else:
            files.append(p)
    return files


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    out = {}
    for path in collect(argv):
        out[path] = run_file(path)
    sys.stdout.write(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

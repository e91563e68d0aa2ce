"""The real `anfora` package (built by maturin into .venv); tests/oracle holds a different,
numpy-backed package of the same name, so make sure that one is not on the path."""

import sys

sys.path[:] = [p for p in sys.path if not p.rstrip("/").endswith("tests/oracle")]


def load_example(name):
    """The module `examples/<name>.py`, loaded from its file (the examples are scripts, not a
    package)."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

"""The real `anfora` package (built by maturin into .venv); tests/oracle holds a different,
numpy-backed package of the same name, so make sure that one is not on the path."""

import sys

sys.path[:] = [p for p in sys.path if not p.rstrip("/").endswith("tests/oracle")]

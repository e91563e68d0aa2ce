#!/usr/bin/env bash
# The whole test suite: formatting, lints, every Rust test (unit, golden, differential against
# CPython + numpy, diagnostics, CLI), the oracle's own pytest suite, and the Python package's
# pytest suite (after building it into .venv with maturin).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
export ANFORA_PYTHON="$PWD/.venv/bin/python"

cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
"$ANFORA_PYTHON" -m pytest -q tests/oracle
# The extension module, built (debug profile) and installed in editable mode into .venv.
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" maturin develop -q
"$ANFORA_PYTHON" -m pytest -q tests/python

#!/usr/bin/env bash
# The whole test suite: formatting, lints, every Rust test (unit, golden, differential against
# CPython + numpy, diagnostics, CLI), and the oracle's own pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
export ANFORA_PYTHON="$PWD/.venv/bin/python"

cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
"$ANFORA_PYTHON" -m pytest -q tests/oracle

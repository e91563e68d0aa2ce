#!/usr/bin/env bash
# Installs what anfora's tests need on a fresh Debian machine with Rust 1.95 and Python 3.11:
# the system packages of scripts/system-deps.sh (graphviz, gcc and g++, OpenMPI and libclang)
# and a virtual environment with numpy and pytest (the CPython
# oracle of the differential tests), maturin (which builds the Python package), scikit-learn
# (the digits dataset of the training example), and onnx and onnxruntime (the ONNX export's
# tests check and run the models they write). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/system-deps.sh

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import numpy, pytest, sklearn, onnx, onnxruntime" >/dev/null 2>&1 \
    || [ ! -x .venv/bin/maturin ]; then
    echo "setup: creating .venv with numpy, pytest, maturin, scikit-learn, onnx and onnxruntime"
    python3 -m venv .venv
    .venv/bin/python -m pip install -q --disable-pip-version-check \
        "numpy==2.4.6" "pytest>=8" "maturin>=1.16,<2" "scikit-learn>=1.5" \
        "onnx>=1.17,<2" "onnxruntime>=1.20,<2"
fi

rustup component add rustfmt clippy >/dev/null 2>&1 || true

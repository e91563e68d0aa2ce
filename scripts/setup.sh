#!/usr/bin/env bash
# Installs what anfora's tests need on a fresh Debian machine with Rust 1.95 and Python 3.11:
# graphviz (the .dot test renders with `dot`), gcc and g++ (the C API tests compile the C
# examples and the C++ wrapper), OpenMPI and libclang (anfora.distributed; its tests run
# `mpirun`) and a virtual environment with numpy and pytest (the CPython
# oracle of the differential tests), maturin (which builds the Python package), scikit-learn
# (the digits dataset of the training example), and onnx and onnxruntime (the ONNX export's
# tests check and run the models they write). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

MISSING=()
command -v dot >/dev/null 2>&1 || MISSING+=(graphviz)
command -v cc >/dev/null 2>&1 || MISSING+=(gcc libc6-dev)
command -v c++ >/dev/null 2>&1 || MISSING+=(g++)
# OpenMPI for anfora.distributed; libclang because the mpi crate's build generates its
# bindings with bindgen.
command -v mpirun >/dev/null 2>&1 || MISSING+=(openmpi-bin)
[ -e /usr/include/x86_64-linux-gnu/openmpi/mpi.h ] || [ -e /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h ] \
    || MISSING+=(libopenmpi-dev)
ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 || ls /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1 \
    || MISSING+=(libclang-dev)
if [ "${#MISSING[@]}" -gt 0 ]; then
    echo "setup: installing ${MISSING[*]}"
    SUDO=""
    if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${MISSING[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import numpy, pytest, sklearn, onnx, onnxruntime" >/dev/null 2>&1 \
    || [ ! -x .venv/bin/maturin ]; then
    echo "setup: creating .venv with numpy, pytest, maturin, scikit-learn, onnx and onnxruntime"
    python3 -m venv .venv
    .venv/bin/python -m pip install -q --disable-pip-version-check \
        "numpy==2.4.6" "pytest>=8" "maturin>=1.16,<2" "scikit-learn>=1.5" \
        "onnx>=1.17,<2" "onnxruntime>=1.20,<2"
fi

rustup component add rustfmt clippy >/dev/null 2>&1 || true

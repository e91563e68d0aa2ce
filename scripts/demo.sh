#!/usr/bin/env bash
# The README's demo: installs the anfora Python package into a fresh virtual environment
# (`pip install .`, as a user would: maturin builds the extension in release mode) together
# with scikit-learn, then trains an MLP and a LeNet-style CNN on the bundled digits dataset
# (examples/train_digits.py; extra arguments are passed on, e.g. --epochs 5).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${ANFORA_DEMO_VENV:-target/demo-venv}"
rm -rf "$venv"
python3 -m venv "$venv"
echo "demo: building and installing anfora into $venv (pip install .)"
"$venv/bin/python" -m pip install -q --disable-pip-version-check . "scikit-learn>=1.5"
"$venv/bin/python" examples/train_digits.py "$@"

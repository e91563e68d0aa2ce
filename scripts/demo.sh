#!/usr/bin/env bash
# The README's demo: installs the anfora Python package into a fresh virtual environment
# (`pip install .`, as a user would: maturin builds the extension in release mode) together
# with scikit-learn, then trains an MLP and a LeNet-style CNN on the bundled digits dataset
# (examples/train_digits.py; extra arguments are passed on, e.g. --epochs 5), exports each
# trained model as a model file, and classifies the test digits again from C: the light
# runtime (libanfora_runtime, no compiler inside) runs examples/c/classify_digits on the
# exported files, with the accuracy the Python run printed, and on their int8 forms (the
# converter's, calibrated on training images).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${ANFORA_DEMO_VENV:-target/demo-venv}"
models="${ANFORA_DEMO_MODELS:-target/demo-models}"
# The package builds with MPI (anfora.distributed): OpenMPI and libclang must be there.
bash scripts/system-deps.sh
rm -rf "$venv"
python3 -m venv "$venv"
echo "demo: building and installing anfora into $venv (pip install .)"
"$venv/bin/python" -m pip install -q --disable-pip-version-check . "scikit-learn>=1.5"
"$venv/bin/python" examples/train_digits.py --export "$models" "$@"
echo "demo: building the C runtime and examples (examples/c/build.sh)"
examples/c/build.sh "$models/bin" >/dev/null
for name in mlp lenet; do
    for model in "$name" "${name}_int8"; do
        if [ -f "$models/$model.anfora" ]; then
            echo "demo: $model from C: $("$models/bin/classify_digits" "$models/$model.anfora" \
                "$models/${name}_images.npy" "$models/${name}_labels.npy")"
        fi
    done
done

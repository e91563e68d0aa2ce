#!/usr/bin/env bash
# Runs the MindSpore-style test scripts (tests/python/test_mindspore_compat.py) under MindSpore
# itself, with only the import changed, to find where anfora's layer deviates from it (not part
# of the test suite: MindSpore's wheel is 776 MB). docs/mindspore.md lists the checks that are
# anfora's own and the differences kept on purpose.
#   bash scripts/check-against-mindspore.sh [VENV_DIR]   (default: target/mindspore-venv)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$(realpath -m "${1:-target/mindspore-venv}")"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "mindspore==2.7.2" pytest
fi
out="$(mktemp -d)"
sed -e 's/import anfora.compat.mindspore as ms/import mindspore as ms/' \
    -e 's/from anfora.compat.mindspore/from mindspore/g' \
    -e 's/anfora\.compat\.mindspore/mindspore/g' \
    tests/python/test_mindspore_compat.py > "$out/test_under_mindspore.py"
cd "$out"
"$venv/bin/python" -m pytest -q -p no:cacheprovider -rf --tb=line test_under_mindspore.py \
    --deselect test_under_mindspore.py::test_the_mindspore_style_digits_example_trains_as_the_anfora_one \
    || true

#!/usr/bin/env bash
# Runs on the GPU machine as gpu-bin/run.sh (scripts/gpu-check.sh copies it there beside the
# binaries it builds): the GPU tests (Rust, then Python when the wheel and pytest are there),
# then anfora's GPU benchmark and JAX's (W1, W2, W5, W6) in turn, twice, so each ratio is seen
# in two side-by-side runs. Output goes to standard output and to $OUT/gpu.log (OUT defaults
# to /tmp). From the repository root on the GPU machine: `bash gpu-bin/run.sh`.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
LOG="${OUT:-/tmp}/gpu.log"
PY="${PY:-python3}"
{
    echo "=== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
    echo "=== GPU tests"
    timeout 300 "$HERE/gpu-tests" --test-threads=1 2>&1 | tail -25
    if ls "$HERE"/wheel/*.whl >/dev/null 2>&1 && "$PY" -c "import pytest, numpy" 2>/dev/null; then
        echo "=== Python tests on the device"
        rm -rf "$HERE/py"
        "$PY" -m pip install -q --no-deps --no-index --target "$HERE/py" "$HERE"/wheel/*.whl \
            && PYTHONPATH="$HERE/py" timeout 120 "$PY" -m pytest -q -p no:cacheprovider \
                "$HERE/../tests/python/test_cuda.py" 2>&1 | tail -15
    else
        echo "=== Python tests skipped (no wheel, or no pytest and numpy in $PY)"
    fi
    echo "=== the corpus on cpu and cuda:0"
    timeout 600 "$PY" "$HERE/../tests/differential/run_devices.py" "$HERE/anfora" cuda:0 \
        "$HERE/../tests/corpus" 2>&1 | tail -40
    for round in 1 2; do
        echo "=== round $round: anfora"
        timeout 120 "$HERE/gpu-bench"
        if [ -f "$HERE/jax_gpu.py" ]; then
            echo "=== round $round: JAX"
            (cd "$HERE" && PYTHONUNBUFFERED=1 timeout 200 "$PY" jax_gpu.py --only W1 W2 W5 W6) 2>&1 | grep -v "^W0000\|^I0000"
        fi
    done
} 2>&1 | tee "$LOG"

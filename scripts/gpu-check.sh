#!/usr/bin/env bash
# Builds the CUDA backend's GPU tests and GPU benchmark on a CPU machine (release mode; the
# CUDA libraries are opened at run time, so nothing of CUDA is needed here) into gpu-bin/,
# stripped, with gpu-bin/run.sh and JAX's side of the comparison. Copy gpu-bin/ to a GPU
# machine that has the NVIDIA driver and CUDA's libraries and run `bash gpu-bin/run.sh`: the
# tests, then the benchmark and JAX's (../shared/reference/bench/jax_gpu.py) in turn, twice.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=gpu-bin
rm -rf "$OUT"
mkdir -p "$OUT"

executable() { sed -n "s/.*Executable $1 (\(.*\))/\1/p" | tail -1; }
tests=$(cargo test -p anfora-cuda --release --test gpu --no-run 2>&1 | executable 'tests\/gpu.rs')
bench=$(cargo bench -p anfora-benches --bench gpu --no-run 2>&1 | executable 'benches\/gpu.rs')
[ -n "$tests" ] && [ -n "$bench" ] || { echo "gpu-check: the build failed" >&2; exit 1; }
strip -o "$OUT/gpu-tests" "$tests"
strip -o "$OUT/gpu-bench" "$bench"
# The Python package as a release wheel (abi3, CPython >= 3.11), for tests/python/test_cuda.py.
if [ -x .venv/bin/maturin ]; then  # scripts/setup.sh installs it
    CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/work/target-py}" .venv/bin/maturin build --release -q \
        -o "$OUT/wheel" >/dev/null 2>&1 || echo "gpu-check: the wheel did not build (Python tests skipped)"
fi
for f in jax_gpu.py common.py workload_defs.py; do
    cp "../shared/reference/bench/$f" "$OUT/" 2>/dev/null || echo "gpu-check: no $f (JAX's side is skipped)"
done
cp scripts/gpu-bench.sh "$OUT/run.sh"
ls -l "$OUT"

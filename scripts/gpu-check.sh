#!/usr/bin/env bash
# Builds, on a CPU machine, what the GPU checks of issue 31 run on a GPU machine that has the
# NVIDIA driver and CUDA's libraries but no Rust toolchain: the GPU tests and benchmark, the
# `anfora` command (the corpus on both devices) and the Python wheel, all release builds that
# open the CUDA libraries at run time, stripped into gpu-bin/ with gpu-bin/run.sh
# (scripts/gpu-bench.sh) and JAX's side of the comparison. There, from the repository root:
# `bash gpu-bin/run.sh`.
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
# The command, for the corpus on both devices (tests/differential/run_devices.py).
cargo build --release -q -p anfora-cli
strip -o "$OUT/anfora" target/release/anfora
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

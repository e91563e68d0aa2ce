#!/usr/bin/env bash
# anfora beside its peers in one run, on the peers' harness (../shared/reference/bench):
#   bash benches/python/run_peers.sh [numpy jax torch ...]      (default: numpy)
# Copies the peers' scripts to target/peer-bench (their directory is read-only), runs each
# named peer with $PY (a venv holding that framework; default .venv/bin/python), then
# bench_anfora.py against the release build in .venv, and writes the side-by-side tables to
# target/peer-bench/results/tables.md. Build first: maturin develop --release.
set -euo pipefail
cd "$(dirname "$0")/../.."
PEERS=${ANFORA_PEER_BENCH:-../shared/reference/bench}
WORK=target/peer-bench
PY=${PY:-.venv/bin/python}
PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")"  # absolute: the peers run in $WORK
rm -rf "$WORK" && mkdir -p "$WORK/results" "$WORK/logs"
cp "$PEERS"/*.py "$WORK"/
for fw in ${*:-numpy}; do
  echo "=== $fw ($(date +%T))"
  (cd "$WORK" && "$PY" "bench_$fw.py" > "logs/run_$fw.log" 2>&1) || { echo "    $fw failed: see $WORK/logs/run_$fw.log"; }
done
echo "=== anfora ($(date +%T))"
ANFORA_PEER_BENCH="$WORK" BENCH_RESULTS="$WORK/results" .venv/bin/python benches/python/bench_anfora.py | tee "$WORK/logs/run_anfora.log"
"$PY" "$WORK/report.py" --out "$WORK/results/tables.md"
echo "tables -> $WORK/results/tables.md"

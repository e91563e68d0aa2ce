"""anfora's row in the peers' benchmark tables (../shared/reference/bench, W1-W6).

    bash benches/python/run_peers.sh [numpy jax ...]     # anfora beside the peers, one run
    .venv/bin/python benches/python/bench_anfora.py      # anfora alone

It uses the peers' harness (`common.py`: thread pinning, quiet-machine gating, the JSON schema
`report.py` reads) and their shapes, data and initial weights, so the `check` column (the loss
of the first step, the sums of outputs) must agree with theirs. Build the package with
`maturin develop --release` first. W1 and W2 run the same source files as the Rust benchmarks
(`benches/workloads/`), so the "driven from Python" and "driven from Rust" figures time one
program.
"""

import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PEERS = os.environ.get("ANFORA_PEER_BENCH", os.path.join(REPO, "..", "shared", "reference", "bench"))
sys.path.insert(0, os.path.abspath(PEERS))

import common  # noqa: E402  (pins threads; must come before numpy)

if "BENCH_RESULTS" in os.environ:  # the peers' directory may be read-only
    common.RESULTS_DIR = os.environ["BENCH_RESULTS"]

import importlib.util  # noqa: E402
import json  # noqa: E402

import numpy as np  # noqa: E402
import workload_defs as wd  # noqa: E402
from common import (  # noqa: E402
    CNN_BATCH, MLP_BATCH, Recorder, check_sum, cold_runs, lenet_batch, lenet_params, measure,
    measure_once_each, mlp_batch, mlp_params, timed_once, w3_inputs, w4_input, w5_input,
)

import anfora  # noqa: E402

SCRATCH = tempfile.mkdtemp(prefix="anfora_bench_")
_modules = 0


def load(path_or_source, name=None):
    """Imports a workload file (or a source text, written to a scratch file so that anfora can
    read it back) as a fresh module."""
    global _modules
    _modules += 1
    if name is None:
        path = os.path.join(SCRATCH, f"w{_modules}.py")
        with open(path, "w") as f:
            f.write(path_or_source)
    else:
        path = path_or_source
    spec = importlib.util.spec_from_file_location(name or f"anfora_bench_w{_modules}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def one_hot(y):
    return np.eye(10, dtype=np.float32)[y]


# ------------------------------------------------------------------ W4 sources
# The peers' workload_defs functions written out (anfora compiles from source files; the
# constants are those of wd.LINE_CONSTS, c perturbs the first as the peers do).
def line50_source(c):
    lines = ["from anfora import ops", "", "def line50(x):"]
    for k, (a, b) in enumerate(wd.LINE_CONSTS):
        a = a + (c if k == 0 else 0.0)
        lines += [f"    x = x * {a!r}", f"    x = x + {b!r}", "    x = ops.sin(x)", "    x = x * x",
                  "    x = x - 0.5"]
    return "\n".join(lines + ["    return x", ""])


def ctrl_source(c):
    """benches/workloads/w4_ctrl.py (which the Rust benchmarks also run), each branch's first
    constant moved by c."""
    with open(os.path.join(REPO, "benches", "workloads", "w4_ctrl.py")) as f:
        src = f.read()
    src = src.replace("    x = x * 0.9\n", f"    x = x * {0.9 + c!r}\n", 1)
    return src.replace("    x = x * 1.2\n", f"    x = x * {1.2 + c!r}\n", 1)


SOURCES = {"ctrl": ctrl_source, "line50": line50_source}


def first_call_seconds(kind, c, v):
    f = anfora.jit(getattr(load(SOURCES[kind](c)), kind))
    t0 = time.perf_counter()
    f(v).numpy()
    return time.perf_counter() - t0


if len(sys.argv) == 3 and sys.argv[1] == "--cold":
    # A fresh process: the runtime initialised by one tiny op, then the first compile ever.
    v = anfora.tensor(w4_input())
    (v + 1).numpy()
    print(json.dumps({"s": first_call_seconds(sys.argv[2], 0.0, v)}))
    sys.exit(0)


def training_step(R, workload, file, params, batch, warmup, reps):
    """A training workload of benches/workloads (the file the Rust benchmark runs too), started
    from the peers' weights and batch: its first call (compile included) and its steps."""
    module = load(os.path.join(REPO, "benches", "workloads", file), "anfora_bench_" + workload)
    for p, value in zip(module.PARAMS, params):
        p.set_data(value)
    x, y = batch
    x, y = anfora.tensor(x), anfora.tensor(one_hot(y))
    step = anfora.jit(module.step)
    st, loss0 = timed_once(lambda: float(step(x, y)))
    R.add(workload, "jit step: compile+first call", st)
    R.add(workload, "jit(value_and_grad+SGD), in place", measure(lambda: float(step(x, y)), warmup=warmup, reps=reps),
          check=loss0, note="check=loss of step 1")


def main():
    R = Recorder("anfora")
    only = set(os.environ.get("BENCH_ONLY", "W1,W2,W3,W4,W5,W6").split(","))

    # -------------------------------------------------------------- W1 and W2 train steps
    if "W1" in only:
        training_step(R, "W1", "w1_mlp.py", mlp_params(), mlp_batch(MLP_BATCH), warmup=10, reps=50)
    if "W2" in only:
        training_step(R, "W2", "w2_lenet.py", lenet_params(), lenet_batch(CNN_BATCH), warmup=5, reps=30)

    # -------------------------------------------------------------- W3 dispatch
    if "W3" in only:
        a, b = (anfora.tensor(v) for v in w3_inputs())
        f3 = anfora.jit(load("def f3(x, y):\n    return x * y + 1\n").f3)
        R.add("W3", "jit, result synchronous", measure(lambda: f3(a, b), warmup=200, reps=30, inner=1000),
              unit="us", check=check_sum(f3(a, b)))
        R.add("W3", "eager (Tensor operators)", measure(lambda: a * b + 1, warmup=200, reps=30, inner=1000),
              unit="us", check=check_sum(a * b + 1))

    # -------------------------------------------------------------- W4 compile latency
    if "W4" in only:
        v = anfora.tensor(w4_input())
        for kind in ("ctrl", "line50"):
            R.add("W4", f"{kind}: first call, fresh process", cold_runs(__file__, kind, 5),
                  note="1st compile in a new process (imports excluded)")
            R.add("W4", f"{kind}: first call, fresh fn (warm process)",
                  measure_once_each(lambda i, k=kind: first_call_seconds(k, 1e-5 * (i + 1), v), reps=20))
            f = anfora.jit(getattr(load(SOURCES[kind](0.0)), kind))
            R.add("W4", f"{kind}: steady-state call", measure(lambda: f(v), warmup=10, reps=30, inner=20),
                  unit="us", check=check_sum(f(v)))

    # -------------------------------------------------------------- W5 elementwise chain
    if "W5" in only:
        x5 = anfora.tensor(w5_input())
        f5 = anfora.jit(load("from anfora import ops\n\ndef w5(x):\n"
                             "    return ops.tanh(x * 1.5 + 0.3) * ops.sigmoid(x) - x / 3\n").w5)
        R.add("W5", "jit: compile+first call", timed_once(lambda: f5(x5))[0])
        R.add("W5", "jit (fused)", measure(lambda: f5(x5), warmup=5, reps=30), check=check_sum(f5(x5)))

    # -------------------------------------------------------------- W6 inference
    if "W6" in only:
        fwd_src = ("from anfora import ops\n\ndef fwd(W1, b1, W2, b2, W3, b3, x):\n"
                   "    h = ops.relu(x @ W1 + b1)\n    h = ops.relu(h @ W2 + b2)\n    return h @ W3 + b3\n")
        fwd = anfora.jit(load(fwd_src).fwd)
        ps = [anfora.tensor(p) for p in mlp_params()]
        x1 = anfora.tensor(mlp_batch(1, seed=4)[0])
        x256 = anfora.tensor(mlp_batch(256, seed=5)[0])
        R.add("W6", "MLP fwd batch 1 (jit)", measure(lambda: fwd(*ps, x1), warmup=50, reps=30, inner=200),
              unit="us", check=check_sum(fwd(*ps, x1)))
        R.add("W6", "MLP fwd batch 256 (jit)", measure(lambda: fwd(*ps, x256), warmup=5, reps=30, inner=5),
              check=check_sum(fwd(*ps, x256)))

    R.save({"anfora": getattr(anfora, "__version__", ""), "build": "maturin develop --release",
            "threads": "rayon pool: the calling thread + one per other core"})


if __name__ == "__main__":
    main()

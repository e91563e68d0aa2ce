"""Deployment figures side by side (issue 26): the digits MLP and LeNet of
examples/train_digits.py at batch 1 and 360, one thread.

- anfora from C: benches/c/time_model (the C API, caller buffers), load + validate + plan and
  the run's median;
- onnxruntime from Python, on anfora's own ONNX export of the same network (one intra- and
  inter-op thread, sequential execution), session creation and the run's median.

    python benches/python/deploy_vs_ort.py TIME_MODEL_BINARY [OUT_DIR]
"""

import json
import os
import pathlib
import runpy
import statistics
import subprocess
import sys
import time

import numpy as np

import anfora

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = runpy.run_path(str(ROOT / "examples" / "train_digits.py"))


def median_us(fn, runs):
    for _ in range(runs // 10 + 10):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def ort_figures(path, x, runs):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    loads = []
    for _ in range(20):
        t0 = time.perf_counter()
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        loads.append(time.perf_counter() - t0)
    name = session.get_inputs()[0].name
    run = median_us(lambda: session.run(None, {name: x}), runs)
    return statistics.median(loads) * 1e6, run


def main():
    time_model = sys.argv[1]
    out = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "target/deploy-bench")
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in ["mlp", "lenet"]:
        net = EXAMPLE[name](0)
        for batch in [1, 360]:
            shape = (batch, 64) if name == "mlp" else (batch, 1, 8, 8)
            x = np.random.default_rng(0).random(shape, dtype=np.float32)
            model = out / f"{name}_b{batch}.anfora"
            onnx = out / f"{name}_b{batch}.onnx"
            anfora.export(net, anfora.tensor(x), file_name=model)
            anfora.export(net, anfora.tensor(x), file_name=onnx, file_format="onnx")
            runs = 20000 if batch == 1 else 1000
            line = subprocess.run([time_model, str(model), str(runs)], check=True,
                                  capture_output=True, text=True).stdout
            c = dict(kv.split("=") for kv in line.split())
            ort_load, ort_run = ort_figures(onnx, x, runs)
            rows.append({
                "model": name, "batch": batch,
                "anfora_c_us": float(c["run_median_us"]), "ort_py_us": ort_run,
                "anfora_load_us": float(c["load_us"]), "ort_load_us": ort_load,
            })
    print(f"{'model':8} {'batch':>5} {'anfora C':>10} {'ORT Py':>10} "
          f"{'ORT/anfora C':>13} {'load anfora':>12} {'load ORT':>10}")
    for r in rows:
        print(f"{r['model']:8} {r['batch']:5d} {r['anfora_c_us']:10.1f} "
              f"{r['ort_py_us']:10.1f} {r['ort_py_us'] / r['anfora_c_us']:13.2f} "
              f"{r['anfora_load_us']:12.1f} {r['ort_load_us']:10.1f}")
    (out / "results.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()

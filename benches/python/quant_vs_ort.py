"""Quantization figures side by side (issue 28): the digits MLP and LeNet of
examples/train_digits.py, trained, then

- anfora: `anfora.convert(..., quantize="int8")` (MinMax, per-channel weights, calibrated on
  718 training images) and `"weight-int8"`, timed from C at batch 360 on one thread
  (benches/c/time_model, the C API) against anfora's own float32 model;
- onnxruntime: `quantize_static` of anfora's ONNX export of the same network (QDQ, MinMax,
  per-channel int8 weights, uint8 activations, the same calibration images), timed from Python
  on one thread against ORT's float32 run of the same export;

and every model's test accuracy and file size.

    python benches/python/quant_vs_ort.py TIME_MODEL_BINARY [OUT_DIR] [EPOCHS]

TIME_MODEL_BINARY is benches/c/time_model.c built against the release runtime:
    cargo build --release -p anfora-runtime
    cc -O2 -Icrates/anfora-runtime/include benches/c/time_model.c \
        target/release/libanfora_runtime.a -lpthread -ldl -lm -o target/bench-c/time_model
"""

import io
import contextlib
import json
import os
import pathlib
import runpy
import subprocess
import sys

import numpy as np

import anfora

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = runpy.run_path(str(ROOT / "examples" / "train_digits.py"))
DEPLOY = runpy.run_path(str(ROOT / "benches" / "python" / "deploy_vs_ort.py"))
BATCH = 360


def ort_quantize(onnx_path, out_path, calibration, batch):
    from onnxruntime import quantization as q

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            self.batches = iter([calibration[i:i + batch]
                                 for i in range(0, len(calibration) - batch + 1, batch)])

        def get_next(self):
            x = next(self.batches, None)
            return None if x is None else {"x": x}

    q.quantize_static(str(onnx_path), str(out_path), Reader(), quant_format=q.QuantFormat.QDQ,
                      per_channel=True, activation_type=q.QuantType.QUInt8,
                      weight_type=q.QuantType.QInt8, calibrate_method=q.CalibrationMethod.MinMax)


def ort_session(path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def input_name(path):
    return ort_session(path).get_inputs()[0].name


def main():
    time_model = sys.argv[1]
    out = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "target/quant-bench")
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    out.mkdir(parents=True, exist_ok=True)
    data = EXAMPLE["load_digits"](0)
    rows = []
    for name in ["mlp", "lenet"]:
        net = EXAMPLE[name](0)
        (x_train, y_train), (x_test, y_test) = data
        if name == "lenet":
            x_train, x_test = x_train[:, None], x_test[:, None]
        with contextlib.redirect_stdout(io.StringIO()):
            EXAMPLE["train"](name, net, ((x_train, y_train), (x_test, y_test)), epochs, 32, 0)
        calibration = x_train[:2 * len(x_test)]
        x_time = np.random.default_rng(0).random((BATCH,) + x_test.shape[1:], dtype=np.float32)
        files = {}
        for tag, x in [("test", x_test), ("time", x_time)]:
            base = out / f"{name}_{tag}"
            anfora.export(net, anfora.TensorSpec(x.shape), file_name=f"{base}.anfora")
            anfora.export(net, anfora.TensorSpec(x.shape), file_name=f"{base}.onnx",
                          file_format="onnx")
            cal = calibration[: len(calibration) // len(x) * len(x)]
            anfora.convert(f"{base}.anfora", f"{base}_int8.anfora", quantize="int8",
                           calibration=calibration)
            anfora.convert(f"{base}.anfora", f"{base}_w8.anfora", quantize="weight-int8")
            ort_quantize(f"{base}.onnx", f"{base}_int8.onnx", cal, len(x))
            files[tag] = base
        base = files["test"]
        accuracy = {}
        for kind, path in [("anfora f32", f"{base}.anfora"), ("anfora int8", f"{base}_int8.anfora"),
                           ("anfora w8", f"{base}_w8.anfora")]:
            logits = anfora.load(path)(x_test).asnumpy()
            accuracy[kind] = (float(np.mean(logits.argmax(1) == y_test)), os.path.getsize(path))
        for kind, path in [("ORT f32", f"{base}.onnx"), ("ORT int8", f"{base}_int8.onnx")]:
            s = ort_session(path)
            logits = s.run(None, {s.get_inputs()[0].name: x_test})[0]
            accuracy[kind] = (float(np.mean(logits.argmax(1) == y_test)), os.path.getsize(path))
        base = files["time"]
        timing = {}
        for kind, path in [("anfora f32", f"{base}.anfora"), ("anfora int8", f"{base}_int8.anfora"),
                           ("anfora w8", f"{base}_w8.anfora")]:
            line = subprocess.run([time_model, path, "2000", "20"], check=True,
                                  capture_output=True, text=True).stdout
            timing[kind] = float(dict(kv.split("=") for kv in line.split())["run_median_us"])
        for kind, path in [("ORT f32", f"{base}.onnx"), ("ORT int8", f"{base}_int8.onnx")]:
            _, run = DEPLOY["ort_figures"](path, x_time, 2000)
            timing[kind] = run
        for kind in accuracy:
            rows.append({"model": name, "kind": kind, "accuracy": accuracy[kind][0],
                         "bytes": accuracy[kind][1], "us_b360": timing[kind]})
    print(f"{'model':6} {'kind':12} {'accuracy':>9} {'bytes':>8} {'µs b360':>9}")
    for r in rows:
        print(f"{r['model']:6} {r['kind']:12} {r['accuracy']:9.4f} {r['bytes']:8d} "
              f"{r['us_b360']:9.1f}")
    (out / "results.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()

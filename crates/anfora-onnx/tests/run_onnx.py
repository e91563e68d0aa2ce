"""Checks an exported ONNX model and runs it with onnxruntime.

    python run_onnx.py MODEL.onnx OUT_DIR NAME=INPUT.npy ...

Runs `onnx.checker.check_model(model, full_check=True)` (structure, types and shape
inference), then the model on the CPU provider with the given inputs, and writes output i as
OUT_DIR/output_i.npy. Exits non-zero with the reason on any failure.
"""

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort


def main(argv):
    model_path, out_dir = argv[0], argv[1]
    feeds = {}
    for item in argv[2:]:
        name, path = item.split("=", 1)
        feeds[name] = np.load(path)
    model = onnx.load(model_path)
    onnx.checker.check_model(model, full_check=True)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    outputs = session.run(None, feeds)
    for i, value in enumerate(outputs):
        np.save(os.path.join(out_dir, f"output_{i}.npy"), np.asarray(value))
    print(len(outputs))


if __name__ == "__main__":
    main(sys.argv[1:])

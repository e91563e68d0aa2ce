"""`mindspore.train.serialization`: checkpoints (anfora's safetensors files), and `export` /
`load` on anfora's model file, which stands for MINDIR (`docs/deployment.md`)."""

import anfora as _af
from anfora import load_checkpoint, load_param_into_net, save_checkpoint


def export(net, *inputs, file_name, file_format="MINDIR"):
    """Writes `net` for `inputs` as `file_name` + ".mindir" (anfora's model file: one file that
    the runtime, the C API and `load` read). ONNX writes `file_name` + ".onnx"."""
    formats = {"MINDIR": (".mindir", "anfora"), "ONNX": (".onnx", "onnx")}
    if file_format not in formats:
        raise ValueError(f"export: file_format must be 'MINDIR' or 'ONNX', not {file_format!r}")
    suffix, fmt = formats[file_format]
    path = file_name if file_name.endswith(suffix) else file_name + suffix
    return _af.export(net, *inputs, file_name=path, file_format=fmt)


def load(file_name):
    """Loads a model written by `export` (a graph to wrap in `nn.GraphCell` or to call)."""
    return _af.load(file_name)


__all__ = ["export", "load", "save_checkpoint", "load_checkpoint", "load_param_into_net"]

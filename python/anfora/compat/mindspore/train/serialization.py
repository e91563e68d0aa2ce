"""`mindspore.train.serialization`: checkpoints in MindSpore's own `.ckpt` format (or
safetensors, as MindSpore 2.3+ offers with `format="safetensors"`), and `export` / `load` on
anfora's model file, which stands for MINDIR (`docs/deployment.md`)."""

import os

import numpy as np

import anfora as _af

from . import _ckpt

# anfora's dtype names and MindSpore's checkpoint names for them.
_CKPT_TYPE = {"int8": "Int8", "uint8": "UInt8", "int32": "Int32", "int64": "Int64",
              "float16": "Float16", "float32": "Float32", "float64": "Float64", "bool": "Bool",
              "bfloat16": "BFloat16"}
_FLOATS = {"float16", "float32", "float64", "bfloat16"}
_INTS = {"int8", "int32", "int64"}


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


def _refuse_unsupported(what, enc_key, crc_check):
    if enc_key is not None:
        raise NotImplementedError(f"{what}: encrypted checkpoints (enc_key/dec_key) are not supported by anfora")
    if crc_check:
        raise NotImplementedError(f"{what}: crc_check=True is not supported by anfora")


def _check_format(what, format):
    if format not in ("ckpt", "safetensors"):
        raise ValueError(f"For '{what}', 'format' must be 'ckpt' or 'safetensors', but got {format!r}")


def _entries(save_obj, append_dict, choice_func):
    """`[(name, value)]` to save, as MindSpore collects them: a Cell's Parameters by name, or a
    list of `{"name": ..., "data": ...}` dicts (or a dict of name to value), then `append_dict`."""
    if isinstance(save_obj, dict):
        pairs = list(save_obj.items())
    elif isinstance(save_obj, list):
        pairs = []
        for item in save_obj:
            if not (isinstance(item, dict) and "name" in item and "data" in item):
                raise TypeError("For 'save_checkpoint', a list must hold dicts of 'name' and 'data', "
                                f"but got {item!r}")
            pairs.append((item["name"], item["data"]))
    elif isinstance(save_obj, _af.nn.Cell):
        pairs = [(p.name, p) for _, p in save_obj.parameters_and_names()]
    else:
        raise TypeError("For 'save_checkpoint', 'save_obj' must be a Cell, a list or a dict, "
                        f"but got {type(save_obj).__name__}")
    for key, value in (append_dict or {}).items():
        if not isinstance(key, str):
            raise TypeError(f"For 'save_checkpoint', the keys of 'append_dict' must be str, but got {key!r}")
        pairs.append((key, value))
    chosen = [(str(n), v) for n, v in pairs if choice_func is None or choice_func(str(n))]
    seen = set()
    for name, _ in chosen:
        if name in seen:
            raise ValueError(f"For 'save_checkpoint', two values are named '{name}': a checkpoint "
                             "keeps one value per name")
        seen.add(name)
    return chosen


def _array(name, value):
    """`(dims, tensor_type, bytes)` of a value as MindSpore writes it."""
    if isinstance(value, str):
        data = np.array(value)
        return [0], "str", data.astype(f"<U{max(len(value), 1)}").tobytes()
    if isinstance(value, bool):
        value = _af.tensor(np.array(value))
    elif isinstance(value, int):
        value = _af.tensor(np.array(value, dtype=np.int64))
    elif isinstance(value, float):
        value = _af.tensor(np.array(value, dtype=np.float32))
    tensor = value.value if isinstance(value, _af.Parameter) else value
    if not isinstance(tensor, _af.Tensor):
        raise TypeError(f"For 'save_checkpoint', '{name}' must be a Parameter, a Tensor, a number or a str, "
                        f"but got {type(value).__name__}")
    kind = tensor.dtype.name
    if kind not in _CKPT_TYPE:
        raise TypeError(f"For 'save_checkpoint', '{name}' is {kind}, which a checkpoint cannot hold")
    data = np.asarray(tensor.asnumpy(), order="C")  # (ascontiguousarray makes 0-d 1-d)
    if kind == "bfloat16":
        data = data.view(np.uint16)
    dims = [0] if data.ndim == 0 else list(data.shape)
    return dims, _CKPT_TYPE[kind], data.astype(data.dtype.newbyteorder("<"), copy=False).tobytes()


def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False, append_dict=None,
                    enc_key=None, enc_mode="AES-GCM", choice_func=None, crc_check=False,
                    format="ckpt", **kwargs):
    """Saves Parameters and values to `ckpt_file_name` (the suffix `.ckpt`, or `.safetensors`,
    added when missing): a file MindSpore's `load_checkpoint` reads. The file is written beside
    its name first and renamed, so a failed save leaves an older checkpoint whole. `async_save`
    saves before returning."""
    _check_format("save_checkpoint", format)
    _refuse_unsupported("save_checkpoint", enc_key, crc_check)
    if not isinstance(ckpt_file_name, (str, os.PathLike)):
        raise TypeError(f"For 'save_checkpoint', 'ckpt_file_name' must be a str, but got {type(ckpt_file_name).__name__}")
    path = os.fspath(ckpt_file_name)
    suffix = "." + format
    if not path.endswith(suffix):
        path += suffix
    entries = _entries(save_obj, append_dict, choice_func)
    if format == "safetensors":
        pairs = [(n, v if isinstance(v, (_af.Tensor, _af.Parameter)) else _af.tensor(np.asarray(v)))
                 for n, v in entries]
        return _af.save_checkpoint(pairs, path)
    data = _ckpt.encode([(name, *_array(name, value)) for name, value in entries])
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    temporary = path + ".part"
    with open(temporary, "wb") as f:
        f.write(data)
    os.replace(temporary, path)


def _is_safetensors(head):
    """A safetensors file: an 8-byte header length, then the JSON header."""
    return len(head) > 8 and head[8:9] == b"{"


def _wanted(name, specify_prefix, filter_prefix, choice_func):
    def prefixes(p):
        return () if p is None else ((p,) if isinstance(p, str) else tuple(p))

    if specify_prefix is not None and not name.startswith(prefixes(specify_prefix)):
        return False
    if filter_prefix is not None and name.startswith(prefixes(filter_prefix)):
        return False
    return choice_func is None or bool(choice_func(name))


def _parameter(name, dims, tensor_type, array):
    if isinstance(array, str):
        return array
    if tensor_type == "BFloat16":
        floats = (array.astype(np.uint32) << 16).view(np.float32)
        return _af.Parameter(_af.tensor(floats, dtype=_af.bfloat16), name=name)
    kind = array.dtype.name
    if kind not in _CKPT_TYPE:
        raise TypeError(f"For 'load_checkpoint', '{name}' is {tensor_type}, which anfora does not support")
    return _af.Parameter(_af.tensor(np.asarray(array, order="C")), name=name)


def load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None, dec_key=None,
                    dec_mode="AES-GCM", specify_prefix=None, choice_func=None, crc_check=False,
                    remove_redundancy=False, format="ckpt", **kwargs):
    """`{name: Parameter}` (a str for a saved string) of a MindSpore `.ckpt` file, or of a
    safetensors file, in file order. With `net`, also loaded into it (`load_param_into_net`).
    A malformed file is a ValueError naming the file and the byte or entry at fault."""
    _check_format("load_checkpoint", format)
    _refuse_unsupported("load_checkpoint", dec_key, crc_check)
    path = os.fspath(ckpt_file_name)
    if not os.path.isfile(path):
        raise ValueError(f"For 'load_checkpoint', the checkpoint file {path} does not exist")
    with open(path, "rb") as f:
        data = f.read()
    if format == "safetensors" or _is_safetensors(data[:9]):
        found = _af.load_checkpoint(path)
        params = {n: _af.Parameter(v, name=n) for n, v in found.items()
                  if _wanted(n, specify_prefix, filter_prefix, choice_func)}
    else:
        try:
            found = _ckpt.tensors(data)
        except _ckpt.CheckpointError as e:
            raise ValueError(f"{e}\nFor 'load_checkpoint', failed to load the checkpoint file {path}.") from None
        params = {n: _parameter(n, *entry) for n, entry in found.items()
                  if _wanted(n, specify_prefix, filter_prefix, choice_func)}
    if not params:
        raise ValueError("The loaded parameter dict is empty after filter or specify, please check "
                         "whether 'filter_prefix' or 'specify_prefix' are set correctly.")
    if net is not None:
        load_param_into_net(net, params, strict_load=strict_load)
    return params


def load_param_into_net(net, parameter_dict, strict_load=False, remove_redundancy=False):
    """Sets `net`'s Parameters (by name) from `parameter_dict`, as MindSpore does: a value of
    another float dtype (or another int dtype) is converted unless `strict_load`; another shape
    or kind of dtype is a RuntimeError, checked before anything changes. Returns
    `(Parameters not loaded, checkpoint entries not used)`."""
    if not isinstance(parameter_dict, dict):
        raise TypeError("For 'load_param_into_net', 'parameter_dict' must be a dict, "
                        f"but got {type(parameter_dict).__name__}")
    params = [p for _, p in net.parameters_and_names()]
    updates = []
    for p in params:
        if p.name not in parameter_dict or isinstance(parameter_dict[p.name], str):
            continue
        value = parameter_dict[p.name]
        value = value.value if isinstance(value, _af.Parameter) else _af.tensor(value) \
            if not isinstance(value, _af.Tensor) else value
        if tuple(value.shape) != tuple(p.shape):
            raise RuntimeError(
                f"For 'load_param_into_net', {p.name} in the argument 'net' should have the same shape "
                f"as {p.name} in the argument 'parameter_dict'. But got its shape {tuple(p.shape)} in the "
                f"argument 'net' and shape {tuple(value.shape)} in the argument 'parameter_dict'.")
        want, got = p.dtype.name, value.dtype.name
        if want != got:
            if strict_load or not ({want, got} <= _FLOATS or {want, got} <= _INTS):
                raise RuntimeError(
                    f"For 'load_param_into_net', {p.name} in the argument 'net' should have the same type "
                    f"as {p.name} in the argument 'parameter_dict'. but got its type {want} in the "
                    f"argument 'net' and type {got} in the argument 'parameter_dict'.")
            value = _af.ops.cast(value, p.dtype)
        updates.append((p, value))
    for p, value in updates:
        p.set_data(value)
    names = {p.name for p in params}
    not_loaded = [p.name for p in params if p.name not in parameter_dict]
    unused = [n for n in parameter_dict if n not in names]
    return not_loaded, unused


__all__ = ["export", "load", "save_checkpoint", "load_checkpoint", "load_param_into_net"]

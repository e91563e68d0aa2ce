"""MindSpore's `context`: `set_context(mode=..., device_target=..., save_graphs=...,
save_graphs_path=...)` and `get_context(key)`, mapped onto `anfora.set_context`.

Both modes compile: anfora always compiles Cells and functions marked `jit`, and evaluates the
rest eagerly, so PYNATIVE_MODE differs from GRAPH_MODE only in MindSpore's own debugging aids,
which are not reproduced (docs/mindspore.md)."""

import anfora as _af

GRAPH_MODE = 0
PYNATIVE_MODE = 1

_TARGETS = {"CPU": "cpu", "GPU": "cuda:0", "Ascend": None}
_context = {"mode": GRAPH_MODE, "device_target": "CPU", "device_id": 0, "save_graphs": False,
            "save_graphs_path": "."}


def set_context(**kwargs):
    """Sets the keys MindSpore's `set_context` has that anfora implements; a ValueError for
    the others (so that a script never silently runs with a setting it did not get)."""
    known = {"mode", "device_target", "device_id", "save_graphs", "save_graphs_path"}
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise ValueError(f"set_context: {', '.join(unknown)} not supported by anfora's MindSpore layer")
    mode = kwargs.get("mode", _context["mode"])
    if mode not in (GRAPH_MODE, PYNATIVE_MODE):
        raise ValueError(f"set_context: mode must be GRAPH_MODE or PYNATIVE_MODE, not {mode!r}")
    target = kwargs.get("device_target", _context["device_target"])
    if _TARGETS.get(target) is None:
        raise ValueError(f"set_context: device_target must be 'CPU' or 'GPU', not {target!r}")
    device_id = int(kwargs.get("device_id", _context["device_id"]))
    device = "cpu" if target == "CPU" else f"cuda:{device_id}"
    save = kwargs.get("save_graphs", _context["save_graphs"])
    level = {False: 0, True: 2}.get(save, save)
    _af.set_context(device=device, save_graphs=int(level),
                    save_graphs_path=kwargs.get("save_graphs_path", _context["save_graphs_path"]))
    _context.update(kwargs)
    _context.update(mode=mode, device_target=target, device_id=device_id)


def get_context(key):
    if key not in _context:
        raise ValueError(f"get_context: unknown key {key!r}")
    return _context[key]


__all__ = ["GRAPH_MODE", "PYNATIVE_MODE", "set_context", "get_context"]

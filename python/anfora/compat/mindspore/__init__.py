"""MindSpore 2.x's graph-mode API on anfora: `import anfora.compat.mindspore as ms` in place
of `import mindspore as ms` runs a script written against MindSpore's public API (the modules
`nn`, `ops`, `ops.operations`, `ops.composite`, `ops.functional`, `context`, `common`,
`common.dtype`, `train.serialization`, `dtype`). `install()` makes `import mindspore` itself
resolve here, for scripts that cannot be edited (opt-in). What maps to what, and what is not
reproduced, is in docs/mindspore.md."""

import sys as _sys

import anfora as _af

from . import _random, common, context, dataset, dtype, nn, ops, train
from .common import Parameter, ParameterTuple, Tensor
from .common.dtype import *  # noqa: F401,F403
from .context import GRAPH_MODE, PYNATIVE_MODE, get_context, set_context
from .train import LossMonitor, Model, TimeMonitor
from .train.serialization import export, load, load_checkpoint, load_param_into_net, save_checkpoint

jit = _af.jit
ms_function = _af.jit
grad = ops.grad
value_and_grad = ops.value_and_grad


def set_seed(seed):
    """The global seed: anfora's generator (random operations), the layers' initializers and
    the datasets' order."""
    _af.set_seed(seed)
    _random.reseed(seed)
    dataset.config.set_seed(seed)


class _GraphCell(nn.Cell):
    """`nn.GraphCell(graph)`: a Cell running a model loaded by `load`."""

    def __init__(self, graph):
        self.graph = graph

    def __call__(self, *inputs):
        return self.graph(*inputs)


nn.GraphCell = _GraphCell

_MODULES = {
    "": __name__, "nn": f"{__name__}.nn", "ops": f"{__name__}.ops",
    "ops.operations": f"{__name__}.ops.operations", "ops.composite": f"{__name__}.ops.composite",
    "ops.functional": f"{__name__}.ops.functional", "context": f"{__name__}.context",
    "common": f"{__name__}.common", "common.dtype": f"{__name__}.common.dtype",
    "common.tensor": f"{__name__}.common.tensor", "common.parameter": f"{__name__}.common.parameter",
    "common.initializer": f"{__name__}.common.initializer",
    "train": f"{__name__}.train", "train.serialization": f"{__name__}.train.serialization",
    "train.model": f"{__name__}.train.model", "train.callback": f"{__name__}.train.callback",
    "dtype": f"{__name__}.dtype",
    "dataset": f"{__name__}.dataset", "dataset.config": f"{__name__}.dataset.config",
    "dataset.transforms": f"{__name__}.dataset.transforms",
    "dataset.vision": f"{__name__}.dataset.vision",
}


def install():
    """Makes `import mindspore` (and `mindspore.nn`, `mindspore.ops.operations`, ...) resolve to
    this module: for scripts that cannot be edited. Refused where a real MindSpore is already
    imported."""
    existing = _sys.modules.get("mindspore")
    if existing is not None and existing is not _sys.modules[__name__]:
        raise RuntimeError("install(): a real mindspore is already imported in this process")
    for short, full in _MODULES.items():
        _sys.modules["mindspore" + ("." + short if short else "")] = _sys.modules[full]


__all__ = ["nn", "ops", "context", "common", "dataset", "dtype", "train", "Tensor", "Parameter",
           "ParameterTuple", "GRAPH_MODE", "PYNATIVE_MODE", "set_context", "get_context", "jit",
           "ms_function", "set_seed", "export", "load", "save_checkpoint", "load_checkpoint",
           "load_param_into_net", "install", "grad", "value_and_grad", "Model", "LossMonitor",
           "TimeMonitor"] + list(common.dtype.__all__)

"""The generator the layers' initializers draw from, restarted by `set_seed`."""

import numpy as _np

_state = {"rng": _np.random.default_rng(0)}


def generator():
    return _state["rng"]


def reseed(seed):
    _state["rng"] = _np.random.default_rng(seed)

"""`mindspore.dataset.config`: the seed of the datasets' random order."""

import numpy as _np

_state = {"seed": 0, "rng": _np.random.default_rng(0)}


def set_seed(seed):
    """Restarts the generator every shuffle draws from."""
    _state["seed"] = int(seed)
    _state["rng"] = _np.random.default_rng(int(seed))


def get_seed():
    return _state["seed"]


def _generator():
    return _state["rng"]

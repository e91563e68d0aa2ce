"""Training on several processes over MPI (OpenMPI).

Start the program with ``mpirun -np N python train.py``; every process calls ``init()`` first::

    from anfora import distributed as dist, nn, ops

    dist.init()
    step = nn.TrainOneStepCell(loss_net, optimizer, data_parallel=True)
    loss = step(my_shard_of_x, my_shard_of_y)   # the mean loss over every process's shard

The collectives are primitives (``ops.all_reduce``, ``ops.all_gather``, ``ops.broadcast``,
``ops.reduce_scatter``): they run eagerly and in compiled code, where they are ordered on a
communication chain of their own, so every process issues them in program order. A
collective that waits longer than the timeout raises RuntimeError instead of hanging. A
process that ends with an unhandled exception stops every process of the job (MPI_Abort),
after printing which rank raised what.
"""

import atexit as _atexit
import os as _os
import sys as _sys

from . import _anfora
from . import ops as _ops

__all__ = [
    "init",
    "is_initialized",
    "rank",
    "size",
    "barrier",
    "all_reduce",
    "all_gather",
    "broadcast",
    "reduce_scatter",
    "gather_values",
    "finalize",
    "abort",
]

_state = {"started": False, "rank": 0, "size": 1}

DEFAULT_TIMEOUT = 300.0


def init(timeout=None):
    """Starts MPI and joins the job's process group. ``timeout`` (seconds; default
    ``$ANFORA_DIST_TIMEOUT`` or 300) bounds how long one collective waits for the other
    processes. Calling it again does nothing."""
    if _state["started"]:
        return
    if timeout is None:
        timeout = float(_os.environ.get("ANFORA_DIST_TIMEOUT", DEFAULT_TIMEOUT))
    r, n = _anfora.dist_init(float(timeout))
    _state.update(started=True, rank=r, size=n)
    _atexit.register(finalize)
    _stop_all_on_unhandled_exceptions()


def is_initialized():
    return _state["started"]


def rank():
    """This process's index in the group (0 before ``init``)."""
    return _state["rank"]


def size():
    """The number of processes (1 before ``init``)."""
    return _state["size"]


def barrier():
    """Returns once every process has called it."""
    _anfora.dist_barrier()


def all_reduce(x, op="sum"):
    """``ops.all_reduce``: ``x`` (a tensor, or a tuple of tensors) summed, averaged
    (``"mean"``) or maximized (``"max"``) over every process."""
    return _ops.all_reduce(x, op)


def all_gather(x, axis=0):
    """``ops.all_gather``: every process's ``x`` concatenated in rank order along ``axis``."""
    return _ops.all_gather(x, axis)


def broadcast(x, root=0):
    """``ops.broadcast``: process ``root``'s ``x`` on every process."""
    return _ops.broadcast(x, root)


def reduce_scatter(x, axis=0):
    """``ops.reduce_scatter``: this process's block of the sum of every process's ``x``."""
    return _ops.reduce_scatter(x, axis)


def gather_values(value):
    """Every process's Python float (a loss, for logging), as a list in rank order."""
    import numpy as np

    from . import tensor

    t = tensor(np.asarray([float(value)], dtype=np.float64))
    return [float(v) for v in np.asarray(_ops.all_gather(t, 0))]


def finalize():
    """Ends MPI (registered to run at exit). After a collective timed out it aborts the job
    instead, since the other processes may never arrive."""
    if _state["started"]:
        _state["started"] = False
        _anfora.dist_finalize()


def abort(code=1):
    """Stops every process of the job with exit status ``code``."""
    _anfora.dist_abort(int(code))


def _stop_all_on_unhandled_exceptions():
    previous = _sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        _sys.stderr.write(
            f"anfora.distributed: rank {rank()} of {size()} stopped with "
            f"{kind.__name__}: {value}; stopping every process\n"
        )
        _sys.stderr.flush()
        abort(1)

    _sys.excepthook = hook

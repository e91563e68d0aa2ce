"""anfora oracle: a numpy-backed reference of the part of anfora's Python API
that the differential corpus (tests/corpus) uses. It *defines* the semantics
the compiler must reproduce; see _core.py and ops.py for the details."""

from ._core import DType, Tensor, bool_, float16, float32, float64, int32, int64
from . import ops
from ._state import Parameter, set_seed

__all__ = [
    "DType",
    "Tensor",
    "bool_",
    "float16",
    "float32",
    "float64",
    "int32",
    "int64",
    "ops",
    "Parameter",
    "set_seed",
]

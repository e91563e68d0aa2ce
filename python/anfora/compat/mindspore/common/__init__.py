"""`mindspore.common`: dtypes, Tensor, Parameter."""

from . import dtype
from .parameter import Parameter, ParameterTuple
from .tensor import Tensor

__all__ = ["dtype", "Parameter", "ParameterTuple", "Tensor"]

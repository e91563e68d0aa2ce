"""`mindspore.common`: dtypes, Tensor, Parameter."""

from . import dtype, initializer
from .parameter import Parameter, ParameterTuple
from .tensor import Tensor

__all__ = ["dtype", "initializer", "Parameter", "ParameterTuple", "Tensor"]

"""MindSpore's `Parameter` and `ParameterTuple`: anfora's."""

from anfora import Parameter
from anfora.nn import ParameterTuple

__all__ = ["Parameter", "ParameterTuple"]

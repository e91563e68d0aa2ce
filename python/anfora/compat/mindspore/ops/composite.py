"""`mindspore.ops.composite` (`C`): `GradOperation`, anfora's, which works on functions and
Cells, in Python and inside `construct`."""

from anfora import GradOperation

__all__ = ["GradOperation"]

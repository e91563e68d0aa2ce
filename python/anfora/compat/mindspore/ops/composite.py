"""`mindspore.ops.composite` (`C`): `GradOperation`, anfora's, which works on functions and
Cells, in Python and inside `construct`."""

from anfora import GradOperation as _GradOperation
from anfora import grad as _grad


class GradOperation(_GradOperation):
    """anfora's `GradOperation` with MindSpore's rule for integer inputs: their gradients are
    computed as for floats and cast to their dtype at every value (`integers="cast"`)."""

    def __call__(self, fn, weights=None):
        return _grad(fn, self.argnums, weights, self.sens_param, "cast")


__all__ = ["GradOperation"]

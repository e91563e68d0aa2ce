"""`mindspore.ops`: the functional operations (anfora's `ops`), the primitive classes
(`operations`, `P`), `composite` (`C`) and `functional` (`F`)."""

from anfora.ops import *  # noqa: F401,F403
from anfora.ops import __all__ as _functions

# MindSpore's signatures and results where they differ from anfora's (numpy's) ops.
from ._mindspore import *  # noqa: F401,F403,E402
from ._mindspore import __all__ as _mindspore_functions

from . import composite, functional, operations
from .composite import GradOperation
from .functional import grad, value_and_grad
from .operations import Primitive



def print_(*input_x):
    """MindSpore's `ops.print_`: `Print()` of the inputs, each on a line of its own."""
    operations.Print()(*input_x)


__all__ = sorted(set(_functions) | set(_mindspore_functions)) + ["composite", "functional", "operations", "GradOperation", "grad",
                              "value_and_grad", "Primitive", "print_"]

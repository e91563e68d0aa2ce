"""anfora: a deep-learning graph compiler. Python functions are compiled from their source
into a MindIR-style functional graph IR, specialized for their argument types, optimized and
run by a compiled executor.

    import anfora
    from anfora import ops

    @anfora.jit
    def f(x, y):
        return ops.sum(ops.tanh(x @ y))

    f(x, y)          # compiles on the first call for these shapes and dtypes, then runs
    f.grad(x, y)     # gradients with respect to the float tensor arguments
"""

import inspect as _inspect

from . import _anfora
from ._anfora import (
    CompileError,
    GradFunction,
    Lowered,
    Parameter,
    Tensor,
    bool_,
    float32,
    float64,
    int32,
    int64,
    mutable,
    set_context,
    tensor,
)
from ._anfora import Function
from ._anfora import dtype
from . import ops

__version__ = "0.1.0"


class TensorSpec:
    """The type of a tensor argument, for typed signatures (seed 002):
    `def f(x: anfora.TensorSpec((2, 3), anfora.float32))` compiles when decorated, and a call
    with another shape or dtype raises TypeError."""

    __anfora_tensor_spec__ = True

    def __init__(self, shape, dtype=float32):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype

    def matches(self, value):
        return (
            isinstance(value, Tensor)
            and tuple(value.shape) == self.shape
            and value.dtype == self.dtype
        )

    def example(self):
        import numpy as _np

        return tensor(_np.zeros(self.shape, dtype=self.dtype.name))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r})"

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))


def _specs_of(fn):
    """The TensorSpecs of a function whose parameters (after `self`) are all annotated, and
    whether it is a method."""
    try:
        params = list(_inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None, False
    is_method = bool(params) and params[0].name == "self"
    if is_method:
        params = params[1:]
    specs = [p.annotation for p in params]
    if specs and all(isinstance(s, TensorSpec) for s in specs):
        return specs, is_method
    return None, is_method


def jit(fn=None):
    """Compiles `fn` on its first call for each argument signature (tensors by dtype and
    shape, Python numbers by value unless wrapped in `anfora.mutable`). Works on functions and
    on methods (bound on attribute access). With every parameter annotated by a TensorSpec,
    a function compiles at decoration time (a method when first bound and called) and rejects
    calls of another type."""
    if fn is None:
        return jit
    specs, is_method = _specs_of(fn)
    f = _anfora.jit(fn, specs)
    if specs is not None and not is_method:
        f.lower(*[s.example() for s in specs])
    return f


def grad(fn, argnums=0, weights=None):
    """The gradient of `fn` (a scalar function) with respect to the arguments in `argnums`
    (an int, a tuple of ints, or None) and the Parameters in `weights`. With weights the
    result is `(argument gradients, weight gradients)`."""
    return jit(fn)._grad_transform(argnums, weights, False)


def value_and_grad(fn, argnums=0, weights=None):
    """Like `grad`, returning `(fn(*args), gradients)`."""
    return jit(fn)._grad_transform(argnums, weights, True)


grad.__anfora_prim__ = "grad"
value_and_grad.__anfora_prim__ = "value_and_grad"


def parameters_of(obj):
    """The Parameters an object holds, as `[(path, Parameter)]` in attribute order."""
    return _anfora.parameters_of(obj)


from . import nn  # noqa: E402  (uses grad/value_and_grad above)

__all__ = [
    "CompileError",
    "Function",
    "GradFunction",
    "Lowered",
    "Parameter",
    "Tensor",
    "TensorSpec",
    "bool_",
    "dtype",
    "float32",
    "float64",
    "grad",
    "int32",
    "int64",
    "jit",
    "mutable",
    "nn",
    "ops",
    "parameters_of",
    "set_context",
    "tensor",
    "value_and_grad",
]

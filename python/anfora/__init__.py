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
import os as _os

from . import _anfora
from ._anfora import (
    CompileError,
    GradFunction,
    Lowered,
    Parameter,
    Tensor,
    bfloat16,
    bool_,
    devices,
    float16,
    float32,
    float64,
    get_device,
    int8,
    int32,
    int64,
    mutable,
    set_context,
    set_seed,
    tensor,
    uint8,
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
    shape, Python numbers by value unless wrapped in `anfora.mutable`). Works on functions, on
    methods (bound on attribute access) and on Cells (their `construct`, so `grad(net, ...)`
    and `GradOperation(...)(net, weights)` take a network as MindSpore's do). With every parameter annotated by a TensorSpec,
    a function compiles at decoration time (a method when first bound and called) and rejects
    calls of another type."""
    if fn is None:
        return jit
    from . import nn as _nn  # nn imports this module

    if isinstance(fn, _nn.Cell):
        # A Cell is its compiled `construct`, bound to it (MindSpore's grad of a network).
        return fn.compiled()
    if getattr(fn, "__anfora_op__", None) is not None:
        fn = ops._as_function(fn.__anfora_op__)
    if isinstance(fn, _anfora.GradFunction):
        # `grad(grad(f))`: a function calling the inner transform inside compiled code.
        from ._higher import compiled_gradient

        fn = compiled_gradient(fn, grad, value_and_grad, _anfora.GradFunction)
    specs, is_method = _specs_of(fn)
    f = _anfora.jit(fn, specs)
    if specs is not None and not is_method:
        f.lower(*[s.example() for s in specs])
    return f


def _cast_integers(integers):
    if integers not in ("zero", "cast"):
        raise ValueError(f"integers must be 'zero' or 'cast', got {integers!r}")
    return integers == "cast"


def grad(fn, argnums=0, weights=None, sens_param=False, integers="zero", has_aux=False):
    """The gradient of `fn` with respect to the arguments in `argnums` (an int, a tuple of
    ints, None for no argument, or `...` for every argument) and the Parameters in `weights`.
    With weights the result is `(argument gradients, weight gradients)`. `fn` returns a
    scalar, or with `sens_param=True` anything: the gradient function then takes the output's
    sensitivity (shaped like the output) as an extra last argument. Integer tensors get a
    zero gradient; `integers="cast"` gives them MindSpore's instead (every integer value's
    sensitivity computed as for floats and cast, truncating, to its dtype). With
    `has_aux=True`, `fn` returns a pair `(value, aux)`: only the value is differentiated and
    the result is `(gradients, aux)`, as in JAX."""
    return jit(fn)._grad_transform(argnums, weights, False, sens_param,
                                   _cast_integers(integers), bool(has_aux))


def value_and_grad(fn, argnums=0, weights=None, sens_param=False, integers="zero",
                   has_aux=False):
    """Like `grad`, returning `(fn(*args), gradients)`; with `has_aux=True`,
    `((value, aux), gradients)`."""
    return jit(fn)._grad_transform(argnums, weights, True, sens_param,
                                   _cast_integers(integers), bool(has_aux))


grad.__anfora_prim__ = "grad"
value_and_grad.__anfora_prim__ = "value_and_grad"

from ._transforms import jvp, vjp  # noqa: E402  (use jit and grad above)


class GradOperation:
    """MindSpore's gradient transform: `GradOperation(get_all, get_by_list, sens_param)(fn)`
    or `(fn, weights)` returns the gradient function of `fn`:

    - by default, the gradient with respect to the first argument;
    - `get_all=True`: a tuple, one gradient per argument;
    - `get_by_list=True`: the gradients of the Parameters in `weights` (a tuple); with
      `get_all` as well, `(argument gradients, weight gradients)`;
    - `sens_param=True`: the gradient function takes the output's sensitivity as its last
      argument instead of differentiating a scalar.

    It works in Python and inside compiled code (a Cell's `construct`)."""

    def __init__(self, get_all=False, get_by_list=False, sens_param=False):
        self.get_all = bool(get_all)
        self.get_by_list = bool(get_by_list)
        self.sens_param = bool(sens_param)
        # `...` is every argument.
        self.argnums = ... if self.get_all else (None if self.get_by_list else 0)

    def __call__(self, fn, weights=None):
        # One straight line, so that it also compiles inside a Cell's construct, where `fn`
        # and `weights` are passed in.
        return grad(fn, self.argnums, weights, self.sens_param)

    def __repr__(self):
        return (
            f"GradOperation(get_all={self.get_all}, get_by_list={self.get_by_list}, "
            f"sens_param={self.sens_param})"
        )


def parameters_of(obj):
    """The Parameters an object holds, as `[(path, Parameter)]` in attribute order."""
    return _anfora.parameters_of(obj)


def _as_tensor(value):
    """The tensor a checkpoint stores for a Parameter, Tensor or array-like value."""
    if isinstance(value, Parameter):
        return value.value
    return value if isinstance(value, Tensor) else tensor(value)


def _named_parameters(obj):
    """`[(name, Parameter or Tensor)]` of a Cell or object, a dict, or a list of pairs."""
    if isinstance(obj, dict):
        return list(obj.items())
    if isinstance(obj, (list, tuple)):
        pairs = list(obj)
        if all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in pairs):
            return pairs
        raise TypeError("save_checkpoint takes a Cell (or any object holding Parameters), a dict or a list of (name, Parameter) pairs")
    return parameters_of(obj)


def save_checkpoint(obj, path, metadata=None):
    """Saves the Parameters of `obj` (a Cell or any object holding Parameters, found by
    attribute path as `parameters_and_names` does; or a dict / list of (name, value) pairs of
    Parameters and Tensors) to a safetensors file at `path`, with optional string metadata.
    The file is written next to `path` first and renamed, so a failed save leaves the old
    checkpoint intact."""
    tensors = [(str(name), _as_tensor(value)) for name, value in _named_parameters(obj)]
    meta = None if metadata is None else {str(k): str(v) for k, v in metadata.items()}
    _anfora.save_safetensors(_os.fspath(path), tensors, meta)


def load_checkpoint(path, net=None, strict=False):
    """The tensors of a checkpoint file as a dict `{name: Tensor}` (in the order they were
    saved). With `net`, they are also loaded into its Parameters (see `load_param_into_net`)."""
    tensors, _ = _anfora.load_safetensors(_os.fspath(path))
    params = dict(tensors)
    if net is not None:
        load_param_into_net(net, params, strict=strict)
    return params


def load_checkpoint_metadata(path):
    """The string metadata saved with a checkpoint."""
    return _anfora.load_safetensors_metadata(_os.fspath(path))


def load_param_into_net(net, parameter_dict, strict=False):
    """Sets each Parameter of `net` (by attribute path) from `parameter_dict`. Every shape and
    dtype is checked before any Parameter changes, so a mismatch leaves the network as it was.
    Returns `(parameters not loaded, checkpoint names not used)`; with `strict=True` either
    being non-empty is a ValueError."""
    params = parameters_of(net)
    names = {name for name, _ in params}
    updates = []
    for name, p in params:
        if name not in parameter_dict:
            continue
        value = _as_tensor(parameter_dict[name])
        if tuple(value.shape) != tuple(p.shape) or value.dtype != p.dtype:
            raise ValueError(
                f"checkpoint entry '{name}' is a {value.dtype.name} tensor of shape {tuple(value.shape)}, "
                f"but the Parameter is {p.dtype.name} of shape {tuple(p.shape)}; nothing was loaded"
            )
        updates.append((p, value))
    not_loaded = [name for name, _ in params if name not in parameter_dict]
    unused = [name for name in parameter_dict if name not in names]
    if strict and (not_loaded or unused):
        raise ValueError(
            f"checkpoint does not match the network: Parameters missing from it {not_loaded}, "
            f"entries the network does not have {unused}; nothing was loaded"
        )
    for p, value in updates:
        p.set_data(value)
    return not_loaded, unused


from ._anfora import Model, load  # noqa: E402


def _compiled_of(net):
    """The compiled function behind a Function, a Cell (its `construct`) or a plain function."""
    if isinstance(net, Function):
        return net
    compiled = getattr(net, "compiled", None)
    if callable(compiled) and isinstance(net, nn.Cell):
        return compiled()
    if callable(net):
        return jit(net)
    raise TypeError(f"export takes a compiled function, a Cell or a function, not {type(net).__name__}")


def _example(value):
    """A TensorSpec becomes a tensor of its shape and dtype (its values do not matter)."""
    if isinstance(value, TensorSpec):
        return ops.zeros(value.shape, dtype=value.dtype)
    return value


def export(net, *inputs, file_name, file_format="anfora"):
    """Compiles `net` (a Cell, a compiled function or a function) for `inputs` (tensors,
    arrays or TensorSpecs; Python numbers are fixed at their values) and writes the model
    file `file_name`: the optimized graphs, with control flow, loops and recursion still as
    graphs, the dtype and shape of each tensor, and the Parameters' values. `anfora.load`,
    `anfora run-model` and the C runtime (`libanfora_runtime`) run it. `file_format="onnx"`
    writes ONNX instead (programs without recursion or escaping closures). Returns the
    file's size in bytes."""
    f = _compiled_of(net)
    args = tuple(_example(v) for v in inputs)
    names = _anfora.parameters_of(net) if isinstance(net, nn.Cell) else None
    return f._export(_os.fspath(file_name), *args, format=str(file_format), names=names)


def convert(model_file, file_name, quantize=None, calibration=None, method="minmax",
            per_tensor=False):
    """The offline converter (`anfora convert`): reads the model file `model_file`, quantizes
    it and writes `file_name`. `quantize` is None, `"int8"` (uint8 activations and int8
    weights, integer products; needs `calibration`) or `"weight-int8"` (int8 weights, float32
    activations). `calibration` is an array (a one-input model) or a sequence of arrays, one
    per model input, with samples along the first axis (cut into the model's batches);
    `method` chooses activation ranges: `"minmax"`, `"percentile"` or `"kl"`. Weights are
    quantized per output channel unless `per_tensor`. Returns the report: each change, what
    stayed float32 and why, and the sizes."""
    if calibration is None:
        arrays = []
    elif isinstance(calibration, (list, tuple)):
        arrays = list(calibration)
    else:
        arrays = [calibration]
    data, report = _anfora.convert_model(
        _os.fspath(model_file), quantize=quantize, calibration=arrays, method=str(method),
        per_tensor=bool(per_tensor))
    with open(_os.fspath(file_name), "wb") as f:
        f.write(data)
    return report


def quantize(model_file, file_name, calibration, method="minmax", per_tensor=False):
    """`convert(model_file, file_name, quantize="int8", calibration=...)`: full int8
    post-training quantization from calibration data."""
    return convert(model_file, file_name, quantize="int8", calibration=calibration,
                   method=method, per_tensor=per_tensor)


from . import nn  # noqa: E402  (uses grad/value_and_grad above)
from . import distributed  # noqa: E402

class placement:
    """`with anfora.placement("cuda:0"):` places operations on a device (seed 002, OneFlow's
    `flow.scope.placement`). Inside compiled code, the operations written in the block run on
    that device (the compiler copies values between devices, and their gradients run there
    too); outside, the block sets the device functions compiled within it run on. OneFlow's
    form `placement("cuda", "0:1")` (device type, then `machine:device`) is accepted."""

    def __init__(self, device, ids=None):
        if ids is not None:
            machine, _, index = str(ids).partition(":")
            if machine != "0" or not index.isdigit():
                raise ValueError(
                    f"placement({device!r}, {ids!r}): one device of this machine, as '0:N'")
            device = f"{device}:{index}"
        self.device = device

    def __enter__(self):
        self._saved = get_device()
        set_context(device=self.device)
        return self

    def __exit__(self, *exc):
        set_context(device=self._saved)
        return False

    def __repr__(self):
        return f"placement({self.device!r})"


__all__ = [
    "CompileError",
    "Function",
    "GradFunction",
    "GradOperation",
    "Lowered",
    "Model",
    "Parameter",
    "Tensor",
    "TensorSpec",
    "bool_",
    "dtype",
    "float32",
    "float64",
    "grad",
    "bfloat16",
    "devices",
    "export",
    "float16",
    "get_device",
    "placement",
    "int8",
    "convert",
    "quantize",
    "int32",
    "int64",
    "jit",
    "jvp",
    "load",
    "load_checkpoint",
    "load_checkpoint_metadata",
    "load_param_into_net",
    "mutable",
    "nn",
    "ops",
    "parameters_of",
    "save_checkpoint",
    "set_seed",
    "set_context",
    "tensor",
    "uint8",
    "value_and_grad",
    "vjp",
]

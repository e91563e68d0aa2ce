"""Compiled functions and gradients called from Python with objects among their arguments.

A Cell, a function or any other object that is not data cannot be passed to compiled code as a
value, but compiled code can hold it as a constant. A call with such arguments compiles a small
function whose globals are those objects and whose parameters are the other arguments, and
which calls the same function (or the same gradient transform) inside compiled code:
`def call(p_x): return transform(target, ...)(net, p_x)`. There the objects are
known: their methods, sub-objects and Parameters are read as `self`'s are, and a gradient
differentiates through them, the Parameters they reach found as weights. One function is made
per target, options and objects (by identity), and kept while the target lives
(`anfora/_generated.py`)."""

import inspect

import numpy as np

from ._generated import calling, cached


def _is_data(value):
    """Whether compiled code takes `value` as an argument (else it is an object)."""
    from . import Tensor, mutable

    data = (type(None), bool, int, float, str, tuple, list, dict, np.ndarray, np.generic, Tensor)
    return isinstance(value, data) or isinstance(value, type(mutable(0)))


def call_with_objects(target, spec, args, kwargs, error):
    """Calls `target` (a function, or with `spec` the GradFunction whose `_spec` it is) with
    `args` and `kwargs`, the objects among them as constants; re-raises `error` (why the
    arguments could not be passed) where none is an object."""
    if spec is None:
        func, bound = target
        options = None
    else:
        func, bound, argnums, weights, value, sens, integers, has_aux = spec
        options = (argnums, weights, value, sens, integers, has_aux)
    sensitivity = ()
    if options is not None and options[3]:
        args, sensitivity = args[:-1], args[-1:]
    params = list(inspect.signature(func).parameters.values())
    if bound is not None:
        params = params[1:]
    if any(p.kind != p.POSITIONAL_OR_KEYWORD for p in params):
        raise error
    try:
        values = inspect.Signature(params).bind(*args, **(kwargs or {})).arguments
    except TypeError:
        raise error from None
    values = [values.get(p.name, p.default) for p in params]
    objects = {i: v for i, v in enumerate(values) if not _is_data(v)}
    if not objects:
        raise error
    _check(options, objects, params)
    key = ("objects", id(bound), tuple((i, id(v)) for i, v in sorted(objects.items())),
           None if options is None else _options_key(options))
    generated = cached(func, key, lambda: (_generate(func, bound, params, objects, options),
                                           (bound, objects)))
    rest = [v for i, v in enumerate(values) if i not in objects]
    return generated(*rest, *sensitivity)


def _options_key(options):
    argnums, weights, value, sens, integers, has_aux = options
    weights = None if weights is None else tuple(map(id, weights))
    return argnums, weights, value, sens, integers, has_aux


def _check(options, objects, params):
    if options is None:
        return
    argnums, weights = options[0], options[1]
    if isinstance(argnums, str) or isinstance(weights, str):
        raise TypeError(
            "a gradient that picks its arguments or Parameters when called (`f.grad`, a "
            "method's `.grad`) cannot take objects as arguments; use `anfora.grad(f, "
            "argnums=..., weights=...)`")
    positions = (range(len(params)) if argnums is Ellipsis else
                 () if argnums is None else
                 (argnums,) if isinstance(argnums, int) else argnums)
    for i in positions:
        if i in objects:
            raise TypeError(
                f"argnums {i} is '{params[i].name}', a {type(objects[i]).__name__} object: "
                "differentiate its Parameters with `weights=` (e.g. "
                "`weights=net.trainable_params()`)")


def _generate(func, bound, params, objects, options):
    """The compiled function calling `func` (or its gradient) with `objects` as constants."""
    from . import grad, jit, value_and_grad

    name = getattr(func, "__name__", "function")
    label = f"{getattr(func, '__qualname__', name)} with objects"
    if options is None:
        made = calling(func, bound, params, f"{name}_with_objects", label, constants=objects)
    else:
        argnums, weights, value, sens, integers, has_aux = options
        made = calling(func, bound, params, f"{name}_with_objects", label,
                       value_and_grad if value else grad,
                       (argnums, weights, sens, integers, has_aux), objects)
    return jit(made)

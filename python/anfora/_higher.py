"""Gradients of gradient functions from Python: `anfora.grad(anfora.grad(f))`.

A `GradFunction` is not itself compiled code, so `grad` of one compiles a plain function that
calls the same transform inside compiled code (where `grad(grad(f))` is differentiated like any
other program): `def gradient(x, y): return grad(f, argnums, weights, sens)(x, y)`, with `f`'s
own parameter names. Its source is registered in `linecache` under a name of its own, so the
compiler reads it as it reads any function and errors point at it."""

import inspect
import itertools
import linecache

_COUNTER = itertools.count()


def _refuse(why):
    raise TypeError(
        f"grad of this gradient function is not supported: {why}; write the composition in a "
        "function, e.g. `def d2(x): return anfora.grad(anfora.grad(f))(x)`, and call or jit it"
    )


def compiled_gradient(gf, grad, value_and_grad, grad_function_type):
    """A Python function computing what GradFunction `gf` computes, by calling `grad` (or
    `value_and_grad`) inside compiled code."""
    func, bound, argnums, weights, value, sens = gf._spec
    if isinstance(weights, str):
        _refuse("a bound method's `.grad` takes the Parameters of its object when called; use "
                "`anfora.grad(obj.method, weights=...)`")
    if isinstance(argnums, str):
        _refuse("`f.grad` differentiates with respect to whichever arguments are float tensors "
                "when called; use `anfora.grad(f, argnums=...)`")
    if isinstance(func, grad_function_type):
        func = compiled_gradient(func, grad, value_and_grad, grad_function_type)
    params = list(inspect.signature(func).parameters.values())
    target = func
    if bound is not None:
        params, target = params[1:], func.__get__(bound)
    if any(p.kind != p.POSITIONAL_OR_KEYWORD or p.default is not p.empty for p in params):
        _refuse("its function has parameters other than plain positional ones")
    names = [f"_{p.name}" for p in params] + (["_sensitivity"] if sens else [])
    args = ", ".join(names)
    name = getattr(func, "__name__", "function")
    source = (f"def gradient_of_{name}({args}):\n"
              f"    return _transform(_target, _argnums, _weights, _sens)({args})\n")
    filename = f"<anfora: gradient of {getattr(func, '__qualname__', name)} #{next(_COUNTER)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {
        "_transform": value_and_grad if value else grad,
        "_target": target,
        "_argnums": argnums,
        "_weights": weights,
        "_sens": sens,
    }
    exec(compile(source, filename, "exec"), namespace)
    return namespace[f"gradient_of_{name}"]

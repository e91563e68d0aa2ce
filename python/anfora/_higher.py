"""Gradients of gradient functions from Python: `anfora.grad(anfora.grad(f))`.

A `GradFunction` is not itself compiled code, so `grad` of one compiles a plain function that
calls the same transform inside compiled code (where `grad(grad(f))` is differentiated like any
other program): `def gradient(x, y): return grad(f, argnums, weights, sens)(x, y)`, with `f`'s
own parameter names (`anfora/_generated.py`), made once per function and options, so that
`grad(grad(f))` written in a loop compiles once."""

import inspect

from ._generated import calling, cached


def _refuse(why):
    raise TypeError(
        f"grad of this gradient function is not supported: {why}; write the composition in a "
        "function, e.g. `def d2(x): return anfora.grad(anfora.grad(f))(x)`, and call or jit it"
    )


def compiled_gradient(gf, grad, value_and_grad, grad_function_type):
    """A Python function computing what GradFunction `gf` computes, by calling `grad` (or
    `value_and_grad`) inside compiled code."""
    func, bound, argnums, weights, value, sens, integers, has_aux = gf._spec
    if isinstance(weights, str):
        _refuse("a bound method's `.grad` takes the Parameters of its object when called; use "
                "`anfora.grad(obj.method, weights=...)`")
    if isinstance(argnums, str):
        _refuse("`f.grad` differentiates with respect to whichever arguments are float tensors "
                "when called; use `anfora.grad(f, argnums=...)`")
    if isinstance(func, grad_function_type):
        func = compiled_gradient(func, grad, value_and_grad, grad_function_type)
    key = ("gradient", id(bound), argnums, None if weights is None else tuple(map(id, weights)),
           value, sens, integers, has_aux)
    options = (argnums, weights, sens, integers, has_aux)
    # The bound object and weights are kept so that their ids stay theirs.
    return cached(func, key, lambda: (_generate(func, bound, options, value, grad, value_and_grad),
                                      (bound, weights)))


def _generate(func, bound, options, value, grad, value_and_grad):
    """One gradient function (see `compiled_gradient`); `options` are the transform's
    `(argnums, weights, sens, integers, has_aux)`."""
    params = list(inspect.signature(func).parameters.values())
    if bound is not None:
        params = params[1:]
    if any(p.kind != p.POSITIONAL_OR_KEYWORD or p.default is not p.empty for p in params):
        _refuse("its function has parameters other than plain positional ones")
    name = getattr(func, "__name__", "function")
    label = f"gradient of {getattr(func, '__qualname__', name)}"
    return calling(func, bound, params, f"gradient_of_{name}", label,
                   value_and_grad if value else grad, options)

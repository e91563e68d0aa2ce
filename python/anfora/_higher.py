"""Gradients of gradient functions from Python: `anfora.grad(anfora.grad(f))`.

A `GradFunction` is not itself compiled code, so `grad` of one compiles a plain function that
calls the same transform inside compiled code (where `grad(grad(f))` is differentiated like any
other program): `def gradient(x, y): return grad(f, argnums, weights, sens)(x, y)`, with `f`'s
own parameter names. Its source is registered in `linecache` under a name of its own, so the
compiler reads it as it reads any function and errors point at it."""

import inspect
import itertools
import linecache
import weakref

_COUNTER = itertools.count()

# The generated function of each (function, bound object, argnums, weights, value, sens,
# integers, has_aux), so
# that `grad(grad(f))` written in a loop compiles once: `{function: {key: (generated, bound,
# weights)}}`, the bound object and weights held so their ids stay theirs.
_GENERATED = weakref.WeakKeyDictionary()


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
    key = (id(bound), argnums, None if weights is None else tuple(map(id, weights)), value, sens,
           integers, has_aux)
    try:
        known = _GENERATED.setdefault(func, {})
    except TypeError:  # not weakly referable: generated anew each time
        known = {}
    if key in known:
        return known[key][0]
    options = (argnums, weights, sens, integers, has_aux)
    generated = _generate(func, bound, options, value, grad, value_and_grad)
    known[key] = (generated, bound, weights)
    return generated


def _generate(func, bound, options, value, grad, value_and_grad):
    """The source and function of one gradient function (see `compiled_gradient`);
    `options` are the transform's `(argnums, weights, sens, integers, has_aux)`."""
    argnums, weights, sens, integers, has_aux = options
    params = list(inspect.signature(func).parameters.values())
    target = func
    if bound is not None:
        params, target = params[1:], func.__get__(bound)
    if any(p.kind != p.POSITIONAL_OR_KEYWORD or p.default is not p.empty for p in params):
        _refuse("its function has parameters other than plain positional ones")
    # Parameters and globals in two name spaces (`p_*` and `anfora_*`), so that no parameter
    # name of the original can hide a global the body reads.
    names = [f"p_{p.name}" for p in params] + (["p_sensitivity"] if sens else [])
    args = ", ".join(names)
    name = getattr(func, "__name__", "function")
    source = (f"def gradient_of_{name}({args}):\n"
              f"    return anfora_transform(anfora_target, anfora_argnums, anfora_weights, "
              f"anfora_sens, anfora_integers, anfora_has_aux)({args})\n")
    filename = f"<anfora: gradient of {getattr(func, '__qualname__', name)} #{next(_COUNTER)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {
        "anfora_transform": value_and_grad if value else grad,
        "anfora_target": target,
        "anfora_argnums": argnums,
        "anfora_weights": weights,
        "anfora_sens": sens,
        "anfora_integers": integers,
        "anfora_has_aux": has_aux,
    }
    exec(compile(source, filename, "exec"), namespace)
    return namespace[f"gradient_of_{name}"]

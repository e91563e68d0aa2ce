"""Small functions generated to call a function, or a gradient transform of it, inside
compiled code: `def gradient_of_f(p_x, p_y): return grad(f, ...)(p_x, p_y)`. `anfora/_higher.py`
makes them for `grad` of a gradient function, `anfora/_objects.py` for calls with objects
among the arguments (which become constants of the generated function). The parameters are
`p_*` and the function's own globals `anfora_*`, so that no parameter name of the original
hides a global the body reads. Each source is registered in `linecache` under a name of its
own, so the compiler reads it as it reads any function and errors point at it."""

import itertools
import linecache
import weakref

_COUNTER = itertools.count()

# {target function: {key: (generated, what it keeps alive)}}
_CACHE = weakref.WeakKeyDictionary()


def cached(func, key, make):
    """The function `make()` returns first, made once per `func` (held weakly) and `key`; what
    it returns second (objects whose ids are in `key`) is kept alive with it."""
    try:
        known = _CACHE.setdefault(func, {})
    except TypeError:  # not weakly referable: made anew each time
        known = {}
    if key not in known:
        known[key] = make()
    return known[key][0]


def calling(func, bound, params, name, label, transform=None, options=(), constants=None):
    """A function `name` of `params` (the original's, after a bound `self`) that calls `func`
    (bound to `bound`), or `transform(func, *options)` with `options` the transform's
    `(argnums, weights, sens, integers, has_aux)`, with its arguments. `constants` maps
    positions to values passed instead of parameters, each a global named as its parameter
    (so messages name it). With `sens`, the function takes the sensitivity last."""
    constants = constants or {}

    def global_name(i):
        own = params[i].name
        return f"anfora_object{i}" if own.startswith(("anfora_", "p_")) else own

    names = [f"p_{p.name}" for i, p in enumerate(params) if i not in constants]
    passed = [global_name(i) if i in constants else f"p_{p.name}" for i, p in enumerate(params)]
    namespace = {global_name(i): v for i, v in constants.items()}
    namespace["anfora_target"] = func.__get__(bound) if bound is not None else func
    call = "anfora_target"
    if transform is not None:
        argnums, weights, sens, integers, has_aux = options
        if sens:
            names.append("p_sensitivity")
            passed.append("p_sensitivity")
        namespace.update(anfora_transform=transform, anfora_argnums=argnums,
                         anfora_weights=weights, anfora_sens=sens, anfora_integers=integers,
                         anfora_has_aux=has_aux)
        call = ("anfora_transform(anfora_target, anfora_argnums, anfora_weights, anfora_sens, "
                "anfora_integers, anfora_has_aux)")
    source = f"def {name}({', '.join(names)}):\n    return {call}({', '.join(passed)})\n"
    filename = f"<anfora: {label} #{next(_COUNTER)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]

"""anfora.ops: the operations compiled code calls (`ops.exp`, `ops.sum`, ...). Outside compiled
functions each runs eagerly on anfora's kernels; inside, the compiler maps it to its
primitive (the `__anfora_op__` attribute names it)."""

import linecache
import sys

from . import _anfora


def _make(name):
    def op(*args, **kwargs):
        return _anfora.call_op(name, args, kwargs)

    op.__name__ = name
    op.__qualname__ = name
    op.__module__ = __name__
    op.__anfora_op__ = name
    op.__doc__ = f"anfora.ops.{name} (runs eagerly outside compiled code)"
    return op


__all__ = list(_anfora.op_names())
for _name in __all__:
    globals()[_name] = _make(_name)
del _name


def _as_function(name):
    """`ops.<name>` as a Python function with the op's own parameters, whose source the
    compiler reads: what `anfora.jit(ops.exp)` or `anfora.grad(ops.tanh)` compiles."""
    params = _anfora.op_signature(name)
    if "*args" in params:
        raise TypeError(
            f"anfora cannot compile ops.{name} itself: it takes any number of arguments; "
            f"compile a function that calls it instead"
        )
    namespace = {}
    exec(f"def _f{params}: pass", namespace)  # only to read the parameter list back
    code = namespace["_f"].__code__
    positional = code.co_varnames[: code.co_argcount]
    keyword = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
    args = ", ".join([*positional, *(f"{k}={k}" for k in keyword)])
    filename = f"<anfora.ops.{name}>"
    source = f"def {name}{params}:\n    return ops.{name}({args})\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"ops": sys.modules[__name__], "__name__": __name__}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]

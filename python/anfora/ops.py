"""anfora.ops: the operations compiled code calls (`ops.exp`, `ops.sum`, ...). Outside compiled
functions each runs eagerly on anfora's kernels; inside, the compiler maps it to its
primitive (the `__anfora_op__` attribute names it)."""

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

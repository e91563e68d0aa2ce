"""`anfora.vjp` and `anfora.jvp` called from Python (inside compiled code the compiler
handles them itself). Each compiles a small function of this file that applies the compiled
transform to `fn`, which it holds in a closure cell (a compile-time constant)."""

import functools

import anfora

# jvp's primals and tangents must be tuples written at the call (E0503), so there is one
# runner per number of arguments.
MAX_ARGS = 8


@functools.lru_cache(maxsize=256)  # one compiled runner per function and arity, reused
def _jvp_runner(fn, n):
    if n == 1:
        def run(p, t):
            return anfora.jvp(fn, (p[0],), (t[0],))
    elif n == 2:
        def run(p, t):
            return anfora.jvp(fn, (p[0], p[1]), (t[0], t[1]))
    elif n == 3:
        def run(p, t):
            return anfora.jvp(fn, (p[0], p[1], p[2]), (t[0], t[1], t[2]))
    elif n == 4:
        def run(p, t):
            return anfora.jvp(fn, (p[0], p[1], p[2], p[3]), (t[0], t[1], t[2], t[3]))
    elif n == 5:
        def run(p, t):
            return anfora.jvp(fn, (p[0], p[1], p[2], p[3], p[4]), (t[0], t[1], t[2], t[3], t[4]))
    elif n == 6:
        def run(p, t):
            return anfora.jvp(fn, (p[0], p[1], p[2], p[3], p[4], p[5]),
                              (t[0], t[1], t[2], t[3], t[4], t[5]))
    elif n == 7:
        def run(p, t):
            return anfora.jvp(fn, (p[0], p[1], p[2], p[3], p[4], p[5], p[6]),
                              (t[0], t[1], t[2], t[3], t[4], t[5], t[6]))
    elif n == 8:
        def run(p, t):
            return anfora.jvp(fn, (p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]),
                              (t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]))
    else:
        raise TypeError(f"anfora.jvp from Python takes 1 to {MAX_ARGS} primals, got {n}")
    return anfora.jit(run)


def jvp(fn, primals, tangents):
    """Forward mode, JAX's signature: `(fn(*primals), tangent_out)`, the derivative of `fn` at
    `primals` along `tangents` (one per primal, shaped like it)."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise TypeError("jvp: primals and tangents must be tuples")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    return _jvp_runner(fn, len(primals))(primals, tangents)


@functools.lru_cache(maxsize=256)
def _vjp_functions(fn):
    return anfora.jit(fn), anfora.grad(fn, argnums=..., sens_param=True)


def vjp(fn, *primals):
    """Reverse mode, JAX's signature: `(fn(*primals), vjp_fn)`; `vjp_fn(cotangent)` returns
    one sensitivity per primal (the cotangent is shaped like the output)."""
    forward, pullback = _vjp_functions(fn)
    out = forward(*primals)

    def vjp_fn(cotangent):
        return pullback(*primals, cotangent)

    return out, vjp_fn


jvp.__anfora_prim__ = "jvp"
vjp.__anfora_prim__ = "vjp"

import time, resource
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

def f(x, n):
    return jax.lax.fori_loop(0, n, lambda i, x: jnp.sin(x), x)

t0 = time.perf_counter()
g = jax.jit(jax.grad(f), static_argnums=1)
v = g(0.5, 1000000).block_until_ready()
t1 = time.perf_counter()
v = g(0.5, 1000000).block_until_ready()
t2 = time.perf_counter()
print(float(v), f"first call {t1-t0:.2f} s, second {t2-t1:.2f} s, peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:.0f} MB")
try:
    def w(x, n):
        return jax.lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, x))[1]
    jax.grad(w)(0.5, 10)
except Exception as e:
    print("while_loop:", type(e).__name__, str(e).splitlines()[0][:150])

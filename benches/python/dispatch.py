"""Python-side dispatch and import benchmarks (issue 7, section 5).

    .venv/bin/python benches/python/dispatch.py          # after `maturin develop --release`

Prints the median time of a cached jitted call of `x * y + 1` on 4-element float32 tensors,
of the same call eager through anfora's operators, of numpy doing the same, and the time of
`import anfora` in a fresh interpreter. Peers (JAX, torch) are timed when installed.
"""

import statistics
import subprocess
import sys
import timeit

import numpy as np

import anfora


@anfora.jit
def fma(x, y):
    return x * y + 1


def per_call(stmt, number=20000, repeat=7):
    times = timeit.repeat(stmt, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e6


def main():
    x = anfora.tensor(np.arange(4, dtype=np.float32))
    y = anfora.tensor(np.ones(4, dtype=np.float32))
    fma(x, y)
    rows = [("anfora @jit, cached call", per_call(lambda: fma(x, y)))]
    rows.append(("anfora eager (x * y + 1)", per_call(lambda: x * y + 1)))
    a, b = np.arange(4, dtype=np.float32), np.ones(4, dtype=np.float32)
    rows.append(("numpy (x * y + 1)", per_call(lambda: a * b + 1)))
    try:
        import jax
        import jax.numpy as jnp

        jf = jax.jit(lambda x, y: x * y + 1)
        ja, jb = jnp.arange(4, dtype=jnp.float32), jnp.ones(4, dtype=jnp.float32)
        jf(ja, jb).block_until_ready()
        rows.append(("JAX jit, cached call", per_call(lambda: jf(ja, jb).block_until_ready(), number=5000)))
    except ImportError:
        pass
    try:
        import torch

        ta, tb = torch.arange(4, dtype=torch.float32), torch.ones(4)
        rows.append(("torch eager", per_call(lambda: ta * tb + 1)))
    except ImportError:
        pass
    imports = []
    for _ in range(7):
        out = subprocess.run(
            [sys.executable, "-c", "import time; t=time.perf_counter(); import anfora; print(time.perf_counter()-t)"],
            capture_output=True, text=True, check=True,
        )
        imports.append(float(out.stdout) * 1e3)
    width = max(len(r[0]) for r in rows)
    for name, us in rows:
        print(f"{name:<{width}}  {us:8.2f} µs")
    print(f"{'import anfora':<{width}}  {statistics.median(imports):8.2f} ms")


if __name__ == "__main__":
    main()

"""W4 ctrl (../shared/reference/bench/workload_defs.py): 10 iterations of
`if sum(x) > 0: branch_a (10 ops) else: branch_b (10 ops)` on a float32 vector, as real Python
control flow. The benchmarks replace the first constant of each branch (A_SCALE, B_SCALE) to
perturb it per compile, as the peers do: benches/src/lib.rs (Rust) and
benches/python/bench_anfora.py (Python) both read this file."""

from anfora import ops


def branch_a(x):
    x = x * 0.9
    x = x + 0.1
    x = ops.sin(x)
    x = x * x
    x = x - 0.2
    x = ops.cos(x)
    x = x * 1.1
    x = x + 0.05
    x = ops.tanh(x)
    x = x - 0.3
    return x


def branch_b(x):
    x = x * 1.2
    x = x - 0.1
    x = ops.cos(x)
    x = x * 0.5
    x = x + 0.3
    x = ops.sin(x)
    x = x * 0.8
    x = ops.exp(x)
    x = ops.tanh(x)
    x = x + 0.1
    return x


def ctrl(x):
    i = 0
    while i < 10:
        if x.sum() > 0:
            x = branch_a(x)
        else:
            x = branch_b(x)
        i += 1
    return x

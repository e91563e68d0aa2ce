"""Does an all-reduce run while the program computes? (issue 30, the overlap)

    mpirun -np 2 --bind-to core .venv/bin/python benches/python/dp_overlap.py [--mb 4]

Two compiled functions do the same work: an all-reduce of `--mb` MB of float32 and a chain
of matrix products that does not depend on it. `blocking` calls `ops.all_reduce`, then
computes; `overlapped` starts the all-reduce (`ops.all_reduce_start`), computes, then waits.
Rank 0 prints the median time per call of each, of the all-reduce alone and of the
products alone: with overlap, `overlapped` takes about the longer of the two instead of
their sum.
"""

import argparse
import statistics
import time

import numpy as np

import anfora
from anfora import distributed as dist, ops


@anfora.jit
def blocking(big, a):
    total = ops.all_reduce(big, "sum")
    for _ in range(24):
        a = ops.tanh(a @ a)
    return total, a


@anfora.jit
def overlapped(big, a):
    handle = ops.all_reduce_start(big, "sum")
    for _ in range(24):
        a = ops.tanh(a @ a)
    return ops.all_reduce_wait(handle, big), a


@anfora.jit
def reduce_only(big):
    return ops.all_reduce(big, "sum")


@anfora.jit
def compute_only(a):
    for _ in range(24):
        a = ops.tanh(a @ a)
    return a


def timed(f, *args, calls=30):
    f(*args)
    times = []
    for _ in range(calls):
        dist.barrier()
        t = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mb", type=float, default=4.0)
    args = p.parse_args()
    dist.init()
    big = anfora.tensor(np.ones(int(args.mb * 2**20 / 4), np.float32))
    a = anfora.tensor(np.random.default_rng(0).normal(size=(192, 192)).astype(np.float32) / 14)
    rows = [("all_reduce alone", timed(reduce_only, big)), ("products alone", timed(compute_only, a)),
            ("blocking", timed(blocking, big, a)), ("overlapped", timed(overlapped, big, a))]
    if dist.rank() == 0:
        for name, ms in rows:
            print(f"{name:>18}: {ms:.3f} ms")


if __name__ == "__main__":
    main()

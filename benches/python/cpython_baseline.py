"""CPython on the workloads of benches/benches/{frontend,vm}.rs, for side-by-side numbers.

    python3 benches/python/cpython_baseline.py

Prints the median time of CPython's own compile() (source to bytecode) for the two compile
workloads and of running the 10^6-iteration scalar while loop.
"""

import statistics
import time


def straight_line_50():
    lines = ["def f(x, y):", "    a0 = x + y"]
    for i in range(1, 50):
        op = ["+", "-", "*", "/"][i % 4]
        rhs = "x" if i % 3 == 0 else "y"
        lines.append(f"    a{i} = a{i - 1} {op} {rhs}")
    lines.append("    return a49")
    return "\n".join(lines) + "\n"


def loop_with_branches():
    lines = ["def f(x, y):", "    i = 0", "    acc = x", "    while i < 10:", "        if acc > y:"]
    lines += [f"            acc = acc * 0.5 + {k}.0" for k in range(10)]
    lines.append("        else:")
    lines += [f"            acc = acc * 1.5 - {k}.0" for k in range(10)]
    lines += ["        i = i + 1", "    return acc"]
    return "\n".join(lines) + "\n"


SCALAR_LOOP = (
    "def main(n):\n    i = 0\n    s = 0\n    while i < n:\n"
    "        s = s + i * 2 + 1\n        i = i + 1\n    return s\n"
)


def median_time(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    for name, src in [("straight_line_50_statements", straight_line_50()),
                      ("while_loop_if_else_20_ops", loop_with_branches())]:
        t = median_time(lambda: compile(src, "bench.py", "exec"), 200)
        print(f"cpython compile()  {name:30s} {t * 1e6:9.1f} us")
    ns = {}
    exec(SCALAR_LOOP, ns)
    t = median_time(lambda: ns["main"](1_000_000), 10)
    assert ns["main"](1000) == 1000000
    print(f"cpython run        {'scalar_while_loop_1e6':30s} {t * 1e3:9.1f} ms")


if __name__ == "__main__":
    main()

# Scalar loops and calls (issue 25 overhead check): anfora run benches/workloads/scalar_loops.py 1000000
# args: 1000000
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def main(n):
    s = 0
    i = 0
    while i < n:
        s = s + i * 2 + 1
        i = i + 1
    x = 0.5
    for k in range(n):
        x = x * 0.999999 + 0.25
    return s, x, fib(22)

# The gradient of a 10^6-iteration loop (issue 25): anfora run benches/workloads/grad_long_loop.py 0.5 1000000
# args: 0.5, 1000000
from anfora import grad, ops


def f(x, n):
    i = 0
    while i < n:
        x = ops.sin(x)
        i += 1
    return x


def main(x, n):
    return grad(f, argnums=0)(x, n)

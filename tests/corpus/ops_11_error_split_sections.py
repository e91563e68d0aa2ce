# ZeroDivisionError: ops.split into 0 sections (numpy computes len % sections).
from anfora import ops


def halves(x, n):
    parts = ops.split(x, n)
    return parts[0]


def main():
    x = ops.arange(6)
    print(halves(x, 2), halves(x, 3), halves(x, 6))
    print(ops.split(x, [-2])[1], ops.split(x, (1, 1))[1].shape)
    return halves(x, 0)

# Arrays unpacked from a tuple of fresh values are owned by their names.
from anfora import ops


def main():
    a, b = ops.zeros(2), ops.ones(3) * 2.0
    a += 1.0
    b[1:] -= a
    p, (q, r) = ops.arange(3) * 1, (ops.zeros(1), 5)
    p[r - 4] = 9
    q += r
    print(a, b, p, q)
    return b.sum()

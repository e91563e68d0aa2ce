# Tensors inside tuples: packing, unpacking, returning.
from anfora import ops


def stats(t):
    return t.min(), t.max(), t.mean()


def split(t):
    n = len(t) // 2
    return t[:n], t[n:]


def main():
    x = ops.tensor([4.0, -1.0, 2.5, 8.0])
    lo, hi, mu = stats(x)
    print(lo, hi, mu)
    left, right = split(x)
    print(left, right)
    pair = (x, x * 2)
    print(pair)
    print((ops.tensor(1), "s", ops.tensor([True])))
    nested = ((ops.arange(2), 1), ops.zeros(1))
    (a, b), c = nested
    print(a + b + c)
    return (stats(ops.arange(5)), split(ops.arange(3)))

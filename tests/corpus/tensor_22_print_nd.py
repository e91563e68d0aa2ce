# Printing 2-d and 3-d tensors.
from anfora import ops


def main():
    m = ops.reshape(ops.arange(6), (2, 3))
    print(m)
    print(repr(m))
    f = ops.reshape(ops.arange(6), (3, 2)) * 1.5 - 2
    print(f)
    print(repr(f))
    c = ops.reshape(ops.arange(24), (2, 3, 4))
    print(c)
    print(repr(c))
    print(ops.zeros((2, 0)), repr(ops.zeros((2, 0))), ops.ones((1, 1, 1)))
    neg = ops.tensor([[-1.25, 10.0], [3.0, -0.5]], dtype="float64")
    print(neg)
    print(ops.tensor([[True, False], [False, True]]))
    return c[1]

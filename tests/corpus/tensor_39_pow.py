# The ** operator on tensors with scalars on either side.
from anfora import ops


def main():
    i = ops.arange(5)
    f = ops.tensor([1.0, 4.0, 16.0])
    print(i ** 2, 2 ** i, i ** 0.5, (i ** 0.5).dtype)
    print(f ** 0.5, f ** -1, f ** 2, 2.0 ** f, (2.0 ** f).dtype)
    print(ops.pow(i, i), ops.pow(f, ops.tensor([0.0, 0.5, 1.0])))
    return (i ** 3, f ** -0.5)

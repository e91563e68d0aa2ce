# Closures capturing tensors.
from anfora import ops


def make_affine(w, b):
    def f(x):
        return x @ w + b
    return f


def make_scaler(s):
    return lambda t: t * s


def main():
    w = ops.tensor([[1.0, 0.0], [0.0, 2.0]])
    b = ops.tensor([0.5, -0.5])
    f = make_affine(w, b)
    x = ops.tensor([[1.0, 1.0], [2.0, 3.0]])
    print(f(x))
    print(f(f(x)))
    sc = make_scaler(ops.tensor([1, 10, 100]))
    print(sc(ops.arange(3)), sc(2))
    return f(ops.zeros((1, 2)))

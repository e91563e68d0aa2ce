# sum/mean/max/min/prod with axis and keepdims.
from anfora import ops


def main():
    x = ops.reshape(ops.arange(12), (3, 4))
    print(x.sum(), x.sum(axis=0), x.sum(axis=1), x.sum(1, True))
    print(x.mean(), x.mean(axis=0), x.mean(axis=1, keepdims=True))
    print(x.max(), x.max(axis=0), x.min(axis=1), x.min())
    print(x.prod(axis=1), (x + 1).prod(), x.sum(axis=-1))
    f = ops.tensor([[1.5, -2.0], [0.25, 4.0]])
    print(f.sum(), f.mean(axis=0), f.max(axis=1, keepdims=True), f.min().dtype)
    print(ops.sum(x, axis=(0, 1)), ops.mean(f), ops.max(f, 0), ops.min(x, axis=0, keepdims=True))
    print(ops.prod(f), x.sum().shape, x.sum(axis=0, keepdims=True).shape)
    b = ops.tensor([True, False, True])
    print(b.sum(), b.sum().dtype, b.mean())
    return (x.sum(), f.mean())

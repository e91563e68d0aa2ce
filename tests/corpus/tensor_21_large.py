# Large tensors are summarized when printed.
from anfora import ops


def main():
    a = ops.arange(2000)
    print(a)
    print(repr(a))
    print(a.sum(), a.shape)
    b = ops.reshape(ops.arange(3000, dtype="float32"), (60, 50)) / 7
    print(b)
    c = ops.ones((1001,), dtype="bool")
    print(c)
    print(ops.arange(1000))
    return a[::100]

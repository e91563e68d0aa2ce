# A nested function reads a tensor variable its creator rebinds to new tensors: each call sees
# the current one.
from anfora import ops


def main():
    w = ops.tensor([1.0, 2.0])

    def apply(x):
        return x * w

    print(apply(1.0))
    w = w + 10.0
    print(apply(2.0))
    for k in range(2):
        w = w * 2.0
        print(apply(k))
    return apply(1.0)

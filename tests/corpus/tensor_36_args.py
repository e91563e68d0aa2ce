# args: [1.0, 2.0, 3.0], 2
from anfora import ops


def main(x, k):
    print("x:", x, x.dtype, "k:", k)
    y = x * k
    print("y:", y)
    print("sum:", y.sum(), "mean:", y.mean())
    return y - x

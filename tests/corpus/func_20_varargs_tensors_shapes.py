# *args of tensors of different shapes: each item keeps its own shape.
from anfora import ops


def shapes(*xs):
    out = ()
    for x in xs:
        out = out + (x.shape,)
    return out


def stack_sum(*xs):
    total = 0.0
    for x in xs:
        total = total + x.sum()
    return total


def main():
    a = ops.ones((2, 3))
    b = ops.zeros(4)
    c = ops.arange(6).reshape((3, 2)) * 1.0
    print(shapes(a, b, c), shapes(*(a, c)))
    return stack_sum(a, *(b, c))

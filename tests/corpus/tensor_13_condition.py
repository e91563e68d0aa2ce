# A one-element tensor as an if/while condition.
from anfora import ops


def halve_until_small(x):
    steps = 0
    while x > 1.0:
        x = x / 2
        steps += 1
    return x, steps


def main():
    t = ops.tensor(10.0)
    if t > 5:
        print("big", t)
    else:
        print("small", t)
    if ops.tensor([0]):
        print("never")
    else:
        print("single zero is falsy")
    if ops.tensor([[3]]):
        print("single nonzero is truthy")
    x, n = halve_until_small(ops.tensor(100.0))
    print("halved:", x, n)
    v = ops.arange(5)
    if (v > 3).sum() == 1 and not v.min():
        print("one above 3, min is zero")
    r = "pos" if t.sum() > 0 else "neg"
    return (r, n, x)

# A nonlocal tensor accumulator and a late-bound tensor read.
import anfora
from anfora import ops


def main():
    acc = ops.zeros((3,))
    w = ops.tensor([1.0, 2.0, 3.0])

    def add(v):
        nonlocal acc
        acc = acc + v * w

    for i in range(4):
        add(float(i))
    w = w * 10.0
    add(1.0)
    print(acc)
    return acc.sum()

# args: 5
# `a, *rest = seq`: the starred name takes the items the others leave, as a list, from
# tuples, lists, strs, ranges and tensors, in loops, recursion and at module level.
from anfora import ops

HEAD, *TAIL = (1, 2, 3)


def total(t):
    if len(t) == 0:
        return 0
    first, *rest = t
    return first + total(tuple(rest))


def main(n):
    a, *b, c = tuple(range(n))
    print(a, b, c)
    *init, last = [10, 20]
    print(init, last)
    x, *y = "hey"
    print(x, y)
    p, *q = range(3)
    print(p, q, len(q))
    m = ops.arange(6.0).reshape((3, 2))
    row0, *others = m
    print(row0, len(others), others[1] * 2.0)
    for first, *more in ((1, 2, 3), (4,), (5, 6)):
        print(first, more)
    (u, *v), w = (1, 2, 3), 4
    print(u, v, w)
    *only, = (7, 8)
    print(only, HEAD, TAIL)
    return total(tuple(range(n))) + a + c

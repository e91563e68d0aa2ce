# args: 3
# `*x` inside tuple and list displays: the items of any iterable, where they stand.
from anfora import ops


def main(n):
    b = [2, 3]
    t = (*b, 9, *"ab")
    l = [0, *t, *range(n)]
    print(t, l, len(l))
    e = (*(), *[])
    print(e, [*e], (1, *e))
    r = ops.arange(4.0).reshape((2, 2))
    rows = (*r, r[0] + 1.0)
    print(len(rows), rows[2])
    nested = [*[*b, *b], *((n,) * 2)]
    return tuple(nested)

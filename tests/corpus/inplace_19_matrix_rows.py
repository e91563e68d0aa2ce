# args: 4
# A matrix filled row by row with computed rows, then normalized in place row by row.
from anfora import ops


def main(n):
    m = ops.zeros((n, 3))
    for i in range(n):
        m[i] = ops.tensor([1.0, 2.0, 3.0]) * (i + 1)
    for i in range(n):
        m[i] /= m[i].sum()
    print(m)
    m[:, 0] = 0.0
    return m.sum(axis=1)

# Item assignment with basic indices: ints, negative ints, slices with steps, ..., None.
from anfora import ops


def main():
    a = ops.zeros((3, 4))
    a[0] = 1.0
    a[-1] = ops.tensor([1.0, 2.0, 3.0, 4.0])
    a[1, 1:3] = 7.0
    a[:, ::2] += 10.0
    a[..., -1] = -1.0
    a[1, None] = 5.0
    print(a)
    v = ops.arange(10) * 1
    v[::-3] = 0
    v[2:8:2] -= 100
    print(v)
    g = ops.zeros((2, 2, 2))
    g[1, ...] = ops.tensor([[1.0, 2.0], [3.0, 4.0]])
    g[:, 0, :] = 9.0
    print(g)
    return a.sum()

# Every index form of assignment: ints, negative ints, slices with steps (also negative),
# `...`, `None`, integer arrays, boolean masks, and mixes of them.
from anfora import ops


def main():
    t = ops.arange(24).reshape((2, 3, 4)) * 1
    t[0, 0, 0] = -1
    t[-1, -1, -1] = -2
    t[1, :, ::3] = 0
    t[0, 2, ::-2] = 7
    t[..., 1] = 5
    t[None, 0, 1, 1:3] = 9
    t[ops.tensor([0, 1]), ops.tensor([1, 2]), 0] = 88
    t[t > 20] = 21
    t[1, ops.tensor([True, False, True])] += 1000
    print(t)
    return t.sum()

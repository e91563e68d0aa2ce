# Every augmented operator on tensor items and slices.
from anfora import ops


def main():
    a = ops.arange(1, 9) * 1
    a[0] += 5
    a[1] -= 5
    a[2] *= 3
    a[3] //= 2
    a[4] %= 3
    a[5] **= 2
    a[6] <<= 2
    a[7] >>= 1
    a[::2] |= 1
    a[1::2] &= 6
    a[:4] ^= 3
    print(a)
    f = ops.ones(4) * 8.0
    f[1:3] /= 4.0
    f[-1] -= 0.5
    print(f)
    return a.sum() + f.sum()

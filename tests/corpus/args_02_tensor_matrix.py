# args: [[1, 2], [3, 4]], [0.5, -0.5], 3
from anfora import ops


def power(m, k):
    r = m
    for _ in range(k - 1):
        r = r @ m
    return r


def main(m, v, k):
    print("m:", m.shape, m.dtype, "v:", v.shape, v.dtype, "k:", k)
    p = power(m, k)
    print(p)
    print(m @ v, (m @ v).dtype)
    return (p.sum(), v * k)

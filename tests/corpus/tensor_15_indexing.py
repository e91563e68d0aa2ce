# Indexing and slicing tensors.
from anfora import ops


def main():
    a = ops.arange(10)
    print(a[0], a[-1], a[2:5], a[::3], a[::-1], a[7:2:-2], a[100:])
    m = ops.reshape(ops.arange(12), (3, 4))
    print(m[1], m[-1, -1], m[1, 2], m[:, 1], m[1:, ::2])
    print(m[..., 0], m[None].shape, m[:, None, :].shape, m[1][3])
    print(m[::-1, ::-1])
    t3 = ops.reshape(ops.arange(24), (2, 3, 4))
    print(t3[1, :, 0], t3[..., 1:3].shape, t3[0, 1:, ::3])
    k = 2
    print(a[k:k + 3], a[-k:], m[k - 1, k:])
    return (m[0], m[:, 0], a[3])

# reshape and transpose, methods and ops.
from anfora import ops


def main():
    a = ops.arange(6)
    b = a.reshape(2, 3)
    c = a.reshape((3, 2))
    d = ops.reshape(a, (1, 6))
    e = a.reshape(-1, 2)
    print(b, c, d, e, sep="\n")
    print(b.T, b.transpose(), ops.transpose(b), sep="\n")
    t3 = ops.arange(24).reshape(2, 3, 4)
    print(t3.transpose(2, 0, 1).shape, t3.transpose((1, 0, 2)).shape, ops.transpose(t3, (0, 2, 1)).shape)
    print(t3.T.shape, ops.reshape(t3, 24).shape, t3.reshape(4, -1).shape)
    print(t3.transpose(1, 2, 0)[2])
    return (b.T, ops.reshape(b, (3, 2)))

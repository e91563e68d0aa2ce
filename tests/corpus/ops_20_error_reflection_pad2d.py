# ValueError: as in PyTorch, a reflection padding must be less than the size of its
# axis (replication and zero padding have no such limit).
from anfora import ops


def mirror(x, p):
    return ops.reflection_pad2d(x, (p, 0, 1, 1))


def main():
    x = ops.arange(6).reshape(1, 1, 2, 3)
    p = 0
    while p < 5:
        print(p, ops.replication_pad2d(x, (p, 0, 1, 1)).shape, ops.zero_pad2d(x, p).shape)
        print(mirror(x, p)[0, 0])
        p = p + 1
    return "unreachable"

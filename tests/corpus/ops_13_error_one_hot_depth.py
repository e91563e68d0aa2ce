# ValueError: ops.one_hot with a negative depth computed at run time.
from anfora import ops


def encode(labels, depth):
    return ops.one_hot(labels, depth)


def main():
    labels = ops.tensor([0, 2, 1])
    depth = 3
    while depth > -2:
        print("depth", depth, encode(labels, depth).shape)
        depth = depth - 2
    return "unreachable"

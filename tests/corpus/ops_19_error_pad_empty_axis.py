# ValueError: numpy's modes other than 'constant' cannot extend an empty axis (the
# width is computed at run time; 'constant' pads it, and other axes can grow).
from anfora import ops


def frame(x, w):
    return ops.pad(x, ((w, 0), (1, 1)), "edge")


def main():
    x = ops.zeros((0, 3))
    w = 0
    while w < 3:
        print("constant", w, ops.pad(x, ((w, 0), (1, 1))).shape)
        print("edge", w, frame(x, w).shape)
        w = w + 1
    return "unreachable"

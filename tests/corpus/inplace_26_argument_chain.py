# An update passes through a chain of calls: each function hands its parameter on, and the
# array at the bottom of the chain is the one the outermost caller holds.
from anfora import ops


def scale_row(m, i, k):
    m[i] *= k


def scale_all(m, k):
    for i in range(m.shape[0]):
        scale_row(m, i, k)


def normalize(m):
    scale_all(m, 0.5)
    m -= 1.0


def main():
    m = ops.reshape(ops.arange(6.0), (2, 3)) + 0.0
    view_of_nothing = m * 1.0
    normalize(m)
    print(m, view_of_nothing)
    return m

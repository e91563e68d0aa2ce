# shape, dtype, ndim, size and len.
import anfora as af
from anfora import ops


def describe(t):
    print("shape", t.shape, "ndim", t.ndim, "size", t.size, "dtype", t.dtype)
    return t.shape


def main():
    s0 = describe(ops.tensor(1.5))
    s1 = describe(ops.arange(5))
    s2 = describe(ops.zeros((2, 3), dtype=af.int32))
    s3 = describe(ops.ones((4, 1, 2), dtype=af.bool_))
    describe(ops.zeros((0, 3)))
    rows, cols = s2
    print(rows * cols, len(ops.ones((7, 2))), len(ops.arange(3)))
    print(s1[0] + 1, s3[-1], len(s3), isinstance(s3[0], int))
    return (s0, s1, s2, s3)

# The assigned value is broadcast to the indexed shape and cast to the array's dtype with
# numpy's rule for assignment (floats into an int array truncate toward zero, numbers into a
# bool array test for nonzero).
import anfora
from anfora import ops


def main():
    m = ops.zeros((3, 4), dtype=anfora.int32)
    m[:] = ops.tensor([1.9, -1.9, 2.5, -0.5])
    m[1:] = ops.tensor([[7], [8]])
    m[0, 1:3] = 3.99
    print(m, m.dtype)
    b = ops.zeros(4, dtype=anfora.bool_) | False
    b[1] = 2
    b[2:] = ops.tensor([0.0, 0.5])
    print(b)
    f = ops.zeros((2, 2), dtype=anfora.float64)
    f[0] = True
    f[1] = ops.tensor([3, 4])
    print(f)
    return m.sum()

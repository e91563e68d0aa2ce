# Elementwise comparisons give bool tensors; where selects.
from anfora import ops


def main():
    a = ops.tensor([1, 5, 3, 7])
    b = ops.tensor([2, 5, 1, 8])
    print(a == b, a != b, a < b, a <= b, a > b, a >= b)
    print(a > 3, 3 < a, a == 5.0, ops.equal(a, b), ops.greater(a, 2))
    f = ops.tensor([0.5, -1.0, 2.0])
    mask = f > 0
    print(mask, mask.dtype, ops.where(mask, f, 0.0), ops.where(mask, 1, -1))
    print(ops.logical_not(mask), ~mask, mask & (f < 1), mask | (f < -0.5))
    print(ops.less(f, 1), ops.less_equal(f, 0.5), ops.not_equal(f, 2), ops.greater_equal(f, -1))
    return ops.where(a > b, a, b)

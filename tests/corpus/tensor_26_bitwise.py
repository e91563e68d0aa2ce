# Bitwise operators on integer and bool tensors.
import anfora as af
from anfora import ops


def main():
    a = ops.tensor([12, 10, -1, 0])
    b = ops.tensor([10, 6, 255, 7])
    print(a & b, a | b, a ^ b, ~a)
    print(a << 2, b >> 1, a & 0xF, 1 << ops.tensor([0, 1, 2]))
    p = ops.tensor([True, True, False, False])
    q = ops.tensor([True, False, True, False])
    print(p & q, p | q, p ^ q, ~p)
    i32 = ops.tensor([5, 3], dtype=af.int32)
    print((i32 | 8).dtype, i32 ^ i32, (i32 << 1).dtype)
    return (a & b, p ^ q)

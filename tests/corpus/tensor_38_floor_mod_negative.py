# Tensor // and % with negative operands, ints and floats, and scalars.
from anfora import ops


def main():
    a = ops.tensor([7, -7, 7, -7])
    b = ops.tensor([2, 2, -2, -2])
    print(a // b, a % b, a // 3, a % 3, -10 // ops.tensor([3, -3]), 10 % ops.tensor([-3, 3]))
    f = ops.tensor([7.5, -7.5, 7.5, -7.5])
    g = ops.tensor([2.0, 2.0, -2.0, -2.0])
    print(f // g, f % g, f // 2, f % 2, a // 2.0, a % 2.5)
    return (a // b, f % g)

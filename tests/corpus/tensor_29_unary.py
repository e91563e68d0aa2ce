# Unary operators and abs on tensors.
from anfora import ops


def main():
    i = ops.tensor([-3, 0, 4])
    f = ops.tensor([-1.5, 0.0, 2.25])
    print(-i, +i, abs(i), ops.neg(i), ops.abs(i))
    print(-f, +f, abs(f), ops.abs(f), -(-f))
    b = ops.tensor([True, False])
    print(~b, ops.logical_not(b), abs(b))
    z = ops.tensor(-0.0)
    print(z, -z, abs(z), repr(-ops.tensor(2)))
    return (-i, abs(f))

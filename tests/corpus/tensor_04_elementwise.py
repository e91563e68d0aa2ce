# Elementwise arithmetic between tensors of the same shape.
from anfora import ops


def main():
    a = ops.tensor([6, -7, 8, 9])
    b = ops.tensor([4, 2, -3, 9])
    print(a + b, a - b, a * b)
    print(a / b)
    print(a // b, a % b)
    print(a ** ops.tensor([2, 0, 1, 2]))
    x = ops.tensor([1.5, -2.0, 3.25])
    y = ops.tensor([0.5, 4.0, -1.0])
    print(x + y, x - y, x * y, x / y)
    print(x // y, x % y, x ** 2)
    print(ops.add(x, y), ops.sub(x, y), ops.mul(x, y), ops.div(x, y))
    print(ops.floor_div(a, b), ops.mod(a, b), ops.pow(a, 2))
    return (a * b, x / y)

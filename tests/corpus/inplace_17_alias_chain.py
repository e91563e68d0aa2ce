# Chains of names of one array, updated through each in turn, and rebinding one of them to a
# new array.
from anfora import ops


def main():
    a = ops.zeros(3)
    b = a
    c = b
    b += 1.0
    c[2] = 5.0
    print(a, b, c)
    b = b * 10.0
    a -= 1.0
    print(a, b, c)
    return c

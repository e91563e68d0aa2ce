# TypeError: a tensor-only op called with a Python scalar.
from anfora import ops


def total(x):
    return ops.sum(x)


def main():
    print(total(ops.arange(4)))
    print(total(ops.tensor(2.5)))
    return total(3)

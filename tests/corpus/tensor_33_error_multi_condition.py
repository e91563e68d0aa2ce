# ValueError: a multi-element tensor used as a condition.
from anfora import ops


def positive(t):
    if t > 0:
        return "positive"
    return "not positive"


def main():
    print(positive(ops.tensor(3)))
    print(positive(ops.tensor([-1])))
    print(positive(ops.tensor([1, 2])))
    return "unreachable"

# *args of tensors: a sum of any number of inputs, forwarded through another function.
from anfora import ops


def add_all(*xs):
    acc = ops.zeros(2)
    for x in xs:
        acc = acc + x
    return acc


def forward(*xs):
    return add_all(*xs) * 2.0


def main():
    a = ops.tensor([1.0, 2.0])
    b = ops.tensor([3.0, 4.0])
    print(add_all(), add_all(a), add_all(a, b))
    pair = (a, b)
    print(forward(*pair), forward(a, b, a))
    return forward(*pair, b)

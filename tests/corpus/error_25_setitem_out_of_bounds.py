# An index computed in a loop runs past the end: numpy's IndexError when it happens.
from anfora import ops


def main():
    x = ops.zeros(3)
    for k in range(5):
        x[k] = k * 1.5
        print(x)
    return x

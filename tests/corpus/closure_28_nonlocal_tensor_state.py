# A running mean kept in nonlocal tensor state by a nested update function.
from anfora import ops


def main():
    mean = ops.zeros(2)
    seen = 0

    def observe(x):
        nonlocal mean, seen
        seen += 1
        mean = mean + (x - mean) / seen

    for v in (ops.tensor([1.0, 2.0]), ops.tensor([3.0, 6.0]), ops.tensor([5.0, 1.0])):
        observe(v)
        print(seen, mean)
    return mean

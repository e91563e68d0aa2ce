# Boolean masks computed from the array itself, applied repeatedly.
from anfora import ops


def main():
    x = ops.tensor([-3.0, -1.0, 0.0, 2.0, 5.0]) * 1.0
    x[x < 0] = 0.0
    x[x > 3] *= 0.5
    x[(x > 0) & (x < 3)] += 10.0
    print(x)
    y = ops.arange(10) * 1
    y[y % 2 == 0] //= 2
    y[y > 6] = -1
    return y

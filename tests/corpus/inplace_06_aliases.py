# Names of one array: an update through either is seen through both (numpy's aliasing), in
# straight-line code, loops and after chained assignment.
from anfora import ops


def main():
    x = ops.zeros(3)
    y = x
    x += 1.0
    print(y)
    z = y
    z[0] = 7.0
    print(x, y, z)
    a = b = ops.arange(4) * 1
    for i in range(4):
        a[i] += i * 10
    print(b)
    c = ops.ones(2) * 3.0
    d = c
    d = d * 2.0
    c -= 1.0
    print(c, d)
    return x

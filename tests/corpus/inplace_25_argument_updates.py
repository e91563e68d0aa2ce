# A function updates the array it is passed: the caller's variable, and every other name of
# the same array, see the change (numpy's semantics); an int parameter is only rebound.
from anfora import ops


def bump(x, v):
    x += v
    return 0


def fill(buf, i, v):
    buf[i] = v


def count(n):
    n += 1
    return n


def rebinds(x):
    x = x * 2.0
    x += 1.0
    return x


def main():
    a = ops.zeros(3)
    b = a
    bump(a, 2.0)
    fill(a, 1, 7.0)
    print(a, b)
    n = 5
    m = count(n)
    c = ops.ones(2)
    d = rebinds(c)
    print(n, m, c, d)
    bump(v=0.5, x=b)
    print(a)
    return a

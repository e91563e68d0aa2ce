# Item assignments inside tuple targets update the array as alone: in the function that owns
# it, and in one that updates its argument (also through a call in an index) for its caller.
from anfora import ops


def bump(x):
    x += 1.0
    return 0


def outer(x, buf):
    k, buf[bump(x)] = 1, 5.0
    return k


def main():
    buf = ops.zeros(3)
    alias = buf
    k, buf[1] = 1, 2.5
    a = ops.zeros(2)
    b = ops.zeros(3)
    print(outer(a, b), a, b)
    print(buf, alias, k)
    return buf

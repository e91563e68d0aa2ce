# args: 4
# In-place updates inside recursive functions, each on the function's own array.
from anfora import ops


def build(n):
    if n == 0:
        return ops.zeros(1)
    prev = build(n - 1)
    out = ops.zeros(n + 1)
    out[:n] = prev
    out[n] = n * 1.5
    out *= 2.0
    return out


def countdown(k, acc):
    if k == 0:
        return acc
    nxt = acc * 1
    nxt[k % 3] += k
    return countdown(k - 1, nxt)


def main(n):
    print(build(n))
    return countdown(n, ops.zeros(3))

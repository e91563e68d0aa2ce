# args: 5
# In-place updates in loops, branches and recursion: a buffer filled row by row, an
# accumulator updated under a condition, and a recursive fill.
from anfora import ops


def fill(buf, i, n):
    if i == n:
        return buf
    out = buf * 1
    out[i] = i * i
    return fill(out, i + 1, n)


def main(n):
    buf = ops.zeros((n, 2))
    for i in range(n):
        row = ops.tensor([float(i), float(i * 2)])
        buf[i] = row
        if i % 2 == 1:
            buf[i] *= -1.0
    acc = ops.zeros(2)
    i = 0
    while i < n:
        acc += buf[i]
        i += 1
    print(buf)
    print(acc)
    print(fill(ops.zeros(n), 0, n))
    return acc

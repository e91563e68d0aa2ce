# args: 3
# A helper builds and updates its own array on every call; the caller's arrays are never
# touched.
from anfora import ops


def onehot(k, n):
    v = ops.zeros(n)
    v[k] = 1.0
    return v


def main(n):
    rows = ()
    for k in range(n):
        r = onehot(k, n) * (k + 1)
        r += 0.5
        rows = rows + (r,)
    eye = ops.stack(rows)
    print(eye)
    again = onehot(0, n)
    return again

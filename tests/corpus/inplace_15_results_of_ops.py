# Results of operations and reductions are fresh arrays of the function's own.
from anfora import ops


def main():
    x = ops.tensor([[1.0, 2.0], [3.0, 4.0]])
    s = x.sum(axis=0)
    s += 10.0
    m = ops.maximum(x, 2.5)
    m[0, 0] = -1.0
    c = ops.concat((x, x), axis=0)
    c[2:] *= -1.0
    w = ops.where(x > 2.0, x, 0.0)
    w -= 1.0
    z = x.astype("int64")
    z += 1
    print(s, m, c, w, z, sep="\n")
    return x

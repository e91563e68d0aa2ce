# Integer-array indices: repeated indices (the last write wins, `+=` adds once), negative
# indices, lists as indices, and indices along the second axis.
from anfora import ops


def main():
    x = ops.zeros(5)
    x[ops.tensor([0, 2, 2, -1])] = ops.tensor([1.0, 2.0, 3.0, 4.0])
    print(x)
    x[ops.tensor([1, 1, 1])] += 1.0
    print(x)
    m = ops.zeros((2, 4))
    m[:, ops.tensor([0, 3])] = 7.0
    m[1, ops.tensor([1, 2])] = ops.tensor([5.0, 6.0])
    print(m)
    return x.sum() + m.sum()

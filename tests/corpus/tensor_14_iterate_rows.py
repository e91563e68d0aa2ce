# Iterating over tensor rows with for.
from anfora import ops


def main():
    m = ops.reshape(ops.arange(6), (3, 2))
    total = 0
    for row in m:
        print("row", row, row.shape, row.sum())
        total = total + row.sum()
    print("total", total)
    for i, row in enumerate(m):
        print(i, row[0], row[1])
    for x in ops.tensor([1.5, 2.5]):
        print(x, x.shape, x.dtype)
    for a, b in zip(ops.arange(3), ops.tensor([10, 20, 30])):
        print(a * b, end=" ")
    print()
    for v in ops.reshape(ops.arange(8), (2, 2, 2)):
        print(v.shape, v.sum(axis=0))
    return total

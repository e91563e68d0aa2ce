# Recursive functions over tensors: matrix power and recursive sum of halves.
from anfora import ops


def mat_pow(m, n):
    if n == 0:
        return ops.tensor([[1, 0], [0, 1]])
    if n % 2 == 0:
        h = mat_pow(m, n // 2)
        return h @ h
    return m @ mat_pow(m, n - 1)


def rsum(t):
    if len(t) == 1:
        return t[0]
    mid = len(t) // 2
    return rsum(t[:mid]) + rsum(t[mid:])


def main():
    fib = ops.tensor([[1, 1], [1, 0]])
    for n in (1, 2, 5, 10, 30):
        print(n, mat_pow(fib, n)[0, 1])
    print(rsum(ops.arange(100)), rsum(ops.tensor([0.5, 0.25, 0.125])))
    return mat_pow(fib, 20)

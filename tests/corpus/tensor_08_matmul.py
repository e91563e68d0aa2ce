# Matrix multiplication with @ and ops.matmul.
from anfora import ops


def main():
    a = ops.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = ops.tensor([[0.0, 1.0], [1.0, 0.0]])
    print(a @ b)
    print(ops.matmul(b, a))
    i = ops.tensor([[1, 0], [0, 1]])
    print(a @ i, (a @ i).dtype)
    v = ops.tensor([1.0, -1.0])
    print(a @ v, v @ a, v @ v, (v @ v).shape)
    m = ops.reshape(ops.arange(6), (2, 3))
    n = ops.reshape(ops.arange(12), (3, 4))
    p = m @ n
    print(p, p.shape, p.dtype)
    batch = ops.ones((2, 2, 3)) @ ops.ones((3, 2))
    print(batch.shape, batch)
    return a @ a @ a

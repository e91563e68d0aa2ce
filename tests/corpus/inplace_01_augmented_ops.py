# In-place operators on tensors a function computes: numpy keeps the array's dtype and shape.
import anfora
from anfora import ops


def main():
    x = ops.zeros((2, 3))
    x += 1.5
    x *= ops.tensor([1.0, 2.0, 3.0])
    x -= 0.5
    x /= 2.0
    print(x)
    n = ops.arange(6).reshape((2, 3)) * 1
    n += 7
    n //= 2
    n %= 3
    n **= 2
    print(n, n.dtype)
    f = ops.ones(3, dtype=anfora.float32) * 1
    f += ops.tensor([1.0, 2.0, 3.0], dtype=anfora.float64)
    print(f, f.dtype)
    b = ops.tensor([True, False, True]) | False
    b &= ops.tensor([True, True, False])
    b ^= True
    print(b)
    m = ops.tensor([[1.0, 0.0], [0.0, 1.0]]) * 1.0
    m @= ops.tensor([[1.0, 2.0], [3.0, 4.0]])
    print(m)
    return x.sum() + n.sum()

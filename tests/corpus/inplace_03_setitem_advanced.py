# Integer-array and boolean-mask indices, broadcasting of the value, and numpy's casting on
# assignment (a float into an int array truncates).
import anfora
from anfora import ops


def main():
    x = ops.arange(8) * 1
    x[ops.tensor([1, 3, 5])] = ops.tensor([10, 30, 50])
    x[ops.tensor([0, 0, 2])] = 7
    x[x > 40] = -4
    print(x)
    y = ops.zeros((3, 3))
    y[ops.tensor([0, 2]), ops.tensor([1, 2])] = 1.0
    y[ops.tensor([True, False, True])] += ops.tensor([1.0, 2.0, 3.0])
    y[1] = ops.tensor([[4.0, 5.0, 6.0]])[0]
    print(y)
    k = ops.zeros(4, dtype=anfora.int64) * 1
    k[1] = 2.9
    k[2:] = ops.tensor([-1.7, 3.2])
    print(k, k.dtype)
    return x.sum() + y.sum()

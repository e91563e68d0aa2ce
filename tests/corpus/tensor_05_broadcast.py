# Broadcasting between tensors of different shapes.
from anfora import ops


def main():
    col = ops.reshape(ops.arange(3), (3, 1))
    row = ops.arange(4)
    grid = col * 10 + row
    print(grid, grid.shape)
    m = ops.ones((2, 3))
    v = ops.tensor([1.0, 2.0, 3.0])
    print(m + v)
    print(m * ops.tensor([[2.0], [3.0]]))
    s = ops.tensor(5)
    print(row + s, (row + s).shape, s + s, (s + s).shape)
    cube = ops.ones((2, 1, 3), dtype="int64")
    print((cube + ops.reshape(ops.arange(2), (2, 1))).shape)
    return grid - row

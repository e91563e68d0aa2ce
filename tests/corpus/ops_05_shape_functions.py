# ops.squeeze, ops.expand_dims and ops.broadcast_to with numpy's axis rules.
from anfora import ops


def main():
    x = ops.arange(6).reshape(1, 2, 1, 3)
    print(ops.squeeze(x).shape, ops.squeeze(x, 0).shape, ops.squeeze(x, axis=2).shape)
    print(ops.squeeze(x, (0, 2)).shape, ops.squeeze(x, [-2]).shape, ops.squeeze(x))
    print(ops.squeeze(ops.ones((1, 1))), ops.squeeze(ops.ones((1, 1))).shape, ops.squeeze(ops.zeros((0, 1))).shape)
    y = ops.tensor([[1.5, 2.5], [3.5, 4.5]])
    for axis in (0, 1, 2, -1, -3):
        print("expand", axis, ops.expand_dims(y, axis).shape)
    print(ops.expand_dims(y, (0, 3)).shape, ops.expand_dims(y, [-1, 0]).shape, ops.expand_dims(ops.tensor(7), 0))
    print(ops.expand_dims(y, 1), ops.expand_dims(y, 0).dtype)
    b = ops.broadcast_to(ops.tensor([1, 2, 3]), (2, 3))
    print(b, b.dtype, b.shape)
    print(ops.broadcast_to(ops.tensor(2.5), 3), ops.broadcast_to(ops.tensor([[1.0], [2.0]]), [2, 2, 4]).shape)
    print(ops.broadcast_to(ops.tensor([True]), (2, 2)), ops.broadcast_to(ops.ones((1, 3)), (0, 3)).shape)
    col = ops.expand_dims(ops.arange(3), 1)
    row = ops.expand_dims(ops.arange(4), 0)
    grid = ops.broadcast_to(col, (3, 4)) * 10 + ops.broadcast_to(row, (3, 4))
    print(grid)
    print(ops.squeeze(ops.expand_dims(grid, (0, 2))).shape, ops.squeeze(grid[1:2, :]), ops.squeeze(grid[:, 2:3], 1))
    acc = ops.zeros((1, 3))
    for k in range(3):
        acc = acc + ops.expand_dims(ops.tensor([1.0, 2.0, 3.0]) * k, 0)
    print(ops.squeeze(acc, 0), ops.broadcast_to(ops.squeeze(acc), (2, 3)).sum(axis=0))
    return (ops.squeeze(x, 0).shape, ops.broadcast_to(ops.arange(2), (2, 2)))

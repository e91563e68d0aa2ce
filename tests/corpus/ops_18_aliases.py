# The names PyTorch and MindSpore users expect: ops.permute (transpose with the axes
# required, also x.permute(*axes)), ops.unsqueeze (expand_dims) and
# ops.index_select(x, axis, index) (take along an axis of a 1-D int32 or int64 index).
from anfora import ops


def rows(table, ids):
    return ops.index_select(table, 0, ids)


def main():
    x = ops.arange(24).reshape(2, 3, 4)
    print(ops.permute(x, (2, 0, 1)).shape, ops.permute(x, [1, 2, 0])[0], x.permute(2, 1, 0).shape)
    print(x.permute((0, 2, 1))[1], ops.permute(x, (-1, 0, 1)).shape, ops.permute(ops.tensor([1, 2]), (0,)))
    print(ops.unsqueeze(x, 0).shape, ops.unsqueeze(x, -1).shape, ops.unsqueeze(ops.tensor([1.5, 2.5]), 1))
    print(ops.unsqueeze(ops.tensor(3), (0, 1)).shape)
    table = ops.tensor([[0.0, 0.5], [1.0, 1.5], [2.0, 2.5]])
    print(rows(table, ops.tensor([2, 0, 2])), rows(table, ops.tensor([1], dtype="int32")))
    print(ops.index_select(x, 2, ops.tensor([3, 0])), ops.index_select(x, -2, ops.tensor([-1, 0])).shape)
    print(ops.index_select(x, 1, ops.tensor([], dtype="int64")).shape, ops.index_select(table, 1, ops.tensor([1, 1, 0])).dtype)
    acc = ops.zeros(2)
    for k in range(3):
        acc = acc + ops.index_select(table, 0, ops.tensor([k]))[0]
    print(acc)
    return (ops.permute(table, (1, 0)), ops.unsqueeze(table, 0).shape, ops.index_select(table, 1, ops.tensor([0])))

# PyTorch's 2-D paddings of (N, C, H, W) and (C, H, W) tensors: ops.reflection_pad2d,
# ops.replication_pad2d and ops.zero_pad2d, padding an int or (left, right, top, bottom).
from anfora import ops


def main():
    x = ops.arange(12).reshape(1, 2, 2, 3)
    print(ops.reflection_pad2d(x, (2, 1, 1, 0)))
    print(ops.replication_pad2d(x, (0, 2, 3, 1)))
    print(ops.zero_pad2d(x, 1))
    chw = ops.tensor([[[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]]])
    print(ops.reflection_pad2d(chw, 1), ops.reflection_pad2d(chw, [2, 2, 1, 1]).shape)
    print(ops.replication_pad2d(chw, 4).shape, ops.zero_pad2d(chw, (0, 0, 2, 0)))
    print(ops.zero_pad2d(x, (1, 1, 0, 0)).dtype, ops.reflection_pad2d(chw, 0).shape, ops.replication_pad2d(ops.ones((2, 3, 1, 1)), 2).sum())
    batch = ops.arange(16, dtype="float32").reshape(2, 2, 2, 2)
    y = batch
    for k in range(3):
        y = ops.reflection_pad2d(y, 1)
        print("round", k, y.shape, y[1, 1, 0])
    print(ops.replication_pad2d(ops.zeros((1, 1, 0, 2)), (1, 1, 0, 0)).shape, ops.zero_pad2d(ops.zeros((1, 0, 2)), 1).shape)
    return (ops.reflection_pad2d(ops.arange(4).reshape(1, 2, 2), (1, 0, 0, 1)), ops.zero_pad2d(ops.ones((1, 1, 1)), (0, 1, 1, 0)))

# TypeError: ops.index_select (MindSpore's argument order: input, axis, index) needs a
# 1-D int32 or int64 index tensor.
from anfora import ops


def pick(x, index):
    return ops.index_select(x, 1, index)


def main():
    x = ops.arange(6).reshape(2, 3)
    print(pick(x, ops.tensor([2, 0])), pick(x, ops.tensor([1], dtype="int32")))
    print(pick(x, ops.tensor([0.0, 1.0])))
    return "unreachable"

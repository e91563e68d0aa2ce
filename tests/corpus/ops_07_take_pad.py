# ops.take / ops.gather (numpy's take, mode 'raise': negative indices wrap, axis
# None flattens) and ops.pad (numpy's constant mode, constant_values cast to x's dtype).
import anfora
from anfora import ops


def lookup(table, ids):
    return ops.take(table, ids, axis=0)


def main():
    x = ops.arange(12).reshape(3, 4)
    print(ops.take(x, [0, -1, 5]), ops.take(x, 7), ops.take(x, -1).shape)
    print(ops.take(x, ops.tensor([[2, 0], [1, 1]], dtype="int32"), axis=0))
    print(ops.take(x, 1, axis=1), ops.take(x, [3, 0], axis=-1), ops.gather(x, [True, False], 1))
    print(ops.take(x, [], axis=1).shape, ops.take(x, []).shape, ops.take(ops.zeros((0, 2)), [1], axis=1).shape)
    emb = ops.tensor([[0.0, 0.5], [1.0, 1.5], [2.0, 2.5]])
    ids = ops.tensor([2, 0, 2, 1])
    e = lookup(emb, ids)
    print(e, e.dtype, e.shape, lookup(emb, ops.tensor([[1, -1]])).shape)
    total = ops.zeros(2)
    for k in range(3):
        total = total + ops.gather(emb, k, axis=0)
    print(total)
    print(ops.pad(x, 1), ops.pad(x, (1, 2)).shape, ops.pad(x, ((1, 0), (0, 2)), constant_values=9))
    print(ops.pad(ops.tensor([1.5, 2.5]), 2, constant_values=-1), ops.pad(ops.tensor([1.5]), [[1, 2]], "constant", 0.25))
    print(ops.pad(ops.tensor([1, 2], dtype="int32"), 1, constant_values=7.9), ops.pad(ops.tensor([1, 2]), (2,), constant_values=-3).dtype)
    print(ops.pad(ops.tensor([True]), 1), ops.pad(ops.tensor([1.0]), 1, constant_values=float("nan")), ops.pad(ops.tensor([1.0]), 1, constant_values=float("-inf")))
    print(ops.pad(ops.tensor(5), 3), ops.pad(ops.zeros((0, 2)), 1).shape, ops.pad(x, ((0, 0), (1, 1)), constant_values=ops.tensor(8)))
    print(ops.pad(ops.tensor([[1.0]], dtype="float64"), ((1,), (2,)), constant_values=ops.tensor([0.5])), ops.pad(x, 0).shape)
    img = ops.ones((2, 2), dtype=anfora.float32)
    for k in range(2):
        img = ops.pad(img, 1, constant_values=k + 2)
    print(img, img.shape)
    return (ops.take(x, [1, 1], axis=0), ops.pad(ops.arange(2), (0, 1)))

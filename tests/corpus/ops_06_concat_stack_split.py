# ops.concat (numpy's concatenate: dtypes promoted), ops.stack and ops.split
# (sections or indices, slice semantics), with tuples and lists of tensors built
# in loops and chosen in branches.
from anfora import ops


def join(parts, along_rows):
    if along_rows:
        return ops.concat(parts, axis=0)
    return ops.concat(parts, axis=1)


def main():
    a = ops.arange(6).reshape(2, 3)
    b = ops.tensor([[0.5, 1.5, 2.5]])
    c = ops.concat((a, b))
    print(c, c.dtype, c.shape)
    print(ops.concat([a, a], axis=1), ops.concat([a, a], -1).shape, ops.concat([a]).shape)
    print(ops.concat([ops.tensor([True, False]), ops.tensor([7], dtype="int32")]), ops.concat((ops.tensor([1], dtype="int32"), ops.tensor([2.5]))).dtype)
    print(ops.concat([ops.zeros((0, 3)), b]), ops.concat([ops.zeros(0), ops.zeros(0)]).shape)
    s = ops.stack([a, a * 10, a * 100], axis=1)
    print(s, s.shape)
    print(ops.stack((ops.tensor(1), ops.tensor(2.5))), ops.stack([a, a], axis=-1).shape, ops.stack([a, a], 2).shape)
    print(ops.stack([ops.tensor([1]), ops.tensor([True])]).dtype, ops.stack([b]).shape)
    x = ops.arange(12).reshape(3, 4)
    p, q = ops.split(x, 2, axis=1)
    print(p, q)
    r0, r1, r2 = ops.split(x, 3)
    print(r0, r1, r2, r0.shape)
    parts = ops.split(x, (1, 3), axis=1)
    print(len(parts), parts[0].shape, parts[1].shape, parts[2].shape, parts[1])
    odd = ops.split(x, [3, 1], 1)
    print(odd[0].shape, odd[1].shape, odd[2].shape)
    neg = ops.split(ops.arange(5), [-1, 10])
    print(neg[0], neg[1], neg[2], ops.split(x, [2], axis=-1)[1])
    print(ops.split(ops.zeros((0, 2)), 2)[1].shape, ops.split(x, ())[0].shape, ops.split(x, 1)[0].shape)
    rows = ()
    for k in range(4):
        rows = rows + (ops.full((1, 2), k),)
    m = ops.concat(rows)
    print(m, ops.stack(rows).shape)
    print(join([a, a], True).shape, join([a, a], False).shape)
    u, v = ops.split(m, 2)
    print(ops.concat([v, u]), ops.stack(ops.split(m, 4)).shape)
    return (ops.concat([b, b], axis=1), ops.split(ops.arange(4), 2))

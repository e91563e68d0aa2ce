# Tensor-only ops: cast, where, sum, mean, reshape, transpose, zeros_like.
import anfora as af
from anfora import ops


def main():
    x = ops.tensor([[1.7, -2.2], [3.5, 0.0]])
    print(ops.cast(x, af.int32), ops.cast(x, "bool"), ops.cast(x > 0, af.float32))
    print(ops.where(x > 0, x, ops.zeros_like(x)))
    print(ops.where(x < 0, -1, 1), ops.where(x == 0, 0.5, x))
    print(ops.sum(x), ops.sum(x, 0), ops.mean(x, axis=1), ops.prod(x, axis=0, keepdims=True))
    print(ops.reshape(x, 4), ops.reshape(x, [4, 1]).shape, ops.transpose(x))
    print(ops.ones_like(x), ops.zeros_like(x, dtype=af.int64), ops.ones_like(x, "bool"))
    return ops.cast(ops.sum(x, axis=1), af.int64)

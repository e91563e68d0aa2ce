# Tensor creation with explicit dtypes (DType objects and names).
import anfora as af
from anfora import ops


def main():
    a = ops.zeros((2, 2), dtype=af.int32)
    b = ops.ones(3, "float64")
    c = ops.full((2,), 3, dtype="float32")
    d = ops.arange(4, dtype=af.float64)
    e = ops.tensor([1, 0, 2], dtype="bool")
    f = ops.tensor([1.9, -1.9, 2.5], dtype=af.int64)
    g = ops.tensor([[1, 2]], dtype=af.float32)
    h = ops.arange(3, dtype="bool_")
    for t in (a, b, c, d, e, f, g, h):
        print(repr(t), t.dtype, sep=" :: ")
    print(ops.full(3, 1.5, dtype=af.int32), ops.zeros(0), ops.arange(0))
    return (a, f)

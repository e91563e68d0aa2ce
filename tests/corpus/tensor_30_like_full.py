# zeros_like, ones_like and full with each kind of fill value.
import anfora as af
from anfora import ops


def main():
    x = ops.arange(6).reshape(2, 3)
    z = ops.zeros_like(x)
    o = ops.ones_like(x, dtype=af.float32)
    print(z, z.dtype, o, o.dtype)
    print(ops.full((2, 2), False), ops.full(3, -1), ops.full((1, 2), 2.5), ops.full(2, 7, "float64"))
    print(ops.zeros_like(ops.tensor(1.5)), repr(ops.ones_like(ops.tensor([True]))))
    return ops.full((2,), 9) + ops.ones_like(ops.arange(2))

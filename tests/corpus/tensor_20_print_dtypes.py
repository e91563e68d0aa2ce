# Printing (str and repr) tensors of every dtype.
import anfora as af
from anfora import ops


def main():
    base = ops.tensor([0, 1, 2, -3])
    for dt in (af.float32, af.float64, af.int32, af.int64, af.bool_):
        t = base.astype(dt)
        print(dt, t)
        print(repr(t))
    f = ops.tensor([0.1, 1.0 / 3.0, 100.0, 1e-4])
    print(f, repr(f))
    print(f.astype(af.float64), repr(f.astype("float64")))
    g = ops.tensor([1e10, 1.0, -2.5], dtype=af.float64)
    print(g, repr(g))
    print(ops.tensor([1.0, 2.0]), ops.tensor(0.5), repr(ops.tensor(0.5)), repr(ops.tensor(3)))
    print(repr(ops.tensor(True)), repr(ops.tensor(2, dtype=af.int32)), repr(ops.tensor(2.0, dtype=af.float64)))
    return (base.astype(af.int32), base > 0)

# ops.sign (numpy's: dtype kept, both zeros give 0, NaN stays NaN) and ops.clip
# (minimum(maximum(x, min), max) with broadcasting, promotion and None bounds).
from anfora import ops


def clamp_all(values, lo, hi):
    out = ()
    for v in values:
        out = out + (ops.clip(v, lo, hi),)
    return out


def main():
    f = ops.tensor([-2.5, -0.0, 0.0, 0.75, float("inf"), float("-inf"), float("nan")])
    print(ops.sign(f), ops.sign(f).dtype)
    print(ops.sign(ops.cast(f[:4], "float64")), ops.sign(ops.tensor([-7, 0, 9])), ops.sign(ops.tensor([-3, 4], dtype="int32")).dtype)
    print(ops.sign(-5), ops.sign(0), ops.sign(7), ops.sign(True), ops.sign(-2.5), ops.sign(-0.0), ops.sign(0.5))
    x = ops.tensor([-3.0, -1.0, 0.0, 0.5, 2.0, 9.0])
    print(ops.clip(x, -1.0, 1.0), ops.clip(x, 0, 2).dtype)
    print(ops.clip(x, min=0.0), ops.clip(x, max=0.0), ops.clip(x, None, None))
    print(ops.clip(x, 1.0, -1.0), ops.clip(f, -1.0, 1.0))
    i = ops.arange(-3, 4)
    print(ops.clip(i, -1, 2), ops.clip(i, -1, 2).dtype)
    c = ops.clip(i, 0.5, 2)
    print(c, c.dtype, ops.clip(ops.tensor([1, 5], dtype="int32"), 2, 3).dtype)
    lo = ops.tensor([[0.0], [1.0]])
    hi = ops.tensor([0.5, 1.5, 2.5, 3.5, 4.5, 5.5])
    print(ops.clip(x, lo, hi))
    print(ops.clip(x, lo, hi).shape, ops.clip(ops.tensor(4.0), lo, 2.0))
    print(ops.clip(5, 0, 3), ops.clip(-2, 0, 3), ops.clip(5, None, 3.5), ops.clip(1.5, 2, None), ops.clip(True, 0, 3))
    f64 = ops.tensor([0.1, 0.7], dtype="float64")
    print(ops.clip(f64, 0.2, 0.5), ops.clip(f64, ops.tensor([0.3]), 0.6).dtype)
    parts = clamp_all((x, i, ops.tensor([[10, -10]])), -2, 2)
    print(parts[0], parts[1], parts[2])
    s = ops.zeros(2)
    v = ops.tensor([5.0, -5.0])
    for k in range(4):
        s = ops.clip(s + ops.sign(v) * 1.5, -3.0, 3.0)
        print("step", k, s)
    return (ops.sign(x), ops.clip(i, -1, 1), ops.clip(3, 0, 1))

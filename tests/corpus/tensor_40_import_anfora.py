# Using `import anfora` directly, and isinstance with anfora.Tensor.
import anfora


def kind(x):
    if isinstance(x, anfora.Tensor):
        return "tensor" + str(x.shape)
    if isinstance(x, (int, float)):
        return "number"
    return "other"


def main():
    t = anfora.ops.arange(3)
    u = anfora.ops.add(t, 1)
    print(kind(t), kind(u.sum()), kind(2), kind(2.5), kind("t"))
    print(anfora.ops.add(1, 2), kind(anfora.ops.add(1, 2)), kind(anfora.ops.mul(t, 2)))
    print(u.dtype == anfora.int64, anfora.float32, repr(anfora.float64))
    return (u, kind(anfora.ops.tensor([1])))

# Float tensor division by zero gives inf/nan silently (no exception).
from anfora import ops


def main():
    f = ops.tensor([1.0, -1.0, 0.0])
    print(f / 0, f / ops.zeros(3), f // 0.0, f % 0.0)
    i = ops.tensor([1, -1, 0])
    print(i / 0, (i / 0).dtype)
    print(ops.log(ops.tensor([0.0, -1.0])), ops.sqrt(ops.tensor([-4.0])))
    inf = ops.tensor(1.0) / 0
    print(inf, inf - inf, inf > 1e30, float(inf), ops.exp(ops.tensor([100.0, 1000.0])))
    return (f / 0.0, i / 0.0)

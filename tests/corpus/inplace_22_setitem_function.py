# ops.setitem returns the assigned array and leaves its argument unchanged.
from anfora import ops


def main():
    x = ops.arange(4) * 1.0
    y = ops.setitem(x, 1, 10.0)
    z = ops.setitem(y, ops.tensor([0, 3]), ops.tensor([-1.0, -2.0]))
    print(x, y, z)
    return z

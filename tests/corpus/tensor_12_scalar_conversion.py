# float(), int() and item() on one-element (0-d) tensors.
from anfora import ops


def main():
    x = ops.tensor([1.5, 2.5, 3.0])
    s = x.sum()
    print(s, repr(s), float(s), int(s), s.item())
    n = ops.arange(10).sum()
    print(n, repr(n), int(n), float(n), n.item())
    v = x[1]
    print(v, float(v), int(v), int(-v), v.item(), repr(v.item()))
    b = (x > 2).sum()
    print(b, int(b) * 2)
    flag = ops.tensor(True)
    print(flag.item(), int(flag), float(flag))
    m = ops.tensor([[2.75]])
    print(m.item(), m.sum())
    return (float(s), int(n), s.item() + 1, ops.tensor(7).item())

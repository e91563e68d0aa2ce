# The `in` operator on tensors.
from anfora import ops


def main():
    t = ops.arange(5)
    print(3 in t, 7 in t, 2.0 in t, 2.5 in t, -1 not in t)
    m = ops.tensor([[1.5, 2.0], [3.0, 4.5]])
    print(4.5 in m, 1 in m, True in ops.tensor([False, True]))
    found = 0
    for k in range(10):
        if k in t:
            found += 1
    print("found", found)
    return (3 in t, 5 in t, ops.tensor(2) in t)

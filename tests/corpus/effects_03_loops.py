# args: 4
# A while loop that reads a Parameter and accumulates into an output, and a loop body never entered.
import anfora
from anfora import ops

p = anfora.Parameter(ops.tensor([1.0, 2.0]), name="p")


def main(n):
    out = ops.zeros((2,))
    i = 0
    while i < n:
        out = out + p
        p.assign_add(ops.ones((2,)))
        if i == 2:
            print("at 2:", p)
        i += 1
    j = 0
    while j < 0:
        p.assign(ops.zeros((2,)))
        j += 1
    for k in range(3):
        if k == 1:
            continue
        p.assign_sub(ops.full((2,), k + 0.5))
        if k == 2:
            break
    return out, p

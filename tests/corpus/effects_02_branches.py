# args: [1.0, -2.0], 3
# Parameter writes inside if/elif/else with tensor conditions and in a call used as condition.
import anfora
from anfora import ops

acc = anfora.Parameter(ops.zeros((2,)), name="acc")
count = anfora.Parameter(ops.zeros((), dtype=anfora.int64), name="count")


def bump(x):
    count.assign_add(1)
    return ops.sum(x) > 0.0


def main(x, n):
    for i in range(n):
        if bump(x * (i - 1)):
            acc.assign_add(x)
        elif ops.sum(acc) < -1.0:
            ops.assign(acc, ops.zeros((2,)))
            print("reset at", i)
        else:
            acc.assign_sub(x * 0.5)
        print(i, acc, count)
    return acc + 0, count + 0

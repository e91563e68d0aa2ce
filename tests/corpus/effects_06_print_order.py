# args: 3
# print interleaved with Parameter writes inside loops, in exact order.
import anfora
from anfora import ops

anfora.set_seed(0)
c = anfora.Parameter(ops.zeros((), dtype=anfora.int64), name="c")


def log(tag):
    print("log", tag, c)
    return tag


def main(n):
    for i in range(n):
        print("start", i)
        c.assign_add(i)
        log(i)
        j = 0
        while j < i:
            c.assign_add(10)
            print("  inner", j, c)
            j += 1
        print("end", i, c)
    print("done")
    return c + 0

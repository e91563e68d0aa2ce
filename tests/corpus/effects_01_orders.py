# args: [1.0, 2.0]
# Reads and writes of a Parameter in every order, in straight-line code.
import anfora
from anfora import ops

w = anfora.Parameter(ops.tensor([10.0, 20.0]), name="w")
v = anfora.Parameter(ops.zeros((2,)), name="v")


def main(x):
    before = w + 0          # read, then write: sees the old value
    ops.assign(w, x)
    after = w * 1           # write, then read: sees the new value
    ops.assign(v, w)        # copy a Parameter into another
    ops.assign(w, x * 3)    # write after write: the last one stays
    ops.assign(w, w + x)
    alias = w               # a name bound to the Parameter follows its writes
    w.assign_sub(ops.ones((2,)))
    print(before, after, v, alias)
    return w, v + 0

# args: [1.0]
# Functions that write a Parameter and return a constant: the constant result must not lose
# the write's place in the order (a read after the call sees it), whether the call is direct,
# through a variable, a method of the Parameter, or in a loop over a tuple of functions that
# is unrolled because the functions differ.
import anfora
from anfora import ops

w = anfora.Parameter(ops.zeros((2,)), name="w")


def add_to(x):
    w.assign_add(x)
    return 1


def scale(x):
    ops.assign(w, w * x)
    return 2


def keep(x):
    ops.assign_add(w, x)
    return x


def main(x):
    add_to(x + 1)
    scale(x + 1)
    print("direct", w)
    f = add_to
    f(x)
    print("through a variable", w)
    for g in (add_to, scale, keep):
        g(x + 1)
        print("in the loop", w)
    total = 0
    for g, k in zip((scale, add_to), (0.5, 2.0)):
        total = total + g(k)
    print("after", total, w)
    return w

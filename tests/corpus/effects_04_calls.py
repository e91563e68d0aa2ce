# args: [1.0, 1.0]
# Writes through nested calls, a tuple of functions, a closure returned by a function,
# a function passed as an argument, and calls whose value is unused.
import anfora
from anfora import ops

w = anfora.Parameter(ops.zeros((2,)), name="w")


def add_to(x):
    w.assign_add(x)
    return 1


def scale(x):
    ops.assign(w, w * x)
    return 2


def twice(f, x):
    f(x)
    return f(x)


def make_setter(k):
    def setter(x):
        ops.assign(w, x * k)
        print("set", w)
    return setter


def nested(x):
    add_to(x)
    return twice(add_to, x) + scale(x * 2)


def main(x):
    nested(x)                   # value unused
    fs = (add_to, scale)
    for f in fs:
        f(x + 1)
    print("after tuple", w)
    make_setter(5)(x)
    twice(make_setter(0.5), x)
    chosen = add_to if ops.sum(w) > 0.0 else scale
    chosen(x)
    return w

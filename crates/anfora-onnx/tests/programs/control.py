# Control flow beyond the basic if and while: a `for` loop over a range with an `if` in its
# body, nested loops, and a loop inside a branch.
import anfora
from anfora import ops


def forloop(x, n):
    acc = x
    for k in range(n):
        if ops.sum(acc) > 5.0:
            acc = acc * 0.5
        else:
            acc = acc + x + k
    return acc


def nested(x, n):
    total = ops.zeros_like(x)
    i = 0
    while i < n:
        j = 0
        while j < i:
            total = total + x * j
            j = j + 1
        i = i + 1
    return total


def loop_in_branch(x, n):
    if ops.max(x) > 0.0:
        while n > 0:
            x = ops.tanh(x) + 0.25
            n = n - 1
        return x
    return -x


w = anfora.Parameter(ops.reshape(ops.sin(ops.arange(16, dtype=anfora.float64)), (4, 4)) * 0.5, name="w")
b = anfora.Parameter(ops.cos(ops.arange(4, dtype=anfora.float64)) * 0.1, name="b")


def rnn(xs, h):
    # A recurrent cell over the rows of xs: the Parameters are read inside the loop.
    for t in range(xs.shape[0]):
        h = ops.tanh(h @ w + xs[t] + b)
    return h

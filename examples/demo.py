"""anfora demo: closures, recursion and a loop over tensors, compiled to MindIR-style graphs.

    anfora run examples/demo.py            # compile main() and run it
    anfora dump examples/demo.py           # print the IR
    python3 examples/demo.py               # the same file is ordinary Python
"""
from anfora import ops
import anfora as af

STEPS = 5


def make_affine(w, b):
    # A closure: `w` and `b` are free variables captured when `affine` is created.
    def affine(x):
        return x @ w + b
    return affine


def power(x, n):
    # Recursion (square-and-multiply) on tensors.
    if n == 0:
        return ops.ones(x.shape, af.float32)
    half = power(x, n // 2)
    if n % 2 == 0:
        return half * half
    return half * half * x


def compose(f, g):
    return lambda x: f(g(x))


def main():
    w = ops.tensor([[0.5, -1.0], [1.0, 0.25]])
    b = ops.tensor([0.1, -0.2])
    layer = make_affine(w, b)
    step = compose(ops.tanh, layer)

    x = ops.tensor([[1.0, 2.0], [-0.5, 0.75]])
    total = ops.zeros((2,))
    for i in range(STEPS):           # a loop over tensors
        x = step(x)
        total = total + ops.sum(x, axis=0)
        print("step", i, "mean", float(ops.mean(x)) > 0)
    for row in x:                     # iterating over the rows of a tensor
        print("row norm^2 > 0:", bool(ops.sum(row * row) > 0))
    cube = power(ops.tensor([1.0, 2.0, 3.0]), 3)
    return cube, total.shape, x.dtype


if __name__ == "__main__":
    print(repr(main()))

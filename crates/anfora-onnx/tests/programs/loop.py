# A `while` loop over tensors with a Python int counter (exported as ONNX Loop).
from anfora import ops


def loop(x, limit):
    total = ops.zeros_like(x)
    i = 0
    while ops.sum(total) < limit:
        total = total + x * 0.5 + i
        i = i + 1
    return total, i

# ValueError: ops.pad's constant_values is converted to the tensor's dtype, and NaN
# has no integer value.
from anfora import ops


def frame(x, v):
    return ops.pad(x, 1, constant_values=v)


def main():
    print(frame(ops.tensor([1.5]), float("nan")))
    print(frame(ops.tensor([1, 2]), 2.75), frame(ops.tensor([True]), 0.0))
    print(frame(ops.tensor([1, 2], dtype="int32"), float("nan")))
    return "unreachable"

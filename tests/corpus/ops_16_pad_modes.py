# ops.pad in numpy's modes 'reflect', 'symmetric' and 'edge' besides 'constant':
# widths beyond the axis reflect again and again, a single element reflects onto
# itself, 0-d and empty tensors, every dtype, mode by position or keyword. The mode
# is a compile-time constant (a literal, or a str argument), never a loop variable.
import anfora
from anfora import ops


def frame(x, mode):
    return ops.pad(x, ((1, 2), (3, 1)), mode)


def main():
    x = ops.arange(6).reshape(2, 3)
    print(frame(x, "constant"), frame(x, "constant").shape)
    print(frame(x, "reflect"), frame(x, "reflect").shape)
    print(frame(x, "symmetric"))
    print(frame(x, "edge"))
    r = ops.arange(3)
    print(ops.pad(r, (7, 5), "reflect"), ops.pad(r, (8, 4), mode="symmetric"))
    print(ops.pad(r, 9, "edge"), ops.pad(r, (0, 4), "reflect"), ops.pad(r, (5, 0), "symmetric"))
    print(ops.pad(ops.tensor([[5], [6]]), ((0, 0), (2, 1)), "reflect"))
    print(ops.pad(ops.tensor([4.5, -1.0]), 3, "reflect"), ops.pad(ops.tensor([4.5, -1.0]), 3, "symmetric"))
    f = ops.tensor([[0.5, 1.5], [2.5, 3.5]], dtype="float64")
    print(ops.pad(f, 1, mode="edge"), ops.pad(f, ((0, 1),), "reflect").dtype)
    print(ops.pad(ops.tensor([True, False]), (2, 1), "symmetric"), ops.pad(ops.tensor([1, 2], dtype="int32"), 2, "reflect").dtype)
    print(ops.pad(ops.tensor(5), 3, "reflect"), ops.pad(ops.tensor(2.5), 1, "edge").shape)
    print(ops.pad(ops.zeros((0, 2)), ((0, 0), (1, 2)), "edge").shape, ops.pad(ops.zeros((0, 2)), 1, "constant").shape)
    print(ops.pad(x, 1, "constant", 7), ops.pad(x, 1, "edge", None).shape, ops.pad(x, 0, "reflect"))
    cube = ops.arange(8).reshape(2, 2, 2)
    print(ops.pad(cube, ((1, 0), (0, 1), (1, 1)), "symmetric").sum(), ops.pad(cube, 1, "reflect")[0])
    img = ops.arange(4).reshape(2, 2)
    for k in range(2):
        img = ops.pad(img, 1, "edge")
        img = ops.pad(img, (0, k), "symmetric")
    print(img, img.shape)
    return (ops.pad(ops.arange(4), (2, 6), "reflect"), ops.pad(ops.arange(2), 3, "symmetric"))

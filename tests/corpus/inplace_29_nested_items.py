# `x[i][j] = v` writes through the view `x[i]` into `x`, as numpy does: items, slices and
# masks of a row, three levels deep, augmented, and another name of the array sees it.
from anfora import ops


def main():
    x = ops.zeros((3, 4))
    y = x
    for i in range(3):
        for j in range(4):
            x[i][j] = i * 10 + j
    x[1][1:3] += 100.0
    x[2][x[2] > 22.0] = -1.0
    x[0][...] *= 2.0
    x[:, 1][0] = 0.5
    z = ops.zeros((2, 2, 2))
    z[1][0][1] = 7.0
    z[0][1] = ops.tensor([1.0, 2.0])
    print(x, y)
    print(z)
    return x.sum() + z.sum()

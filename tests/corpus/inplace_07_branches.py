# args: 3
# In-place updates on branches and in nested loops, of tensors built in the function.
from anfora import ops


def main(n):
    grid = ops.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i == j:
                grid[i, j] = 1.0
            elif i < j:
                grid[i, j] += i + j
            else:
                grid[i, j] -= 1.0
    print(grid)
    v = ops.arange(n) * 2
    if n > 2:
        v *= 3
    else:
        v += 100
    print(v)
    return grid.sum()

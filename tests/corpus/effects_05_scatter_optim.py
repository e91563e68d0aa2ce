# args: 3
# scatter updates and optimizer steps on Parameters.
import anfora
from anfora import ops

table = anfora.Parameter(ops.zeros((4, 2)), name="table")
grid = anfora.Parameter(ops.zeros((3, 3), dtype=anfora.int64), name="grid")
w = anfora.Parameter(ops.tensor([1.0, -2.0, 3.0]), name="w")
acc = anfora.Parameter(ops.zeros((3,)), name="acc")
m = anfora.Parameter(ops.zeros((3,)), name="m")
v = anfora.Parameter(ops.zeros((3,)), name="v")
u = anfora.Parameter(ops.tensor([0.5, 0.5, 0.5]), name="u")


def main(steps):
    idx = ops.tensor([0, 2, 0], dtype=anfora.int32)
    rows = ops.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    ops.scatter_add(table, idx, rows)
    ops.scatter_update(table, ops.tensor([3]), ops.tensor([[7.0, 8.0]]))
    ops.scatter_nd_update(grid, ops.tensor([[0, 0], [2, 1], [1, 2]]), ops.tensor([5, 6, 7]))
    ops.scatter_nd_add(grid, ops.tensor([[0, 0], [0, 0]]), ops.tensor([1, 1]))
    for s in range(1, steps + 1):
        g = w * 2.0
        ops.sgd(u, g, 0.1)
        ops.apply_momentum(acc, m, 0.01, g, 0.9)
        ops.adam(w, m, v, g, s, lr=0.1)
    print(table)
    print(grid)
    return w, acc, m, v, u

# IndexError: ops.take with an index out of bounds (numpy's mode 'raise').
from anfora import ops


def lookup(table, ids):
    return ops.take(table, ids, axis=0)


def main():
    table = ops.tensor([[0.0, 0.5], [1.0, 1.5], [2.0, 2.5]])
    print(lookup(table, ops.tensor([2, -3])))
    print(ops.take(table, ops.tensor([5, -6])))
    print(lookup(table, ops.tensor([1, 3, 0])))
    return "unreachable"

# ZeroDivisionError: integer tensor floor-division by zero (anfora raises).
from anfora import ops


def per_group(total, groups):
    return total // groups


def main():
    totals = ops.tensor([10, 20, 30])
    print(per_group(totals, ops.tensor([2, 3, 4])))
    print(per_group(totals, 5))
    print(per_group(totals, ops.tensor([1, 0, 1])))
    return "unreachable"

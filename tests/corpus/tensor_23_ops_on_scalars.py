# ops elementwise functions on Python scalars return Python scalars.
import anfora as af
from anfora import ops


def main():
    print(ops.add(2, 3), ops.sub(2, 3.5), ops.mul(4, 2), ops.div(7, 2), ops.floor_div(-7, 2))
    print(ops.mod(-7, 3), ops.pow(2, 10), ops.pow(2, -1), ops.neg(5), ops.abs(-2.5))
    print(ops.maximum(3, 7), ops.minimum(3, 7.5), ops.equal(1, 1.0), ops.less(2, 1))
    print(ops.logical_not(0), ops.logical_not(3), ops.not_equal("a", "b"))
    print(af.ops.add("ab", "cd"), af.ops.mul((1,), 3))
    r = ops.add(1, ops.tensor([1, 2]))
    print(r, repr(ops.maximum(ops.tensor(1.0), 2)), ops.maximum(ops.arange(4), 2))
    print(ops.minimum(ops.tensor([1.5, -2.0]), ops.tensor([0.0, 0.0])))
    return (ops.add(1, 2), ops.div(1, 4), ops.maximum(2, 2.5), ops.greater_equal(3, 3))

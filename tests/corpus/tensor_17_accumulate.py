# A loop that accumulates tensors.
from anfora import ops


def main():
    acc = ops.zeros(3)
    for i in range(5):
        acc = acc + ops.tensor([1.0, 2.0, 3.0]) * i
        print("step", i, acc)
    total = ops.zeros((2, 2), dtype="int64")
    k = 0
    while k < 4:
        total = total + ops.full((2, 2), k)
        k += 1
    print(total, total.dtype)
    run = ops.tensor(1.0)
    for i in range(1, 21):
        run = run * 1.1
    print(run, run.dtype)
    return (acc, total, run)

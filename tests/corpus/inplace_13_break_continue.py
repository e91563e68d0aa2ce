# args: 7
# In-place updates in loops with break and continue.
from anfora import ops


def main(n):
    hist = ops.zeros(4, dtype=ops.tensor([1]).dtype)
    for i in range(n):
        if i % 3 == 0:
            continue
        hist[i % 4] += 1
        if hist.sum() >= 4:
            break
    print(hist)
    acc = ops.ones(2)
    k = 0
    while True:
        acc *= 1.5
        k += 1
        if k == 3:
            break
    return (hist, acc)

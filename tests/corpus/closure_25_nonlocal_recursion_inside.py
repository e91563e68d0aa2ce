# args: 6
# A nested helper with nonlocal state called from a loop, whose own recursion is a separate
# module-level function.
def fib(k):
    if k < 2:
        return k
    return fib(k - 1) + fib(k - 2)


def main(n):
    best = 0
    calls = 0

    def consider(v):
        nonlocal best, calls
        calls += 1
        if v > best:
            best = v

    for k in range(n):
        consider(fib(k) * (1 if k % 3 else -1))
    print("best", best, "calls", calls)
    return best

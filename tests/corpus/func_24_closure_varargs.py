# args: 3
# A nested function with *args that reads a late-bound variable and keeps a nonlocal count.
def main(n):
    scale = 1
    calls = 0

    def weighted(*xs):
        nonlocal calls
        calls += 1
        total = 0
        for x in xs:
            total += x * scale
        return total

    print(weighted(1, 2), weighted())
    scale = n
    t = (1, 2, 3)
    print(weighted(*t), weighted(4, *t))
    return calls

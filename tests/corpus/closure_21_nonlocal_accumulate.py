# args: 6
# nonlocal accumulators in loops and branches, and a nonlocal that is only read.
def main(n):
    evens = 0
    odds = ()
    scale = 2

    def record(i):
        nonlocal evens, odds
        if i % 2 == 0:
            evens = evens + i * scale
        else:
            odds = odds + (i,)
        return len(odds)

    for i in range(n):
        k = record(i)
        if k == 2:
            scale = 3
    print("evens", evens, "odds", odds, "scale", scale)
    return evens

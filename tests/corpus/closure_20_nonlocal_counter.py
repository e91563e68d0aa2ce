# nonlocal: a counter and a running maximum kept by nested functions.
def main():
    count = 0
    best = -1

    def tick():
        nonlocal count
        count += 1
        return count

    def see(v):
        nonlocal best
        if v > best:
            best = v
            return True
        return False

    for v in (3, 1, 4, 1, 5, 9, 2, 6):
        tick()
        if see(v):
            print("new best", best, "after", count)
    print("ticks", tick(), "best", best)
    return (count, best)

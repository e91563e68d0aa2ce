# Towers of Hanoi: counting moves and printing a small solution.
def hanoi(n, src, dst, via, verbose):
    if n == 0:
        return 0
    a = hanoi(n - 1, src, via, dst, verbose)
    if verbose:
        print("move disk", n, "from", src, "to", dst)
    b = hanoi(n - 1, via, dst, src, verbose)
    return a + 1 + b


def main():
    m3 = hanoi(3, "A", "C", "B", True)
    print("moves for 3:", m3)
    counts = ()
    for n in range(1, 13):
        counts = counts + (hanoi(n, "A", "C", "B", False),)
    print(counts)
    return (m3, counts[-1])

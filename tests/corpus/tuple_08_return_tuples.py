# Functions returning tuples; unpacking results.
def divmod_pos(a, b):
    return a // b, a % b


def stats(t):
    lo = t[0]
    hi = t[0]
    total = 0
    for v in t:
        if v < lo:
            lo = v
        if v > hi:
            hi = v
        total += v
    return lo, hi, total / len(t)


def minmax_pair(t):
    lo, hi, _ = stats(t)
    return (lo, hi), hi - lo


def main():
    q, r = divmod_pos(47, 5)
    print("q, r =", q, r)
    lo, hi, mean = stats((4, 8, 15, 16, 23, 42))
    print("lo, hi, mean =", lo, hi, mean)
    (a, b), span = minmax_pair((3, -1, 9))
    print(a, b, span)
    return stats((1, 2, 3, 4))

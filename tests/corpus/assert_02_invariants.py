# Assertions as loop invariants in a computation that succeeds.
def isqrt(n):
    lo = 0
    hi = n + 1 if n < 2 ** 31 else 2 ** 31
    while hi - lo > 1:
        assert lo * lo <= n < hi * hi
        mid = (lo + hi) // 2
        if mid * mid <= n:
            lo = mid
        else:
            hi = mid
    return lo


def main():
    for n in (0, 1, 2, 99, 100, 10 ** 12):
        r = isqrt(n)
        assert r * r <= n < (r + 1) * (r + 1), "isqrt wrong"
        print(n, r)
    return isqrt(2 ** 61)

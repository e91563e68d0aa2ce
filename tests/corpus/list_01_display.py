# List displays used as immutable values.
PRIMES = [2, 3, 5, 7, 11]


def total(xs):
    s = 0
    for x in xs:
        s += x
    return s


def main():
    print(PRIMES, len(PRIMES), PRIMES[0], PRIMES[-1], PRIMES[1:3])
    both = PRIMES + [13, 17]
    print(both, len(both), total(both))
    print([1, 2] == [1, 2], [1, 2] < [1, 3], 5 in PRIMES, 4 in PRIMES)
    print([], [[]], [1, [2, [3]]], [(1, 2), "s"])
    print(PRIMES[::-1], PRIMES[::2], [0] * 3)
    return both

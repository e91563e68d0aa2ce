# Deep (but bounded) recursion: sums and string building.
def rsum(n):
    if n == 0:
        return 0
    return n + rsum(n - 1)


def count_down(n, acc):
    if n == 0:
        return acc
    return count_down(n - 1, acc + 1)


def power_set_size(t):
    if len(t) == 0:
        return 1
    return 2 * power_set_size(t[1:])


def main():
    print(rsum(10), rsum(100), rsum(450))
    print(count_down(400, 0))
    print(power_set_size(tuple(range(20))))
    return rsum(300)

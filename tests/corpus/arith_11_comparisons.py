# Comparisons between ints and floats, and with bools.
def cmp(a, b):
    return (a < b, a <= b, a == b, a != b, a > b, a >= b)


def main():
    print(cmp(1, 2))
    print(cmp(2, 2.0))
    print(cmp(-1.5, -2))
    print(cmp(True, 1))
    print(cmp(0.1 + 0.2, 0.3))
    print(cmp(10 ** 18, 1e18))
    print(1 < 1.5, 2 > 1.9999999, -0.0 == 0, 0 == False)
    return cmp(3, 3.5)

# Integer floor division and modulo with every sign combination.
PAIRS = ((7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 3), (0, 5), (1, -100))


def show(a, b):
    q = a // b
    r = a % b
    print(a, "//", b, "=", q, " ", a, "%", b, "=", r)
    return q * b + r == a


def main():
    ok = True
    for p in PAIRS:
        a, b = p
        ok = ok and show(a, b)
    print("identity holds:", ok)
    return (-7 // 2, -7 % 2, 7 // -2, 7 % -2, -7 // -2, -7 % -2)

# Assorted integer arithmetic: precedence, large values, abs.
M = 1000000007


def mulmod(a, b):
    return (a * b) % M


def main():
    print(2 + 3 * 4, (2 + 3) * 4, 2 * 3 ** 2, -3 ** 2, 10 - 4 - 3)
    print(100 // 7 * 7 + 100 % 7, 17 % 5 * 3, 2 * -3 // 4)
    p = 1
    i = 0
    while i < 40:
        p = mulmod(p, 31)
        i += 1
    print("31^40 mod M =", p)
    big = 9000000000000000000
    print(big, big // 3, big % 7, -big)
    print(abs(-17), abs(17), abs(-2.5), abs(0))
    return (p, big // 1000, 123456789 * 987654321)

# Recursive gcd, extended gcd and lcm.
def gcd(a, b):
    if b == 0:
        return a
    return gcd(b, a % b)


def egcd(a, b):
    if b == 0:
        return (a, 1, 0)
    g, x, y = egcd(b, a % b)
    return (g, y, x - (a // b) * y)


def lcm(a, b):
    return a // gcd(a, b) * b


def main():
    print(gcd(48, 18), gcd(17, 5), gcd(0, 9), gcd(100, 75))
    g, x, y = egcd(240, 46)
    print("egcd:", g, x, y, 240 * x + 46 * y)
    m = 1
    for k in range(1, 21):
        m = lcm(m, k)
    print("lcm(1..20):", m)
    return (gcd(1071, 462), egcd(35, 15), m)

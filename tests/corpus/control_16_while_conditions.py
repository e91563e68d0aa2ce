# while loops with compound conditions.
def gcd_steps(a, b):
    steps = 0
    while b != 0 and steps < 100:
        a, b = b, a % b
        steps += 1
    return a, steps


def isqrt(n):
    x = n
    y = (x + 1) // 2
    while y < x:
        x = y
        y = (x + n // x) // 2
    return x


def main():
    print(gcd_steps(1071, 462), gcd_steps(17, 5), gcd_steps(5, 0))
    for n in (0, 1, 15, 16, 17, 1000000, 999999999999):
        print("isqrt", n, isqrt(n) if n > 0 else 0)
    i = 0
    j = 10
    while i < j and not (i == 3 and j == 7):
        i += 1
        j -= 1
    print(i, j)
    return (gcd_steps(48, 36), isqrt(123456789), i, j)

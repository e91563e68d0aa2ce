# Conversions combined with arithmetic.
def digits_sum(n):
    s = 0
    for ch in str(n):
        s += int(ch)
    return s


def main():
    print(digits_sum(12345), digits_sum(2 ** 50), str(2 ** 50))
    x = float(str(0.1 + 0.2))
    print(x, x == 0.1 + 0.2, int(str(7) * 3), float(str(1e16)))
    print(str(int(1e15)), repr(float(10 ** 15)), int(-2.5), int(2.5))
    return (digits_sum(999), float(int(3.7)), str(-0.0))

# The ** operator: ints, negative exponents, floats, right associativity.
def main():
    print(2 ** 10, 3 ** 0, 0 ** 0, (-2) ** 3, -2 ** 2)
    print(2 ** -1, 2 ** -3, 10 ** -2)
    print(2.0 ** 0.5, 9 ** 0.5, 2 ** 0.5)
    print(2 ** 3 ** 2, (2 ** 3) ** 2)
    print(1.5 ** 2, (-1.5) ** 3, 4.0 ** -0.5)
    print(2 ** 62, -(2 ** 62))
    base = 7
    acc = 1
    e = 0
    while e < 5:
        acc = acc * base
        e += 1
        print("7 **", e, "=", acc, acc == base ** e)
    return (3 ** 4, 2 ** -2, 2.0 ** 60, 10 ** 18)

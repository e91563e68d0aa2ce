# Chained comparisons evaluate the middle operand once and short-circuit.
def mid(x):
    print("  mid evaluated with", x)
    return x


def main():
    print(1 < 2 < 3, 3 > 2 > 2, 1 < 3 > 2, 1 == 1 == 1.0)
    print(0 <= 5 < 10, 0 <= 15 < 10, 1 < 2 <= 2 < 3)
    print("check 1:")
    r1 = 1 < mid(5) < 10
    print("check 2:")
    r2 = 10 < mid(5) < mid(20)
    print("check 3:")
    r3 = 1 < mid(2) < mid(3) < mid(4)
    print(r1, r2, r3)
    x = 7
    inside = 0 < x < 10 and x != 5
    return (r1, r2, r3, inside, -1 < x <= 7 != 8)

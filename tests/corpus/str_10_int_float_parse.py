# int() and float() of strings and numbers.
def parse_all(items):
    total = 0
    for s in items:
        total = total + int(s)
    return total


def main():
    print(int("42"), int("-17"), int("  8 "), int("007"), int("+5"))
    print(float("1.5"), float("-0.25"), float("1e3"), float("inf"), float("  2 "))
    print(parse_all(("1", "22", "333")), float("nan") == float("nan"))
    print(int(3.99), int(-3.99), int(0.5), int(-0.5), int(1e10), int(True))
    print(float(3), float(-0), float(True), int(float("2.5")))
    return (int("42") + 1, float("1.5") * 2, int(-7.9))

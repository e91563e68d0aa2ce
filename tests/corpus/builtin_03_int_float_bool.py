# int(), float() and bool() conversions.
def main():
    print(int(7.9), int(-7.9), int(2.0), int(-0.1), int(1e18), int(False))
    print(int("42"), int("-3"), int(" 12 "), float("1.5"), float("-2"), float("3e-2"))
    print(float(7), float(-1), float(True), float(0))
    print(bool(0), bool(1), bool(-3), bool(0.0), bool(0.1), bool(""), bool("0"))
    print(bool(()), bool((0,)), bool(None), bool([]), bool([0]))
    x = 3.999
    print(int(x), int(x * 1000), int(-x * 1000))
    return (int(9.99), float("1.5"), bool("x"), int("42") + int(42.9))

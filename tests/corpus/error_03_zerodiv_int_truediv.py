# ZeroDivisionError from int / int inside a nested call.
def ratio(a, b):
    return a / b


def ratios(t):
    for a, b in t:
        print(a, "/", b, "=", ratio(a, b))


def main():
    ratios(((1, 2), (3, 4), (5, 0), (6, 7)))
    return 0

# ZeroDivisionError from divmod with a zero divisor.
def split(n, parts):
    return divmod(n, parts)


def main():
    for p in (3, 2, 1, 0):
        print(p, split(10, p))
    return 0

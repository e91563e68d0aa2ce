# Higher-order functions returning pairs of closures sharing a capture.
def make_pair(n):
    def up(x):
        return x + n
    def down(x):
        return x - n
    return up, down


def roundtrip(pair, x):
    up, down = pair
    y = up(x)
    print("  up:", y, "down:", down(y))
    return down(y) == x


def main():
    p = make_pair(7)
    print(roundtrip(p, 3), roundtrip(make_pair(-2), 0))
    up, down = make_pair(100)
    return (up(1), down(1), p[0](p[1](5)))

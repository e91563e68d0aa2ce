# Keyword-only parameters, with and without defaults.
def scale(x, *, factor, offset=0):
    return x * factor + offset


def span(lo, hi, *, step=1, inclusive=False):
    end = hi + 1 if inclusive else hi
    return tuple(range(lo, end, step))


def main():
    print(scale(3, factor=2), scale(3, factor=2, offset=1), scale(offset=5, x=1, factor=10))
    print(span(0, 5), span(0, 5, inclusive=True), span(0, 10, step=3), span(5, 0, step=-2, inclusive=False))
    return (scale(1.5, factor=4), span(1, 3, inclusive=True))

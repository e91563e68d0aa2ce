# Tuples of functions.
def inc(x):
    return x + 1


def dbl(x):
    return x * 2


def sq(x):
    return x * x


PIPELINE = (inc, dbl, sq)


def run(fs, x):
    for f in fs:
        x = f(x)
        print("  ->", x)
    return x


def main():
    print("run:")
    r = run(PIPELINE, 3)
    ops = (inc, dbl, sq)
    print(ops[0](10), ops[-1](10), ops[1](ops[2](3)))
    rev = run(PIPELINE[::-1], 3)
    return (r, rev)

# args: 2
# Functions passed as values and called with star-arguments; lambdas with *args.
def apply_all(fs, *args):
    out = ()
    for f in fs:
        out = out + (f(*args),)
    return out


def main(n):
    add = lambda *xs: sum(xs)
    mul = lambda a, b, *rest: a * b + len(rest)
    first = lambda *xs: xs[0] if len(xs) > 0 else None
    print(apply_all((add, mul, first), n, 3))
    print(apply_all((add, first), *range(4)))
    print(add(), first(), mul(5, 1))
    return apply_all((add,), *(1, 2), *[3, 4])

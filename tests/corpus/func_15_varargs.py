# args: 2
# *args parameters collect extra positional arguments in a tuple; star-arguments spread a
# tuple, list or range into a call.
def total(first, *rest, scale=1):
    s = first
    for r in rest:
        s += r
    return s * scale, len(rest)


def pick(*args):
    if len(args) == 0:
        return None
    return args[-1]


def apply(f, *args):
    return f(*args)


def main(k):
    print(total(1))
    print(total(1, 2, 3))
    print(total(1, 2, scale=10))
    t = (4, 5, 6)
    print(total(*t), total(0, *t, 7), total(*t, scale=k))
    print(pick(), pick(1, "a"), pick(*[1, 2, 3]), pick(*range(k)))
    print(apply(total, 1, 2), apply(pick, 9))
    g = total
    print(g(1, 1), g(*(2, 2)))
    return total(*t)

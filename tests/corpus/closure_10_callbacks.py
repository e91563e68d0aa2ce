# Higher-order helpers: fold, map-like and filter-like over tuples.
def fold(f, acc, t):
    for x in t:
        acc = f(acc, x)
    return acc


def tmap(f, t):
    out = ()
    for x in t:
        out = out + (f(x),)
    return out


def tfilter(pred, t):
    out = ()
    for x in t:
        if pred(x):
            out = out + (x,)
    return out


def main():
    t = tuple(range(1, 11))
    print(fold(lambda a, b: a + b, 0, t), fold(lambda a, b: a * b, 1, t))
    print(tmap(lambda x: x * x, t))
    print(tfilter(lambda x: x % 3 == 0, t))
    evens_sq = tmap(lambda x: x * x, tfilter(lambda x: x % 2 == 0, t))
    print(evens_sq, fold(lambda a, b: max(a, b), 0, evens_sq))
    return (evens_sq, fold(lambda a, b: b + a, "", ("x", "y", "z")))

# A tuple of closures built by repeated calls to a factory (not in a loop def).
def make_adder(n):
    def add(x):
        return x + n
    return add


def build(k):
    if k == 0:
        return ()
    return build(k - 1) + (make_adder(k * 10),)


def main():
    adders = build(4)
    print(len(adders))
    res = ()
    for i, f in enumerate(adders):
        r = f(i)
        print(i, r)
        res = res + (r,)
    return res

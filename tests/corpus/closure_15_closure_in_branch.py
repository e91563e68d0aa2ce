# Nested defs inside branches; the chosen closure escapes.
def choose(kind, k):
    if kind == "lin":
        def f(x):
            return k * x
    elif kind == "sq":
        def f(x):
            return k * x * x
    else:
        f = lambda x: k
    return f


def main():
    fs = (choose("lin", 3), choose("sq", 2), choose("const", 9))
    for f in fs:
        print(f(1), f(2), f(3))
    return (fs[0](10), fs[1](10), fs[2](10))

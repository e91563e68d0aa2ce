# args: 2
# `**kwargs` collects the keyword arguments no other parameter takes, in call order; `*args`
# and keyword-only parameters around it bind as in Python.
def describe(a, b=10, *rest, scale=1, **opts):
    print(a, b, rest, scale, opts, len(opts))
    return (a + b) * scale


def main(n):
    r1 = describe(1)
    r2 = describe(1, 2, 3, 4, scale=n, lr=0.5, name="w")
    r3 = describe(b=5, a=n, tag=True)
    print(r1, r2, r3)
    return r1 + r2 + r3

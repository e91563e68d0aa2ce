# args: 3
# `for` loops over a dict walk its keys, as Python's do (each key a constant, so `d[k]`
# reads it), also under `enumerate` and `zip`, and over `**kwargs`.
def scaled(x, **factors):
    out = x
    for name in factors:
        out = out * factors[name]
    return out


def main(n):
    d = {"a": n, "b": n * 2, "c": 7}
    total = 0
    order = []
    for k in d:
        total = total + d[k]
        order = order + [k]
    print(total, order)
    for i, k in enumerate(d, 1):
        print(i, k, d[k])
    for k, j in zip(d, range(2)):
        print(k, j)
    print(list(d), tuple(d))
    return scaled(n, p=2, q=n), scaled(1.5)

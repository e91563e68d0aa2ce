# args: 3
# Dicts built from others: `{**a, 'k': v}` displays (later values win, keys keep their first
# place) and the `dict` builtin with a dict and keyword arguments.
def configure(**opts):
    base = {"lr": 0.1, "steps": 10}
    merged = {**base, **opts, "tag": "run"}
    return merged


def main(n):
    a = configure()
    b = configure(lr=0.5, extra=n)
    print(a)
    print(b)
    c = dict(b, steps=n * 2)
    d = dict(lr=1.0, momentum=0.9)
    e = dict(**d)
    print(c, d, e == d, dict() == {}, {**{}, "x": 1})
    print({"a": 1, **{"a": 2, "b": 3}, "b": 4})
    return len(c), c["steps"], e["momentum"]

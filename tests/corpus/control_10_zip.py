# for a, b in zip(...), including unequal lengths.
def dot(u, v):
    s = 0
    for a, b in zip(u, v):
        s += a * b
    return s


def main():
    names = ("x", "y", "z")
    vals = (1, 2, 3, 4, 5)
    for n, v in zip(names, vals):
        print(n, "=", v)
    print("dot:", dot((1, 2, 3), (4, 5, 6)), dot((1, 2), (3, 4, 5, 6)), dot((), (1,)))
    for a, b, c in zip("abc", (1, 2, 3), [True, False, None]):
        print(a, b, c)
    print(tuple(zip((1, 2, 3), "ab")), list(zip((1,), (2,))), tuple(zip((), (1, 2))))
    i = 0
    for a, b in zip((10, 20), (30, 40)):
        print(i, a + b)
        i += 1
    return (dot((1, 1, 1), (2, 3, 4)), tuple(zip(names, vals)))

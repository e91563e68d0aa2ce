# Tuple packing and unpacking, including nested targets.
def pair():
    return 1, (2, 3)


def main():
    t = 1, 2, 3
    a, b, c = t
    print(t, a, b, c)
    x, (y, z) = pair()
    print("x, (y, z):", x, y, z)
    (p, q), r = (10, 20), 30
    print(p, q, r)
    m, (n, (o, s)) = 1, (2, (3, "four"))
    print(m, n, o, s)
    [u, v] = (5, 6)
    w, [k, l] = 7, [8, 9]
    print(u, v, w, k, l)
    i = j = 4
    print(i, j)
    return (x, y, z, p, q, r, s)

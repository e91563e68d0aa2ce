# Unpacking and iterating list displays.
def main():
    a, b, c = [1, 2, 3]
    print(a, b, c)
    [x, y] = "xy"
    print(x, y)
    rows = [[1, 2], [3, 4], [5, 6]]
    s = 0
    for r in rows:
        p, q = r
        s += p * q
        print(r, p * q)
    print("sum of products:", s)
    print(list(range(4)), list((1, 2)), list("ab"), tuple([1, 2]))
    return (a + b + c, s, rows[1])

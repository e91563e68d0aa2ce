# Unpacking loop targets from lists of tuples and tuples of lists.
def main():
    pts = [(0, 0), (3, 4), (6, 8), (-5, 12)]
    far = 0
    for x, y in pts:
        d2 = x * x + y * y
        print((x, y), d2)
        if d2 > far:
            far = d2
    print("farthest d2:", far)
    for (a, b), c in (((1, 2), 3), ((4, 5), 6)):
        print(a, b, c)
    for a, [b, c] in ((1, [2, 3]),):
        print("list target:", a, b, c)
    return far

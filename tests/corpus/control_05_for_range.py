# for over range with one, two and three arguments.
def show(r):
    out = ()
    for i in r:
        out = out + (i,)
    return out


def main():
    print(show(range(5)))
    print(show(range(2, 7)))
    print(show(range(1, 20, 4)))
    print(show(range(10, 0, -3)))
    print(show(range(-5, 5, 2)))
    print(show(range(5, -6, -5)))
    print(len(range(0)), len(range(3, 3)), len(range(10, 1)), len(range(1, 10, -1)))
    print(len(range(0, 100, 7)), len(range(100, 0, -7)))
    return (show(range(3)), show(range(9, -1, -2)))

# True division always produces a float.
def avg(a, b):
    return (a + b) / 2


def main():
    print(7 / 2, 6 / 3, -7 / 2, 1 / 3, 2 / 3)
    print(1 / 7, 22 / 7, 10 / 4, 0 / 5, -0 / 5)
    print(avg(3, 4), avg(1, 2), avg(-5, 4))
    print(1e300 / 1e-10, 1 / 1e308 / 1e10)
    x = 100
    while x > 1:
        x = x / 3
        print("x:", x)
    return (9 / 3, 1 / 8, x)

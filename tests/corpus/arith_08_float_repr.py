# repr of floats at the edges of the shortest-repr algorithm.
def main():
    print(0.1 + 0.2, 0.1 + 0.7, 1.1 * 3)
    print(1e16, 1e15, 123456789012345678.0, 1e22)
    print(1e-5, 1e-4, 0.0001, 0.00001234)
    print(1 / 3, 2 / 3, 10 / 3)
    print(2.0 ** 60, 2.0 ** 53, 2.0 ** 53 + 1)
    print(-0.0, 0.0, 1.0, 100.0, 1.5e300)
    print(5e-324, 1.7976931348623157e308)
    print(repr(0.5), str(0.25), repr(3.0), str(-0.0))
    return (0.1 + 0.2, 1e16, 1e-5, 1 / 3, 2.0 ** 60, -0.0)

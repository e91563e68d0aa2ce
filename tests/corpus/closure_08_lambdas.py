# Lambdas: immediate calls, stored in names and tuples, returning tuples.
SQUARE = lambda x: x * x


def main():
    double = lambda x: x * 2
    add = lambda a, b: a + b
    const = lambda: 42
    swap = lambda a, b: (b, a)
    print(double(4), add(2, 3), const(), swap(1, 2), SQUARE(9))
    print((lambda x, y: x ** y)(2, 8))
    fs = (lambda x: x + 1, lambda x: x - 1, lambda x: -x)
    for f in fs:
        print(f(10), end=" ")
    print()
    pick = lambda c: (lambda: "yes") if c else (lambda: "no")
    print(pick(True)(), pick(False)())
    return (double(21), swap("a", "b"), fs[2](5))

# str() and repr() of numbers, bools, None and tuples.
def main():
    print(str(42), str(-7), str(3.5), str(1e20), str(1e-7), str(True), str(None))
    print(repr(42), repr(2.0), repr(False), repr(None))
    t = (1, "two", 3.0, None, True)
    print(str(t), repr(t))
    print(str(()), str((1,)), repr(("a",)), str(((1, 2), ("x", 'y'))))
    s = "n=" + str(10) + ", x=" + repr(0.1) + ", t=" + str((1, 2))
    print(s)
    print(len(str(123456)), len(repr("abc")), str("abc"), repr("abc"))
    return (str(12), repr("q"), str((1, "a")), repr(1.5))

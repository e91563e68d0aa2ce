# print of many value kinds, with and without separators.
def main():
    print(1, 2.0, -3.5e-7, True, None, "s", (1, "a"), [2, "b"], ())
    print()
    print("")
    print("a", "", "b")
    print(1e21, 1e20, 123456789.123456789, 0.000001, 0.0000001)
    print(-1, -0.5, (-1,), ((),))
    print("end", end="\n\n")
    print("x", 1, sep="")
    return None

# for i, x in enumerate(...) with and without a start.
def main():
    t = ("a", "b", "c")
    for i, x in enumerate(t):
        print(i, x)
    for i, x in enumerate(t, 1):
        print(i, x, sep=":")
    for i, ch in enumerate("xyz", start=10):
        print(i, ch, end="; ")
    print()
    best = -1
    best_i = -1
    for i, v in enumerate((3, 9, 2, 9, 4)):
        if v > best:
            best = v
            best_i = i
    print("argmax:", best_i, best)
    for i, (a, b) in enumerate(((1, 2), (3, 4))):
        print(i, a * b)
    print(tuple(enumerate("ab")), tuple(enumerate((5, 6), -1)), list(enumerate([])))
    return (best_i, tuple(enumerate(t, 100)))

# Tuple length, concatenation, repetition, comparison, membership.
def main():
    a = (1, 2, 3)
    b = (4, 5)
    print(len(a), len(()), len((None,)), a + b, b + a, a * 2, 0 * a, () * 3)
    print(a < b, (1, 2) < (1, 2, 0), (1, 3) > (1, 2, 9), a == (1, 2, 3), a != (1, 2))
    print((1, "b") < (1, "c"), () < (0,), (2,) >= (1, 9, 9))
    print(2 in a, 7 in a, 7 not in a, (1, 2) in ((1, 2), (3,)), "x" in ("x", "y"))
    acc = ()
    for i in range(4):
        acc = acc + (i * i,)
    print("acc:", acc)
    return (a + b, a * 3, acc, 3 in acc)

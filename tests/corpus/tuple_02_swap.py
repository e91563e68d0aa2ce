# Swapping and rotating with tuple assignment.
def main():
    a = 1
    b = 2
    a, b = b, a
    print("swapped:", a, b)
    x, y, z = "x", "y", "z"
    x, y, z = y, z, x
    print("rotated:", x, y, z)
    f0, f1 = 0, 1
    for i in range(10):
        f0, f1 = f1, f0 + f1
        print(f0, end=" ")
    print()
    lo, hi = 9, 3
    if lo > hi:
        lo, hi = hi, lo
    print("ordered:", lo, hi)
    return (a, b, x, y, z, f0, lo, hi)

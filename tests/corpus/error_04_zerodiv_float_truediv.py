# ZeroDivisionError from float / 0.0 inside a nested call.
def normalize(x, total):
    return x / total


def main():
    a = (1.0, 2.0, 3.0)
    s = a[0] + a[1] + a[2]
    print("normalized:", normalize(a[0], s), normalize(a[2], s))
    z = s - 6.0
    print("z =", z)
    return normalize(1.5, z)

# Applying a function n times, iteratively and recursively.
def apply_n(f, n, x):
    for _ in range(n):
        x = f(x)
    return x


def repeat(f, n):
    if n == 0:
        return lambda x: x
    g = repeat(f, n - 1)
    return lambda x: f(g(x))


def main():
    print(apply_n(lambda v: v * 2, 10, 1), apply_n(lambda s: s + "a", 3, ""))
    twice = repeat(lambda v: v + 3, 2)
    ten = repeat(lambda v: v * 2, 10)
    print(twice(0), ten(1), repeat(lambda v: v, 0)(7))
    return (apply_n(lambda v: v // 2, 4, 1000), ten(3))

# TypeError: calling an int.
def apply(f, x):
    return f(x)


def main():
    print(apply(lambda v: v + 1, 1))
    g = 5
    print("g is", g)
    return apply(g, 2)

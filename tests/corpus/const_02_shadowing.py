# Locals and parameters shadowing module-level names.
X = 100
SCALE = 2


def uses_global():
    return X * SCALE


def shadows(X):
    return X * SCALE


def local_shadow():
    SCALE = 5
    return X * SCALE


def main():
    print(uses_global(), shadows(7), local_shadow(), X, SCALE)
    x = 1
    print("lowercase x is a different name:", x, X, shadows(x))
    return (uses_global(), shadows(x), local_shadow())

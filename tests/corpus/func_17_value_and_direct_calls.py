# A function called directly and also passed as a value in the same function: the value is the
# function itself, not the specialization the direct call made for its own arguments; calls
# through the value fill in defaults.
def sq(x, k=1):
    return x * x + k


def apply(f, v):
    return f(v)


def apply_kw(f, v):
    return f(v, k=10)


def main():
    print(sq(2))
    print(apply(sq, 1.5), apply(sq, 3), apply_kw(sq, 2))
    return apply(sq, 0.5)

# Nested calls, calls as arguments, keyword arguments of expressions.
def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def poly(x, a=1, b=0, c=0):
    return add(mul(a, mul(x, x)), add(mul(b, x), c))


def main():
    print(add(mul(2, 3), mul(4, 5)), mul(add(1, 2), add(3, 4)))
    for x in range(-2, 3):
        print("poly", x, poly(x), poly(x, 2, -3, 1), poly(x, c=add(1, 1), b=mul(2, 2)))
    return poly(3, b=add(1, 1), c=mul(3, 3))

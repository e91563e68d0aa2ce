# ZeroDivisionError: 0.0 raised to a negative power.
def inv_pow(x, k):
    return x ** -k


def main():
    print(inv_pow(2, 1), inv_pow(2.0, 3), inv_pow(-4, 2))
    return inv_pow(0, 1)

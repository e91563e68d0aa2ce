# Recursion returning tuples: min/max/count in one pass, digit splitting.
def summarize(t):
    if len(t) == 1:
        return (t[0], t[0], 1)
    lo, hi, n = summarize(t[1:])
    x = t[0]
    return (min(x, lo), max(x, hi), n + 1)


def digits(n):
    if n < 10:
        return (n,)
    return digits(n // 10) + (n % 10,)


def flatten(t):
    if not isinstance(t, tuple):
        return (t,)
    out = ()
    for x in t:
        out = out + flatten(x)
    return out


def main():
    print(summarize((5, 3, 9, -2, 7)))
    print(digits(9876543210), digits(0), digits(7))
    print(flatten((1, (2, (3, 4)), ((5,),), ())))
    return (summarize((1, 2)), digits(2024), flatten(((1, 2), 3)))

# any/all over tuples built from function results.
def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


def flags(t):
    out = ()
    for x in t:
        out = out + (is_prime(x),)
    return out


def main():
    a = (2, 3, 5, 7)
    b = (2, 4, 6)
    print(flags(a), all(flags(a)), any(flags(b)), all(flags(b)))
    print(any(flags(())), all(flags(())))
    return (all(flags((11, 13))), any(flags((1, 4, 9))))

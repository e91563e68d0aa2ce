# Recursive and iterative factorial.
def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def fact_iter(n):
    r = 1
    for i in range(2, n + 1):
        r *= i
    return r


def main():
    for n in (0, 1, 5, 10, 15, 20):
        print(n, fact(n), fact(n) == fact_iter(n))
    print(fact(20) // fact(18))
    return fact(20)

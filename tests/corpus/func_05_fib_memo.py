# Fibonacci variants: naive recursion, tuple-returning recursion, iteration.
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def fib_pair(n):
    # returns (fib(n), fib(n+1))
    if n == 0:
        return (0, 1)
    a, b = fib_pair(n - 1)
    return (b, a + b)


def fib_iter(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def main():
    row = ()
    for i in range(15):
        row = row + (fib(i),)
    print(row)
    print(fib_pair(50), fib_iter(50), fib_pair(90)[0] == fib_iter(90))
    return (fib(20), fib_pair(80)[0])

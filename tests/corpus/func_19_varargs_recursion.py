# args: 6
# Recursive functions with *args whose tuple keeps its length from call to call, and a
# recursion over a tuple passed as one argument.
def fib_pair(k, *pair):
    if k == 0:
        return pair
    a, b = pair
    return fib_pair(k - 1, *(b, a + b))


def sum_all(*xs):
    return sum_tuple(xs)


def sum_tuple(t):
    if len(t) == 0:
        return 0
    return t[0] + sum_tuple(t[1:])


def main(n):
    print(fib_pair(n, 0, 1), fib_pair(0, 5, 8))
    print(sum_all(), sum_all(1), sum_all(*range(n)))
    return fib_pair(n, *(1, 1))

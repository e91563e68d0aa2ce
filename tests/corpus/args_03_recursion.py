# args: 20, 3
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def main(n, every):
    out = ()
    for i in range(0, n + 1, every):
        v = fib(i)
        print("fib(" + str(i) + ") =", v)
        out = out + (v,)
    return out

# args: 3
# Closures passed to another function see the values their creator assigns between calls.
def call_twice(f, g):
    return f() + g()


def main(n):
    base = 1
    k = 0
    f = lambda: base * 100
    g = lambda: k
    results = []
    while k < n:
        k = k + 1
        base = base * 2
        results = results + [call_twice(f, g)]
    print(results)
    return results[-1]

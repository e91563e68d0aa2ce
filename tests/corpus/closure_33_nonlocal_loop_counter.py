# args: 10
# A nested predicate with a nonlocal counter drives a while loop.
def main(n):
    checks = 0

    def small(v):
        nonlocal checks
        checks += 1
        return v * v < n

    k = 0
    while small(k):
        k += 1
    print("k", k, "checks", checks)
    return checks

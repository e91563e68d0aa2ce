# args: 5
# A nested function assigns the enclosing function's variable that also drives its loop.
def main(n):
    k = 0
    trace = ()

    def skip(step):
        nonlocal k
        k = k + step

    while k < n * 3:
        trace = trace + (k,)
        skip(k % 3 + 1)
    print(trace)
    return k

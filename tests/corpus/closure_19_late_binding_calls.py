# args: 3
# Each call of a nested function reads the enclosing variable's current value, also after
# the enclosing function assigns it again.
def main(n):
    step = 1
    def advance(x):
        return x + step
    x = 0
    x = advance(x)
    step = 10
    x = advance(x)
    i = 0
    log = ()
    while i < n:
        show = lambda: i * 100
        i += 1
        log = log + (show(),)
    print("x", x, "log", log)
    return (x, log)

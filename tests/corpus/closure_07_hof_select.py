# Functions chosen by a condition and stored in tuples.
def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


OPS = (("+", add), ("-", sub), ("*", mul))


def lookup(sym):
    for s, f in OPS:
        if s == sym:
            return f
    return None


def main():
    for flag in (True, False):
        f = add if flag else sub
        print(flag, f(10, 4))
    for sym in ("+", "-", "*", "/"):
        f = lookup(sym)
        if f is None:
            print(sym, "unknown")
        else:
            print(sym, f(6, 3))
    g = lookup("*")
    return (g(7, 6), lookup("?") is None)

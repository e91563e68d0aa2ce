# args: 4
# On Python ints, floats, strings and tuples, `x op= v` rebinds x (they are immutable); the
# other names keep the old value, as in Python.
def main(n):
    a = n
    b = a
    a += 1
    f = 0.5
    g = f
    f *= 3
    s = "ab"
    t = s
    s += "c"
    tp = (1,)
    tq = tp
    tp += (2,)
    print(a, b, f, g, s, t, tp, tq)
    return (a, b)

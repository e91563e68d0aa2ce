# Single-element and empty tuples.
def empty():
    return ()


def one(x):
    return (x,)


def main():
    e = empty()
    s = one(5)
    print(e, s, len(e), len(s), s[0])
    print((1,), ("a",), ((),), (((1,),),))
    print(e == (), s == (5,), s == 5, not e, not s)
    t = ()
    for i in range(3):
        t = t + one(i)
    print(t, t + e, e + e)
    x = 1,
    print("trailing comma:", x, type_name(x))
    return (e, s, x)


def type_name(v):
    if isinstance(v, tuple):
        return "tuple"
    return "other"

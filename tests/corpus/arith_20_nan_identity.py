# NaN and identity: containers compare items by identity before ==, so a NaN object equals
# itself inside a tuple or list, while two NaNs made apart (or copied by arithmetic) do not.
def same(v):
    return v


def main():
    x = float('nan')
    print(x == x, (x,) == (x,), [x] == [x], x in (x,), x in [1.0, x], (x,) != (x,))
    y = float('nan')
    print((x,) == (y,), x in (y,), (x, 1) == (x, 1), (x, 1) < (x, 2), (x, 2) <= (x, 1))
    a = x * 1.0
    b = x * 1.0
    print((a,) == (b,), (a,) == (a,), (x,) == (x + 0.0,), (-(-x),) == (x,))
    print((float(x),) == (x,), (same(x),) == (x,), (abs(x),) == (x,), max(x, 1.0) in (x,))
    t = ()
    for i in range(3):
        t = t + (float('inf') - float('inf'),)
    print((t[0],) == (t[1],), t[2] in t, t[0] in t[1:], t == t, t == t[:2] + t[2:])
    u = (x, x)
    v = (x, y)
    print(u == (x, x), v == (x, x), x in v, y in u, (u, 1) == ((x, x), 1))
    return (x,) == (x,), (x,) == (y,), t[1] in t

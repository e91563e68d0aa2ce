# abs and divmod with ints and floats.
def main():
    print(abs(-5), abs(5), abs(-0.0), abs(-2.75), abs(True), abs(-10 ** 18))
    print(divmod(17, 5), divmod(-17, 5), divmod(17, -5), divmod(-17, -5))
    print(divmod(7.5, 2), divmod(-7.5, 2), divmod(0, 3))
    q, r = divmod(1000, 7)
    print("1000 = 7 *", q, "+", r)
    secs = 98765
    h, rest = divmod(secs, 3600)
    m, s = divmod(rest, 60)
    print(h, "h", m, "m", s, "s")
    return (divmod(100, 3), abs(-3.5), (h, m, s))

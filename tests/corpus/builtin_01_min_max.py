# min and max with several arguments and with one tuple/list.
def main():
    print(min(3, 1, 2), max(3, 1, 2), min(2.5, 2), max(-1, -1.5))
    print(min((4, 8, 1, 9)), max((4, 8, 1, 9)), min([7]), max("hello"))
    print(max(1, 1.0), max(1.0, 1), min(0, False), max(True, 1))
    print(min("b", "a", "c"), max((1, 2), (1, 3), (0, 9)))
    t = (5, -3, 12, 0)
    lo = min(t)
    hi = max(t)
    print("range:", hi - lo, min(t[1:]), max(t[:1]), max(tuple(range(10))))
    return (min(9, 4, 7), max((2.5, 1, 3)), min("zebra"), max(t))

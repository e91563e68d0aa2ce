# `is` / `is not` against None, True and False.
def lookup(t, key):
    for k, v in t:
        if k == key:
            return v
    return None


def main():
    table = (("a", 1), ("b", False), ("c", True), ("d", 0))
    for key in ("a", "b", "c", "d", "z"):
        v = lookup(table, key)
        print(key, v, v is None, v is True, v is False, v is not None)
    x = 1 == 1
    y = 2 < 1
    print(x is True, y is False, x is not False, (x and y) is False)
    missing = lookup(table, "q")
    return (missing is None, lookup(table, "c") is True, lookup(table, "d") is not False)

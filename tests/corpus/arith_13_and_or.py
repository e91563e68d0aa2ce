# `and`/`or` return one of their operands.
def main():
    print(1 and 2, 0 and 2, 1 or 2, 0 or 2)
    print(None or "default", "" or "empty", "x" and "y")
    print(0.0 or 5, [] or (1,), () or [] or 0)
    print(True and 3, False or 0.0, None and 1)
    a = 0
    b = 7
    c = a or b
    d = a and b
    e = b and a or 42
    print(c, d, e)
    return (c, d, e, 3 and 0 or None)

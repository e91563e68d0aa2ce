# ZeroDivisionError from integer // inside a nested call.
def bucket(x, width):
    return x // width


def histogram(t, width):
    out = ()
    for x in t:
        b = bucket(x, width)
        print("value", x, "-> bucket", b)
        out = out + (b,)
    return out


def main():
    print(histogram((1, 5, 9), 4))
    print(histogram((3, 7), 0))
    return "unreachable"

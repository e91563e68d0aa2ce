# args: 3
# *args forwarded through several functions, star-arguments from tuples, lists, ranges and
# strings, mixed with positional and keyword arguments.
def join(sep, *parts):
    out = ""
    for i, p in enumerate(parts):
        if i > 0:
            out = out + sep
        out = out + str(p)
    return out


def wrap(*args, left="[", right="]"):
    return left + join(", ", *args) + right


def main(n):
    print(wrap(1, 2, 3))
    print(wrap(*range(n), left="<", right=">"))
    print(join("-", *"abc"), join("+", *[1, 2], *(3, 4)))
    args = (n, n * 2)
    return wrap(*args, *args)

# args: 3
# *args with keyword-only parameters with and without defaults.
def fmt(*items, sep, end="."):
    out = ""
    for i in range(len(items)):
        out = out + str(items[i])
        if i + 1 < len(items):
            out = out + sep
    return out + end


def main(n):
    print(fmt(1, 2, 3, sep="-"))
    print(fmt(*range(n), sep=", ", end="!"))
    print(fmt(sep="x"))
    return fmt("a", *("b", "c"), sep="", end="")

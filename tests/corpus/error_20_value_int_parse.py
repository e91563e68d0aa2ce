# ValueError from int() of a non-integer string.
def parse(s):
    return int(s)


def main():
    total = 0
    for s in ("1", "20", "3.5"):
        total += parse(s)
        print("total:", total)
    return total

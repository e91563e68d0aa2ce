# Lists passed to and returned from functions.
def squares(n):
    out = []
    for i in range(n):
        out = out + [i * i]
    return out


def concat(a, b):
    return a + b


def main():
    sq = squares(6)
    print(sq, len(sq), sq[-2])
    c = concat(sq[:2], ["a", "b"])
    print(c, c * 2)
    nested = [sq[:3], sq[3:]]
    print(nested, nested[1][0], len(nested))
    return concat([0], sq)

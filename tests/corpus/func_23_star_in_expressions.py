# args: 4
# Star-arguments from computed tuples, slices, enumerate and zip items.
def three(a, b, c):
    return a * 100 + b * 10 + c


def main(n):
    t = tuple(range(n))
    print(three(*t[:3]), three(*t[1:]) if n == 4 else 0)
    pairs = tuple(zip((1, 2), (3, 4)))
    print(three(*pairs[0], 9), three(9, *pairs[1]))
    for i, v in enumerate((5, 6)):
        print(three(i, *(v, v)))
    return three(*(t[0], t[1]), *t[2:3])

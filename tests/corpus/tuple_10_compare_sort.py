# Tuple comparison used for a selection-style ordering (no sorted()).
def smallest_index(t, start):
    best = start
    for i in range(start + 1, len(t)):
        if t[i] < t[best]:
            best = i
    return best


def selection_sort(t):
    out = ()
    rest = t
    while len(rest) > 0:
        k = smallest_index(rest, 0)
        out = out + (rest[k],)
        rest = rest[:k] + rest[k + 1:]
        print("  picked", out[-1], "left", rest)
    return out


def main():
    pairs = ((2, "b"), (1, "z"), (2, "a"), (1, "c"))
    res = selection_sort(pairs)
    print(res)
    return res

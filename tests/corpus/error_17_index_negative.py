# IndexError from a negative index beyond the start of a tuple.
def last_k(t, k):
    return t[-k]


def main():
    t = ("a", "b", "c")
    for k in (1, 2, 3):
        print(k, last_k(t, k))
    return last_k(t, 4)

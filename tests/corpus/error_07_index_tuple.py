# IndexError: tuple index out of range, from a nested call.
def nth(t, i):
    return t[i]


def main():
    t = (10, 20, 30)
    print(nth(t, 0), nth(t, -3), nth(t, 2))
    i = 0
    while True:
        print("reading", i, nth(t, i))
        i += 1

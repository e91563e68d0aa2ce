# Tuple indexing with positive, negative and computed indices.
DATA = (10, 20, 30, 40, 50)


def get(t, i):
    return t[i]


def main():
    print(DATA[0], DATA[4], DATA[-1], DATA[-5], get(DATA, 2))
    n = len(DATA)
    for i in range(n):
        print(DATA[i], DATA[-1 - i], sep="/", end=" ")
    print()
    nested = ((1, 2), (3, (4, 5)))
    print(nested[1][1][0], nested[0][-1], nested[-1][0])
    k = 3
    print(DATA[k - 1], DATA[n - k], DATA[-k])
    print((1, 2, 3)[1], ("a", "b")[-1])
    return (DATA[1], DATA[-2], nested[1][1])

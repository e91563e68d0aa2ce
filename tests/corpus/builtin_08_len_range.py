# len of strings, tuples, lists and ranges.
def main():
    print(len(""), len("abc"), len(()), len((1, 2)), len([1, 2, 3]), len(range(10)))
    print(len(range(3, 30, 3)), len(range(5, -5, -1)), len("tab\t"), len("\n"))
    r = tuple(range(2, 20, 3))
    print(r[0], r[-1], r[2], len(r), 8 in r, 9 in r)
    print(r[1:3], r[::-1], len(r[::2]))
    return (len(r), r[3], len(range(0, -10, -3)), len(tuple(range(7))))

# tuple(range(...)), tuple(enumerate(...)), tuple(zip(...)), list(range(...)).
def main():
    print(tuple(range(5)), tuple(range(3, 0, -1)), tuple(range(0)))
    print(tuple(enumerate(("a", "b"))), tuple(enumerate("xy", 5)))
    print(tuple(zip((1, 2, 3), ("a", "b", "c"))), tuple(zip(range(3), range(10, 13))))
    print(list(range(4)), list(zip("ab", "cd")), list(enumerate((7,))))
    r = tuple(range(10))
    evens = r[::2]
    print(evens, sum(evens), len(r))
    return (tuple(range(2, 11, 4)), tuple(zip(range(2), "pq")))

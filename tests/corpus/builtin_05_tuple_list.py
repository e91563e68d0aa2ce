# tuple() and list() of ranges, strings, tuples and lists.
def main():
    print(tuple(range(4)), tuple("abc"), tuple([1, 2]), tuple((3,)), tuple(()))
    print(list(range(3)), list("hi"), list((1, 2)), list([]))
    t = tuple(range(10, 0, -2))
    l = list(t)
    print(t, l, len(t) == len(l), t == tuple(l), l[1:3])
    print(tuple(enumerate("ab")), list(zip((1, 2), (3, 4))))
    return (tuple("xyz"), list(range(2)))

# args: 1
# A starred assignment needs at least as many items as the other targets: Python's
# ValueError when it runs.
def main(n):
    t = tuple(range(n))
    a, *b = t
    print(a, b)
    first, second, *rest = t
    return first + second

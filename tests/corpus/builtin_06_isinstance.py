# isinstance with single types and tuples of types.
def kind(x):
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int"
    if isinstance(x, float):
        return "float"
    if isinstance(x, str):
        return "str"
    if isinstance(x, tuple):
        return "tuple"
    return "other"


def main():
    for v in (1, 2.0, True, "s", (1,), None, [1]):
        print(repr(v), kind(v), isinstance(v, (int, float)))
    print(isinstance(True, int), isinstance(1, bool), isinstance(1.0, int))
    print(isinstance(3, (str, tuple)), isinstance("a", (str, int)))
    return (kind(5), kind(5.0), kind(False), isinstance(True, (float, int)))

# TypeError: '<' not supported between str and int.
def less(a, b):
    return a < b


def main():
    print(less(1, 2), less("a", "b"), less(1.5, 2))
    return less("a", 1)

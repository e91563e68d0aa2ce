# TypeError: unsupported operand types for + (int and str).
def combine(a, b):
    return a + b


def main():
    print(combine(1, 2), combine("a", "b"), combine((1,), (2,)))
    return combine(1, "a")

# `not` and conditional expressions.
def sign(x):
    return 1 if x > 0 else (-1 if x < 0 else 0)


def main():
    print(not 0, not 1, not "", not "a", not None, not (), not (0,))
    print(not 0.0, not -0.0, not [], not [0])
    print(sign(5), sign(-3), sign(0), sign(-0.0), sign(2.5))
    x = 10
    label = "big" if x > 5 else "small"
    parity = "even" if x % 2 == 0 else "odd"
    print(label, parity)
    y = (x if x < 3 else x * 2) + 1
    print("y:", y)
    return (sign(-7), label, parity, y, not not x)

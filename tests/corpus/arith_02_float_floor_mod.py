# Floor division and modulo on floats, including negative operands.
def fl(a, b):
    return a // b, a % b


def main():
    print(fl(7.5, 2.0))
    print(fl(-7.5, 2.0))
    print(fl(7.5, -2.0))
    print(fl(-7.5, -2.0))
    print(fl(7, 2.5), fl(-7, 2.5))
    print(fl(0.3, 0.1))
    print(-0.0 // 1.0, 0.0 % -1.0, -1e-20 % 1.0)
    print(5.0 % 3, -5.0 % 3, 5 % -3.0)
    return fl(-1.0, 0.3)

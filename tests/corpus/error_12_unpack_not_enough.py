# ValueError: not enough values to unpack, from a nested call.
def rgb(t):
    r, g, b = t
    return r * 65536 + g * 256 + b


def main():
    print(rgb((255, 0, 0)), rgb((0, 128, 255)))
    return rgb((1, 2))

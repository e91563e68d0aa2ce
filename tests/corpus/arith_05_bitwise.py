# Bitwise and/or/xor/invert on ints, including negative values.
def main():
    a = 0b1100
    b = 0b1010
    print(a & b, a | b, a ^ b, ~a, ~b)
    print(-1 & 255, -8 | 3, -8 ^ 3, ~0, ~-1)
    print(0xFF & 0x0F, 0o17 | 0, 255 ^ 255)
    print(True & False, True | False, True ^ True)
    x = 0
    i = 0
    while i < 8:
        x = x | (1 << i)
        i += 2
    print("bits:", x, bin_digits(x))
    return (a & b, a | b, a ^ b, ~a, -6 & 7)


def bin_digits(n):
    s = ""
    if n == 0:
        return "0"
    while n > 0:
        s = str(n & 1) + s
        n = n >> 1
    return s

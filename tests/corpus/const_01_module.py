# Module-level constants, including arithmetic on earlier constants.
A = 3
B = A * 2 + 1
C = B ** 2 - A
NAME = "anf" + "ora"
PAIR = (A, B)
NESTED = (PAIR, (C, NAME))
NEG = -A
HALF = B / 2
MASK = (1 << 8) - 1
RATIO = 1.5 * B
FLAG = True
LIMITS = [0, 10]
EMPTY = ()


def scaled(x):
    return x * RATIO + NEG


def main():
    print(A, B, C, NAME, PAIR, NESTED, NEG, HALF, MASK, RATIO, FLAG, LIMITS, EMPTY)
    print(scaled(2), scaled(0), NESTED[1][1][::-1], PAIR[0] + PAIR[1])
    lo, hi = LIMITS
    k = A
    while k < hi:
        k = k * A
    print("k:", k, "within:", lo <= B <= hi)
    return (C, MASK & 0xF0, scaled(A), k)

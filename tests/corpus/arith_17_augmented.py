# Augmented assignment operators on names.
def main():
    x = 10
    x += 5
    print("+=", x)
    x -= 3
    print("-=", x)
    x *= 4
    print("*=", x)
    x //= 5
    print("//=", x)
    x %= 4
    print("%=", x)
    x **= 3
    print("**=", x)
    x <<= 2
    print("<<=", x)
    x >>= 1
    print(">>=", x)
    x |= 1
    x &= 0xF
    x ^= 6
    print("bitwise:", x)
    y = 1
    y /= 4
    print("/=", y)
    s = "ab"
    s += "cd"
    s *= 2
    t = (1,)
    t += (2, 3)
    print(s, t)
    return (x, y, s, t)

# Unary minus, plus, invert on ints, floats and bools.
def main():
    x = 5
    y = -2.5
    print(-x, +x, ~x, --x, -+-x)
    print(-y, +y, - -y)
    print(-True, +True, ~True, ~False, -False)
    print(-0, -0.0, +(-0.0), -(-0.0))
    z = -x * -x
    print("z:", z, -z // 3, -(z // 3))
    return (-x, +y, ~x, -True, not x)

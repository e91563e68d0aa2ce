# Float arithmetic: accumulation error, large/small magnitudes.
def main():
    s = 0.0
    for i in range(10):
        s += 0.1
    print(s, s == 1.0, 1.0 - s)
    print(1e16 + 1, 1e16 + 2, 1e-300 * 1e-300)
    print(3.0 * 1.1, 0.1 * 3, 4.35 * 100)
    print(1.0 / 49 * 49, 2.675 * 100)
    x = 1.0
    steps = 0
    while 1.0 + x != 1.0:
        x = x / 2
        steps += 1
    print("epsilon steps:", steps, x * 2)
    return (s, x * 2, 0.1 * 3, 100.0 / 3)

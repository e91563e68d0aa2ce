# Mixed int/float arithmetic and int/float equality.
def main():
    a = 3
    b = 0.5
    print(a + b, a - b, a * b, a / b, a // b, a % b)
    print(1 + 2.0, 2 * 3.0, 10 - 0.5, 7 // 2.0)
    print(True + 1, True + 1.5, False * 3.0, True / 2)
    print(3 == 3.0, 1 == 1.0000001, 2 ** 53 == 2.0 ** 53)
    total = 0
    i = 0
    while i < 10:
        total = total + i * 0.1
        i += 1
    print("total:", total)
    return (a + b, 1 + 2.0, total, 3 * 1.0)


if __name__ == "__main__":
    print("run as a script:", main())

# Left and right shifts, arithmetic right shift of negatives.
def main():
    print(1 << 0, 1 << 1, 1 << 10, 3 << 4, 1 << 62)
    print(1024 >> 3, 1023 >> 3, 7 >> 10, 0 >> 5)
    print(-1 >> 1, -8 >> 1, -9 >> 1, -1 >> 60)
    print(-3 << 2, -(3 << 2))
    n = 1
    count = 0
    while n < 1000000:
        n = n << 1
        count += 1
    print("shifts to pass a million:", count, n)
    return (5 << 2, 100 >> 2, -100 >> 3, 1 << 40)

# Recursive nested functions that capture outer parameters.
def count_paths(rows, cols):
    def walk(r, c):
        if r == rows - 1 or c == cols - 1:
            return 1
        return walk(r + 1, c) + walk(r, c + 1)
    return walk(0, 0)


def sum_digits_base(n, base):
    def go(m):
        if m == 0:
            return 0
        return m % base + go(m // base)
    return go(n)


def main():
    print(count_paths(2, 2), count_paths(3, 3), count_paths(5, 5))
    print(sum_digits_base(255, 2), sum_digits_base(255, 16), sum_digits_base(12345, 10))
    return (count_paths(6, 4), sum_digits_base(1000, 7))

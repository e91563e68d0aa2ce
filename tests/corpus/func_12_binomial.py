# Binomial coefficients: recursion and Pascal's triangle rows as tuples.
def binom(n, k):
    if k == 0 or k == n:
        return 1
    return binom(n - 1, k - 1) + binom(n - 1, k)


def next_row(row):
    out = (1,)
    for i in range(len(row) - 1):
        out = out + (row[i] + row[i + 1],)
    return out + (1,)


def main():
    row = (1,)
    for n in range(8):
        print(row)
        row = next_row(row)
    print(binom(10, 5), binom(16, 8), row[4])
    return (binom(12, 6), row)

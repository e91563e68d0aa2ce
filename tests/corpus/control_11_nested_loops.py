# Nested loops with break in the inner loop.
def primes_upto(n):
    out = ()
    for k in range(2, n + 1):
        is_p = True
        d = 2
        while d * d <= k:
            if k % d == 0:
                is_p = False
                break
            d += 1
        if is_p:
            out = out + (k,)
    return out


def main():
    for i in range(1, 4):
        row = ""
        for j in range(1, 4):
            row = row + str(i * j) + " "
        print(row)
    p = primes_upto(50)
    print("primes:", p, len(p))
    pairs = 0
    for a in range(10):
        for b in range(a, 10):
            if (a + b) % 3 == 0:
                pairs += 1
    print("pairs:", pairs)
    return (p[-1], pairs)

# Long loops: 20000 iterations each for two loops, 5000 for the third.
N = 20000
M = N // 4


def main():
    s = 0
    for i in range(N):
        s += i * i % 7
    print("sum:", s)
    x = 0
    k = 0
    while k < N:
        x = (x * 31 + k) % 1000003
        k += 1
    print("hash:", x)
    fsum = 0.0
    for i in range(1, M + 1):
        fsum += 1.0 / i
    print("harmonic:", fsum)
    return (s, x, fsum)

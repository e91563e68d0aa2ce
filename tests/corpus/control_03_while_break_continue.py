# while loops with break and continue.
def main():
    i = 0
    total = 0
    while True:
        i += 1
        if i % 3 == 0:
            continue
        if i > 20:
            break
        total += i
    print("i, total:", i, total)
    n = 27
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    print("collatz(27) steps:", steps)
    k = 100
    while k > 0:
        k -= 7
        if k % 5 == 0:
            print("multiple of 5:", k)
            continue
        if k < 50:
            break
    print("k:", k)
    return (i, total, steps, k)

# if after a loop with break (instead of for/else).
def contains_pair_sum(t, target):
    found = False
    for i in range(len(t)):
        for j in range(i + 1, len(t)):
            if t[i] + t[j] == target:
                found = True
                break
        if found:
            break
    if found:
        print("found", t[i], "+", t[j], "=", target)
    else:
        print("no pair sums to", target)
    return found


def main():
    a = contains_pair_sum((1, 4, 6, 9), 10)
    b = contains_pair_sum((1, 4, 6, 9), 12)
    c = contains_pair_sum((), 0)
    n = 2
    while n < 100:
        if n * n > 200:
            break
        n += 1
    if n < 100:
        print("broke at", n)
    return (a, b, c, n)

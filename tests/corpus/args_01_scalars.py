# args: 10, 2.5, "abc", (1, 2), True
def main(n, x, s, t, flag):
    print("n:", n, "x:", x, "s:", s, "t:", t, "flag:", flag)
    total = 0
    for i in range(n):
        total += i
    print("sum below n:", total, "scaled:", total * x)
    a, b = t
    label = s * a + s[::-1] * b
    print(label, len(label), sep=" / ")
    if flag:
        return (total, label, x * b)
    return None

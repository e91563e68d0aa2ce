# Early return from inside loops and branches; return with no value.
def find(t, x):
    for i in range(len(t)):
        if t[i] == x:
            return i
    return -1


def first_neg(t):
    i = 0
    while i < len(t):
        if t[i] < 0:
            return t[i]
        i += 1


def log(msg):
    if msg == "":
        return
    print("log:", msg)
    return


def check(n):
    if n < 0:
        return "negative"
    for d in range(2, n):
        if n % d == 0:
            return "composite"
    if n < 2:
        return "unit"
    return "prime"


def main():
    print(find((5, 6, 7), 7), find((5, 6, 7), 8), find((), 1))
    print(first_neg((3, -4, -5)), first_neg((1, 2)))
    r = log("")
    r2 = log("hello")
    print(r, r2)
    for n in (-5, 0, 1, 2, 9, 13):
        print(n, check(n))
    return (find((1, 2, 3), 2), first_neg((0,)), check(91))

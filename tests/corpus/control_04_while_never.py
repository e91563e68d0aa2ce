# while loops that are never entered keep prior values.
def count_down(n):
    c = 0
    while n > 0:
        n -= 1
        c += 1
    return c


def main():
    x = 5
    while x < 0:
        x = 100
        print("never printed")
    print("x:", x)
    print(count_down(0), count_down(-3), count_down(4))
    flag = False
    while flag:
        flag = False
    s = ""
    while len(s) > 10:
        s = s[1:]
    print("s:", repr(s), "flag:", flag)
    return (x, count_down(0), s)

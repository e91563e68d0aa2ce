# args: 3
# Several variables holding the same values through loops, branches and swaps.
def main(n):
    a = b = c = 1
    for i in range(n):
        if i % 2:
            a, b = b, a + b
        else:
            c = a = a + c
    print(a, b, c)
    x = y = (1, 2)
    while len(x) < 4:
        x = x + y
        y = x
    return (a, b, c, x, y)

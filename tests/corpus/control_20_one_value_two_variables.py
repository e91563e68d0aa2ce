# args: 5
# Two variables holding the same value through a loop (one value passed to two loop
# variables at every iteration).
def main(n):
    a = b = n
    for i in range(4):
        a = a + i
        b = a
    print(a, b)
    c = d = n * 1.5
    k = 0
    while k < 3:
        c = c * 2.0
        d = c
        k += 1
    return (a, b, c, d)

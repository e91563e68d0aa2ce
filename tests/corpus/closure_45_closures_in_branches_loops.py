# args: 5
# Closures made in branches and while loops, stored in a tuple, called after the variables
# they read were assigned again.
def main(n):
    fs = ()
    i = 0
    acc = 0
    while i < n:
        if i % 2 == 0:
            fs = fs + (lambda: i + acc,)
        else:
            fs = fs + (lambda: -i,)
        acc = acc + i
        i = i + 1
    out = []
    for f in fs:
        out = out + [f()]
    print(len(fs), out)
    return sum(out)

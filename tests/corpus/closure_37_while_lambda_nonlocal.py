# args: 4
# A while loop whose condition and body call nested functions that read and update the
# enclosing function's variables.
def main(n):
    i = 0
    acc = ()

    def push(v):
        nonlocal acc
        acc = acc + (v,)

    def more():
        return i < n

    while more():
        sq = lambda: i * i
        push(sq())
        i += 1
    print(acc)
    return len(acc)

# args: 4
# Each call of a recursive function has its own cell: a closure made by an outer call sees
# that call's later assignments, not those of the calls inside it.
def walk(n):
    seen = n
    report = (lambda: seen * 10,)
    if n > 0:
        inner = walk(n - 1)
        seen = seen + inner
    return report[0]() // 10


def main(n):
    print(walk(0), walk(1), walk(2))
    return walk(n)

# Loops inside branches and branches inside loops, with continue.
def process(mode, n):
    acc = 0
    if mode == "sum":
        for i in range(n):
            acc += i
    elif mode == "odd":
        for i in range(n):
            if i % 2 == 0:
                continue
            acc += i
    else:
        i = n
        while i > 0:
            acc += i * i
            i -= 2
    return acc


def main():
    for m in ("sum", "odd", "sq"):
        print(m, process(m, 10), process(m, 0), process(m, 1))
    return (process("sum", 100), process("odd", 100), process("sq", 9))

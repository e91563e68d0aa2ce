# args: 2
# Nested functions with default arguments and keyword calls that update nonlocal state.
def main(n):
    total = 0

    def add(v, times=1, scale=1):
        nonlocal total
        total += v * times * scale
        return total

    add(1)
    add(2, 3)
    add(1, scale=10)
    add(v=n, times=n)
    print(total)
    return total

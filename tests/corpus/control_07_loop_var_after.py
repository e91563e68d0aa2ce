# The loop variable keeps its last value after the loop.
def last_of(n):
    j = -1
    for j in range(n):
        pass
    return j


def main():
    for i in range(5):
        pass
    print("after range(5):", i)
    for k in range(10, 0, -3):
        pass
    print("after range(10, 0, -3):", k)
    for ch in "hello":
        pass
    print("after 'hello':", ch)
    for a, b in ((1, 2), (3, 4)):
        pass
    print("after pairs:", a, b)
    for m in range(100):
        if m * m > 50:
            break
    print("break at:", m)
    print(last_of(0), last_of(1), last_of(7))
    return (i, k, ch, m)

# A counter factory: each call makes a cell of its own, which the returned closure updates
# through `nonlocal` after its creator has returned.
def make_counter(start):
    count = start

    def step(k):
        nonlocal count
        count += k
        return count

    return step


def main():
    a = make_counter(0)
    b = make_counter(100)
    print(a(1), a(2), b(5), a(3), b(1))
    counters = (a, b)
    for c in counters:
        c(10)
    return a(0), b(0)

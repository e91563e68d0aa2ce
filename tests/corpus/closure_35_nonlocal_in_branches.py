# args: 5
# A nonlocal assigned on some paths only; calls in both branches of an if.
def main(n):
    label = "none"
    hits = 0

    def mark(i):
        nonlocal label, hits
        if i % 2 == 0:
            label = "even" + str(i)
        hits = hits + 1

    for i in range(n):
        if i > 2:
            mark(i)
        else:
            mark(i * 2 + 1)
    print(label, hits)
    return hits

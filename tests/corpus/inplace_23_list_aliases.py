# Lists are mutable too: two names of one list see each other's item assignments.
def main():
    xs = [1, 2, 3]
    ys = xs
    xs[0] = 10
    ys[2] += 30
    print(xs, ys)
    zs = list(xs)
    zs[1] = -1
    print(xs, zs)
    return ys

# Item assignment on lists a function builds, and augmented assignment of items.
def main():
    xs = [0, 1, 2, 3]
    xs[0] = 10
    xs[-1] += 5
    xs[1:3] = [7]
    print(xs, len(xs))
    ys = list(range(6))
    ys[::2] = [9, 9, 9]
    print(ys)
    grid = [[0, 0], [0, 0]]
    row = [1, 2]
    grid[0] = row
    print(grid)
    t = (1, 2)
    t += (3,)
    print(t)
    s = "ab"
    s += "c"
    print(s)
    return xs

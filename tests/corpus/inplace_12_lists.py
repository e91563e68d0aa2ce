# args: 5
# Lists the function builds, updated item by item in loops, and slices assigned.
def main(n):
    counts = [0] * 3
    for i in range(n):
        counts[i % 3] += i
    print(counts)
    table = [0, 0, 0, 0, 0, 0]
    table[1:4] = [9, 9]
    table[-1] = -1
    print(table, len(table))
    names = ["a", "b", "c"]
    names[0] = names[2] + names[1]
    names[1] *= 3
    return (counts, table, names)

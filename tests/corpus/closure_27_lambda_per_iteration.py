# args: 3
# Lambdas made and called in the same iteration of nested loops read the loop variables of
# that iteration.
def main(n):
    rows = ()
    for i in range(n):
        row = ()
        for j in range(n):
            cell = lambda: i * 10 + j
            row = row + (cell(),)
        rows = rows + (row,)
    print(rows)
    k = 0
    total = 0
    while k < n:
        sq = lambda v: v * k
        total += sq(k)
        k += 1
    return total

# args: 4
# A list index out of range in an assignment.
def main(n):
    xs = [0, 0, 0]
    for i in range(n):
        xs[i] = i * i
        print(xs)
    return xs

# Empty ranges: the loop body never runs, variables keep their values.
def main():
    x = "untouched"
    for i in range(0):
        x = "changed"
    print(x)
    count = 0
    for i in range(5, 5):
        count += 1
    for i in range(10, 0):
        count += 1
    for i in range(0, 10, -1):
        count += 1
    for i in range(-1, 0, -1):
        count += 1
    print("count:", count)
    i = 42
    for i in range(3, 3):
        pass
    print("i stays:", i)
    return (x, count, i)

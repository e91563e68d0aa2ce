# for over tuples, strings and lists.
def main():
    total = 0
    for x in (3, 1, 4, 1, 5, 9, 2, 6):
        total += x
    print("tuple total:", total)
    caps = 0
    for ch in "Hello World ABC":
        if "A" <= ch <= "Z":
            caps += 1
    print("capitals:", caps)
    prod = 1
    for v in [2, 3, 7]:
        prod *= v
    print("list product:", prod)
    for item in (1, "two", 3.0, None, (5, 6), [7]):
        print(" item", item)
    for nested in ((1, (2, 3)), (4, (5, 6))):
        a, (b, c) = nested
        print(" ", a + b + c)
    return (total, caps, prod)

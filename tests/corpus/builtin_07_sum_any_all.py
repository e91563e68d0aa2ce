# sum, any and all.
def main():
    t = (1, 2, 3, 4)
    print(sum(t), sum(()), sum(range(101)), sum([0.1, 0.2, 0.3]), sum((1, 2.5)))
    print(sum(t, 10), sum((True, True, False)))
    print(any((0, 0, 1)), any(()), any((0, "", None)), any([False, 2]))
    print(all((1, 2, 3)), all(()), all((1, 0, 1)), all("abc"), any(""))
    evens = True
    for x in (2, 4, 6):
        evens = evens and x % 2 == 0
    print("all even:", evens, all((2 % 2 == 0, 4 % 2 == 0, 7 % 2 == 0)))
    return (sum(t), any((0, 0.0)), all((1, 1.5, "x")), sum(range(1, 11, 3)))

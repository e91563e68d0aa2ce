# print with sep= and end=.
def main():
    print("a", "b", "c", sep="")
    print("a", "b", "c", sep=", ")
    print("no newline", end="")
    print(" -- continued")
    print(1, 2, 3, sep=" + ", end=" = 6\n")
    for i in range(5):
        print(i, end=" ")
    print()
    print("x", end="")
    print("y", end="")
    print("z")
    print(sep="-", end="[empty]\n")
    print("multi", "line", sep="\n")
    print((1, 2), "t", 3.5, None, True, sep="|", end="!\n")
    return "done"

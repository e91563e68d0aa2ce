# ZeroDivisionError from integer % inside a nested call.
def remainder(a, b):
    return a % b


def cycle(t):
    for i in range(len(t)):
        print("step", i, remainder(100, t[i]))
    return len(t)


def main():
    print(cycle((3, 7, 9)))
    return cycle((4, 2, 0, 1))

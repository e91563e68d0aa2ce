# Star-arguments that do not fit the function's parameters raise TypeError when the call runs.
def pair(a, b):
    return a + b


def main():
    t = (1, 2)
    print(pair(*t))
    u = t + (3,)
    return pair(*u)

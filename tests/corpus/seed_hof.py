def hof(x):
    def f(x):
        return x + 3
    def g(function, x):
        return function(x) * function(x)
    res = g(f, x)
    return res


def main():
    print("hof(2) =", hof(2))
    return hof(2)

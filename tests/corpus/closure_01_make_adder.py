# Closure factories: make_adder, make_multiplier.
def make_adder(n):
    def add(x):
        return x + n
    return add


def make_multiplier(k):
    return lambda x: x * k


def main():
    add5 = make_adder(5)
    add10 = make_adder(10)
    triple = make_multiplier(3)
    print(add5(1), add10(1), add5(add10(0)), triple(7), triple("ab"))
    print(make_adder(-1)(0), make_multiplier(0.5)(9))
    return (add5(100), add10(-10), triple(triple(2)))

# Function composition.
def compose(f, g):
    def h(x):
        return f(g(x))
    return h


def inc(x):
    return x + 1


def square(x):
    return x * x


def main():
    sq_then_inc = compose(inc, square)
    inc_then_sq = compose(square, inc)
    print(sq_then_inc(3), inc_then_sq(3))
    quad = compose(square, square)
    print(quad(3), compose(quad, inc)(1))
    chain = compose(compose(inc, inc), compose(square, inc))
    print(chain(4))
    ident = compose(lambda x: x - 1, inc)
    return (sq_then_inc(5), inc_then_sq(5), ident(42), chain(0))

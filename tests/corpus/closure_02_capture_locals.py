# Closures capturing parameters and locals (never reassigned afterwards).
def make_line(m, b):
    scale = m * 2
    offset = b - 1
    def line(x):
        return scale * x + offset
    return line


def make_greeter(greeting):
    punct = "!" if len(greeting) > 3 else "."
    def greet(name):
        return greeting + ", " + name + punct
    return greet


def main():
    f = make_line(1, 1)
    g = make_line(0.5, 3)
    print(f(0), f(1), f(10), g(2), g(-4))
    hello = make_greeter("hello")
    hi = make_greeter("hi")
    print(hello("ann"), hi("bob"))
    return (f(5), g(0), hi("z"))

# Default parameter values (constants).
def power(base, exp=2):
    return base ** exp


def greet(name, greeting="hello", punct="!"):
    return greeting + ", " + name + punct


def clamp(x, lo=0, hi=10, scale=1.0):
    if x < lo:
        x = lo
    if x > hi:
        x = hi
    return x * scale


def opt(x=None, flag=False, t=(1, 2)):
    if x is None:
        x = len(t)
    return x, flag, t


def main():
    print(power(5), power(2, 10), power(exp=3, base=2))
    print(greet("ann"), greet("bob", "hi"), greet("cy", punct="?"))
    print(clamp(-5), clamp(50), clamp(5, scale=0.5), clamp(5, 6), clamp(5, hi=3, lo=1))
    print(opt(), opt(7), opt(flag=True), opt(t=()))
    return (power(3), greet("z", punct="."), clamp(20, hi=15), opt())

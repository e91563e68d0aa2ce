# ZeroDivisionError from float // 0.0 inside a nested call.
def steps(length, step):
    return length // step


def plan(length, step):
    n = steps(length, step)
    print("length", length, "step", step, "->", n)
    return n


def main():
    plan(10.0, 3.0)
    plan(7.5, 2.5)
    plan(1.0, 0.0)
    return "never"

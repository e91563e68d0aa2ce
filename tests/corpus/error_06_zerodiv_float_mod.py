# ZeroDivisionError from float % 0.0 inside a nested call.
def wrap(angle, period):
    return angle % period


def main():
    print(wrap(370.0, 360.0), wrap(-30.0, 360.0))
    print(wrap(1.5, 1.0))
    return wrap(2.5, 0.0)

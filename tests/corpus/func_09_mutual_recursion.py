# Mutual recursion among module-level functions.
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def hofstadter_f(n):
    if n == 0:
        return 1
    return n - hofstadter_m(hofstadter_f(n - 1))


def hofstadter_m(n):
    if n == 0:
        return 0
    return n - hofstadter_f(hofstadter_m(n - 1))


def main():
    print(is_even(10), is_odd(10), is_even(7), is_odd(7), is_even(0))
    print(is_even(300), is_odd(301))
    fs = ()
    ms = ()
    for i in range(15):
        fs = fs + (hofstadter_f(i),)
        ms = ms + (hofstadter_m(i),)
    print("F:", fs)
    print("M:", ms)
    return (is_even(99), fs[-1], ms[-1])

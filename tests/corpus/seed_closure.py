def func_outer(a, b):
    def func_inner(c):
        return a + b + c
    return func_inner

def ms_closure():
    closure = func_outer(1, 2)
    out1 = closure(1)
    out2 = closure(2)
    return out1, out2


def main():
    print("ms_closure() =", ms_closure())
    return ms_closure()

# Short-circuit evaluation, evidenced by prints in the called functions.
def t(name):
    print("  t(" + name + ")")
    return True


def f(name):
    print("  f(" + name + ")")
    return False


def main():
    print("A:")
    r1 = f("a") and t("b")
    print("B:")
    r2 = t("a") or f("b")
    print("C:")
    r3 = f("a") or t("b") and f("c")
    print("D:")
    r4 = (t("a") and f("b")) or t("c")
    print("E:")
    r5 = not f("a") and t("b")
    print("results:", r1, r2, r3, r4, r5)
    return (r1, r2, r3, r4, r5)

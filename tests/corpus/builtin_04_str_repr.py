# str() and repr() of various values.
def main():
    vals = (0, -12, 3.25, 1e100, 1e-100, True, None, "s", 'q"uote', (1,), (), [1, "a"])
    for v in vals:
        print(str(v), repr(v), sep="  |  ")
    s = str(1) + str(2.0) + str(None) + repr("x")
    print(s, len(s))
    return (str(255), repr(255), str(0.1), repr("it's"))

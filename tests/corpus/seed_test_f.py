def func(x, y):
    return x / y

def test_f(x, y):
    a = x - 1
    b = a + y
    c = b * func(a, b)
    return c


def main():
    print("test_f(2.0, 3.0) =", test_f(2.0, 3.0))
    return test_f(2.0, 3.0)
